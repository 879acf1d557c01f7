import LuaKit
import Lunar
import LunarLaunches
import LunarStore

#if canImport(Glibc)
import Glibc
#endif

/// `lunar run FILE [ARGS...]`: runs a script as `lua5.4 FILE ARGS...` would,
/// on a runtime with the default plugins.
enum RunCommand {
  static let spec = CommandSpec(
    name: "run",
    summary: "Run a Lua script (FILE, or - for standard input) with its arguments.",
    operands: "FILE [ARGS...]",
    options: [
      OptionSpec(name: "timeout", value: "SECONDS", help: "stop the script after SECONDS of wall-clock time"),
      OptionSpec(name: "max-memory", value: "BYTES", help: "limit Lua's memory (suffixes K, M, G)"),
      OptionSpec(
        name: "sandbox",
        help: "no io, os.execute/remove/rename, native code, binary chunks or debug; Lua source only from the script's folder and plugins"),
      OptionSpec(name: "trace", help: "print the runtime's events to standard error"),
      OptionSpec(name: "warnings", short: "W", help: "turn Lua's warnings on, as lua5.4 -W"),
    ] + TraceFileOption.specs + [
      OptionSpec(name: "plugin-dir", value: "DIR", help: "search DIR for Lua plugins (repeatable)"),
      OptionSpec(name: "clock", value: "real|virtual", help: "virtual time jumps to the next timer when idle"),
      OptionSpec(name: "analytics", value: "FILE", help: "write action spans and analytics events as JSON lines"),
      OptionSpec(name: "only", value: "STEP", help: "workflows: run STEP and what it needs"),
      OptionSpec(name: "from", value: "STEP", help: "workflows: run STEP and everything after it"),
      OptionSpec(name: "summary", value: "DETAIL", help: "workflows: 'full' lists every step in the summary (default: all of a run of up to 20 steps; above, the counts and the failed, retried and slowest)"),
      OptionSpec(name: "dry-run", help: "workflows: print the plan (order, parallel groups), run nothing"),
      OptionSpec(name: "jobs", short: "j", value: "N", help: "workflows: steps run at once (default 4; N with --processes N)"),
      OptionSpec(name: "processes", value: "N", help: "workflows: run the steps in N worker processes sharing the run's store (a temporary one with --no-store)"),
      OptionSpec(name: "store", value: "URL", help: "workflows: record runs in URL (sqlite:PATH or postgres://...; default $LUNAR_STORE or ~/.local/state/lunar/lunar.db)"),
      OptionSpec(name: "no-store", help: "workflows: record nothing"),
      OptionSpec(name: "no-logs", help: "workflows: keep steps' printed output out of the store (it is still shown)"),
      OptionSpec(
        name: "resume", value: "RUN", help: "workflows: reuse the steps of run RUN (default: the last run) whose inputs are unchanged",
        valueIsOptional: true),
      OptionSpec(
        name: "force", value: "STEP", help: "workflows: with --resume, run STEP (and the steps that need it) again anyway (repeatable)"),
      OptionSpec(name: "journal", value: "FILE", help: "workflows: same as --store sqlite:FILE --resume"),
      OptionSpec(
        name: "lease", value: "SECONDS",
        help: "workflows: how long the run stays this process's without a heartbeat (one a second; at least 3, default 10): then a worker may take it over"),
      OptionSpec(
        name: "adopt", value: "RUN:TOKEN",
        help: "workflows: go on with run RUN of the store, which lunar worker claimed with TOKEN and hands over (its committed steps are reused)"),
      OptionSpec(
        name: "host-runs",
        help: "workflows: run the runs lunar worker hands over on descriptor 3, one after another (its warm processes)"),
      OptionSpec(name: "record", value: "FILE", help: "record actions and outside results to a journal"),
      OptionSpec(name: "replay", value: "FILE", help: "replay a journal: no outside calls, divergence is an error"),
    ],
    optionsEndAtFirstOperand: true,
    run: { parsed in parsed.has("host-runs") ? RunHost.serve(parsed) : run(parsed) }
  )

  /// Runs the script `parsed` names; a workflow it returns records in the
  /// stores `kept` keeps open, if given (a warm process's runs).
  static func run(_ parsed: ParsedArguments, keeping kept: KeptRunStores? = nil) -> Int32 {
    var configuration: RuntimeConfiguration
    let chromeTrace: ChromeTraceFile?
    let file: String
    let processes: StepProcesses?
    do {
      // The flags' values first: `--timeout f.lua` is a bad --timeout, not
      // a missing file.
      processes = try stepProcesses(parsed)
      configuration = try makeConfiguration(parsed, processes: processes, keeping: kept)
      let traceFile = try TraceFileOption.parse(parsed, command: "run")
      guard let operand = parsed.operands.first else {
        throw UsageError(message: parsed.missing("missing script file"), command: "run")
      }
      file = operand
      chromeTrace = try traceFile?.install(in: &configuration, process: "lunar run \(file)")
      if let processes, let store = configuration.store, !parsed.has("dry-run") {
        try processes.start(
          store: store, file: file, arguments: Array(parsed.operands.dropFirst()),
          pluginDirectories: configuration.pluginDirectories)
      }
    } catch let error as UsageError {
      return LunarCommandLine.usageFailure(error)
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
    let script = Script(
      source: file == "-" ? .standardInput : .file(file),
      arguments: Array(parsed.operands.dropFirst()),
      interpreterArguments: parsed.prefix
    )
    let outcome: Result<[LuaValue], RunFailure>
    defer { processes?.stop() }
    do {
      outcome = try Runtime.runOnCurrentThread(configuration, script)
      fflush(nil)
      // A stop signal ends the command as the shell expects of it (130,
      // 143, 129), after the workflow recorded and summed up its run.
      let signal = Runtime.stopSignal
      if signal != 0 {
        if case .failure = outcome { _ = report(outcome) }
        try? chromeTrace?.write()
        return 128 + signal
      }
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
    fflush(nil)
    do {
      // However the run ended, its timeline so far is worth a look.
      try chromeTrace?.write()
    } catch {
      let status = report(outcome)
      Console.error("lunar: \(error)")
      return max(status, 1)
    }
    return report(outcome)
  }

  /// The worker processes `--processes N` asks for (not started yet), or nil.
  static func stepProcesses(_ parsed: ParsedArguments) throws -> StepProcesses? {
    guard let text = parsed.value("processes") else { return nil }
    guard let count = Int(text), count > 0, count <= StepProcesses.limit else {
      throw UsageError(message: "--processes needs a number from 1 to \(StepProcesses.limit), got '\(text)'", command: "run")
    }
    for other in ["sandbox", "record", "replay", "adopt"] where parsed.has(other) {
      throw UsageError(message: "--processes cannot be used with --\(other)", command: "run")
    }
    if parsed.operands.first == "-" {
      throw UsageError(message: "--processes needs a script FILE its workers can load, not standard input", command: "run")
    }
    return try StepProcesses(count: count, temporary: parsed.has("no-store"))
  }

  /// The runtime configuration the flags ask for; `processes` run the
  /// steps of the workflow the file returns, which records in the stores
  /// `kept` keeps open, if given.
  static func makeConfiguration(_ parsed: ParsedArguments, processes: StepProcesses? = nil, keeping kept: KeptRunStores? = nil)
    throws -> RuntimeConfiguration
  {
    var configuration = RuntimeConfiguration()
    configuration.environment = Environment.current
    configuration.catchesInterrupts = true
    // SIGTERM and SIGHUP too: a workflow cancels its steps and records why.
    configuration.catchesStopSignals = true
    // The command owns its process: a run stuck where no interrupt reaches
    // (one long C call, a finalizer while closing) is ended with it.
    configuration.ownsProcess = true
    configuration.sandbox = parsed.has("sandbox")
    configuration.warnings = parsed.has("warnings")
    configuration.pluginDirectories = parsed.flags["plugin-dir"] ?? []
    if let text = parsed.value("timeout") {
      guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
        throw UsageError(message: "--timeout needs a positive number of seconds, got '\(text)'", command: "run")
      }
      configuration.timeout = seconds
    }
    if let text = parsed.value("max-memory") {
      guard let bytes = parseBytes(text), bytes > 0 else {
        throw UsageError(message: "--max-memory needs a number of bytes (e.g. 64M), got '\(text)'", command: "run")
      }
      configuration.memoryLimit = bytes
    }
    switch parsed.value("clock") {
    case nil, "real": break
    case "virtual": configuration.clock = .virtualFromNow
    case let other?:
      throw UsageError(message: "--clock is 'real' or 'virtual', got '\(other)'", command: "run")
    }
    if parsed.has("trace") { configuration.traceSinks.append(TextTraceSink(descriptor: 2)) }
    configuration.recordsTrace = parsed.has("trace") || parsed.has("trace-file")
    if let path = parsed.value("analytics") {
      configuration.traceSinks.append(try JSONLinesTraceSink(path: path, prefixes: ["action."]))
    }
    var workflow = WorkflowRunOptions()
    // Step names are bytes, as the workflow's names from Lua.
    workflow.only = parsed.bytes("only")
    workflow.from = parsed.bytes("from")
    if parsed.has("only") && parsed.has("from") {
      throw UsageError(message: "--only and --from cannot be used together", command: "run")
    }
    workflow.dryRun = parsed.has("dry-run")
    if let text = parsed.value("jobs") {
      guard let jobs = Int(text), jobs > 0 else {
        throw UsageError(message: "--jobs needs a positive number, got '\(text)'", command: "run")
      }
      workflow.jobs = jobs
    }
    switch parsed.value("summary") {
    case nil, "auto": break
    case "full": workflow.summary = .full
    case let other?: throw UsageError(message: "--summary is 'full' or 'auto', got '\(other)'", command: "run")
    }
    workflow.resumeStore = parsed.value("journal")
    workflow.force = parsed.flagBytes["force"] ?? []
    if parsed.has("force") && !parsed.has("resume") && !parsed.has("journal") {
      throw UsageError(message: "--force STEP needs --resume (it reruns a step a resume would reuse)", command: "run")
    }
    if let text = parsed.value("adopt") {
      guard let handover = RunHandover(text) else {
        throw UsageError(message: "--adopt needs RUN:TOKEN (two positive numbers), got '\(text)'", command: "run")
      }
      for other in ["resume", "journal", "only", "from", "dry-run", "no-store", "force"] where parsed.has(other) {
        throw UsageError(message: "--adopt runs a handed-over run whole: it cannot be used with --\(other)", command: "run")
      }
      workflow.adopt = handover
    }
    if let text = parsed.value("lease") {
      guard let seconds = Double(text), seconds.isFinite, seconds >= 3, seconds < 366 * 86_400 else {
        throw UsageError(message: "--lease needs a number of seconds from 3 to a year, got '\(text)'", command: "run")
      }
      workflow.lease = .milliseconds(Int64((seconds * 1000).rounded()))
    }
    try workflow.checkResumeStore()
    configuration.store = try chooseStore(parsed, &workflow)
    if let processes {
      workflow.processQueues = processes.queues
      configuration.store = configuration.store ?? processes.temporaryStore
    }
    workflow.scriptFile = parsed.operands.first
    workflow.scriptArguments = Array(parsed.operands.dropFirst())
    workflow.progress = isatty(1) != 0 && getenv("TERM").map { String(cString: $0) } != "dumb" ? .terminal : .plain
    workflow.misplacedFlag = misplacedFlag(parsed)
    workflow.storesLogs = !parsed.has("no-logs")
    workflow.keptStores = kept
    var actions = ActionOptions()
    switch (parsed.value("record"), parsed.value("replay")) {
    case (let record?, nil): actions.recording = .record(path: record)
    case (nil, let replay?): actions.recording = .replay(path: replay)
    case (nil, nil): break
    case (_?, _?): throw UsageError(message: "--record and --replay cannot be used together", command: "run")
    }
    configuration.plugins = [WorkflowPlugin(options: workflow), ActionModulePlugin(options: actions)] + DefaultPlugins.all
    return configuration
  }

  /// The store (returned) and the run to resume: `--store`, `LUNAR_STORE`
  /// or the default, none with `--no-store`; under `--sandbox`, only
  /// `--store` or `--journal` (the command line alone chooses the files
  /// Lunar writes).
  static func chooseStore(_ parsed: ParsedArguments, _ workflow: inout WorkflowRunOptions) throws -> StoreLocation? {
    if let run = parsed.value("resume") {
      do {
        workflow.resume = run.isEmpty ? .last : try RunReference(parsing: run)
      } catch {
        throw UsageError(message: "--resume: \(error)", command: "run")
      }
    }
    if parsed.has("no-store") {
      if parsed.has("store") || parsed.has("journal") || parsed.has("resume") {
        throw UsageError(message: "--no-store cannot be used with --store, --journal or --resume", command: "run")
      }
      return nil
    }
    if parsed.has("journal") && (parsed.has("store") || parsed.has("resume")) {
      throw UsageError(message: "--journal FILE is --store sqlite:FILE --resume: give one or the other", command: "run")
    }
    if let resumeStore = workflow.resumeStore {
      workflow.resume = .last
      return StoreLocation(.sqlite(path: resumeStore))
    }
    if parsed.has("sandbox") && !parsed.has("store") { return nil }
    return try StoreOption.location(parsed, command: "run")
  }

  /// The first of `lunar run`'s own flags among the script's arguments
  /// (up to a `--`), with the command line that gives it to the run: a
  /// file that returns a workflow is refused with it, since the flag was
  /// surely meant for the run.
  static func misplacedFlag(_ parsed: ParsedArguments) -> WorkflowRunOptions.MisplacedFlag? {
    guard let file = parsed.operands.first else { return nil }
    var rest = Array(parsed.operands.dropFirst())
    for (index, word) in rest.enumerated() {
      if word == "--" { return nil }
      guard word.hasPrefix("-"), let option = spec.options.first(where: { option in
        word == "--" + option.name || word.hasPrefix("--" + option.name + "=")
          || option.short.map { word == "-" + String($0) } == true
      }) else { continue }
      let takesNext = option.value != nil && !word.contains("=") && index + 1 < rest.count
      let flagWords = Array(rest[index..<(index + (takesNext ? 2 : 1))])
      rest.removeSubrange(index..<(index + flagWords.count))
      // The words before FILE, past the program and `run`: flags given there.
      var before = parsed.prefix.dropFirst()
      if before.first == "run" { before = before.dropFirst() }
      let corrected = (["lunar", "run"] + before + flagWords + [file] + rest).joined(separator: " ")
      return .init(flag: word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word, corrected: corrected)
    }
    return nil
  }

  /// `512`, `64K`, `10M`, `1G` as bytes.
  static func parseBytes(_ text: String) -> Int? {
    let units: [Character: Int] = ["K": 1 << 10, "k": 1 << 10, "M": 1 << 20, "m": 1 << 20, "G": 1 << 30, "g": 1 << 30]
    if let last = text.last, let unit = units[last] {
      guard let number = Int(text.dropLast()) else { return nil }
      let (product, overflow) = number.multipliedReportingOverflow(by: unit)
      return overflow ? nil : product
    }
    return Int(text)
  }

  /// Prints a failure as `lua.c` does and returns the exit status.
  static func report(_ outcome: Result<[LuaValue], RunFailure>) -> Int32 {
    switch outcome {
    case .success:
      return 0
    case .failure(.lua(let error)):
      Console.error("lunar: " + error.description)
      return 1
    case .failure(.interrupted(let message)):
      Console.error("lunar: \(message)")
      let signal = Runtime.stopSignal
      return signal != 0 ? 128 + signal : 130
    case .failure(.timedOut(let message)):
      Console.error("lunar: \(message)")
      return 1
    case .failure(.deadlock(let report)):
      Console.error("lunar: \(report)")
      return 1
    case .failure(.unobservedErrors(let errors)):
      for error in errors { Console.error("lunar: \(error)") }
      return 1
    case .failure(.usage(let message)):
      Console.error("lunar: \(message)")
      return 2
    }
  }
}
