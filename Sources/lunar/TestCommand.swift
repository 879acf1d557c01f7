import LuaKit
import Lunar
import LunarTest

#if canImport(Glibc)
import Glibc
#endif

/// `lunar test [PATHS...]`: runs busted-compatible spec suites.
enum TestCommand {
  static let spec = CommandSpec(
    name: "test",
    summary: "Run busted-compatible spec files (default: spec/, files matching _spec).",
    operands: "[PATHS...]",
    options: [
      OptionSpec(name: "pattern", short: "p", value: "PATTERN", help: "Lua pattern spec file names match (default _spec)"),
      OptionSpec(name: "exclude-pattern", value: "PATTERN", help: "skip files whose names match (repeatable)"),
      OptionSpec(name: "filter", value: "PATTERN", help: "run only tests whose full name matches (repeatable)"),
      OptionSpec(name: "filter-out", value: "PATTERN", help: "skip tests whose full name matches (repeatable)"),
      OptionSpec(name: "tags", short: "t", value: "TAGS", help: "run only tests with one of these #tags (comma-separated)"),
      OptionSpec(name: "exclude-tags", value: "TAGS", help: "skip tests with any of these #tags"),
      OptionSpec(name: "list", short: "l", help: "list the tests instead of running them"),
      OptionSpec(name: "shuffle", help: "run files and tests in random order"),
      OptionSpec(name: "seed", value: "N", help: "seed for --shuffle (printed when shuffling)"),
      OptionSpec(name: "jobs", short: "j", value: "N", help: "files run in parallel (default: number of cores)"),
      OptionSpec(name: "shard", value: "I/N", help: "run the I-th of N parts of the spec files (balanced by --durations, else file size)"),
      OptionSpec(name: "durations", value: "FILE", help: "each file's seconds: --shard balances by them, a run without --shard records them"),
      OptionSpec(name: "output", short: "o", value: "FORMAT", help: "plain (default), tap, or junit or json as busted writes them"),
      OptionSpec(name: "output-file", value: "FILE", help: "write the report to FILE instead of standard output"),
      OptionSpec(name: "lpath", value: "PATH", help: "prepend to package.path"),
      OptionSpec(name: "cpath", value: "PATH", help: "prepend to package.cpath"),
      OptionSpec(name: "plugin-dir", value: "DIR", help: "search DIR for Lua plugins (repeatable)"),
      OptionSpec(name: "coverage", help: "write the line coverage of the Lua files the specs load to coverage/lcov.info"),
      OptionSpec(name: "coverage-file", value: "FILE", help: "write the coverage to FILE instead (implies --coverage)"),
    ] + TraceFileOption.specs,
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    var options = SpecOptions()
    options.environment = Environment.current
    options.plugins = DefaultPlugins.all
    options.jobs = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    options.catchesInterrupts = true
    do {
      if let config = try BustedConfig.load() { config.apply(to: &options) }
    } catch {
      Console.error("lunar: .busted: \(error)")
      return 2
    }
    let format: SpecOutputFormat
    let traceFile: TraceFileOption?
    do {
      format = try apply(parsed, to: &options)
      traceFile = try TraceFileOption.parse(parsed, command: "test")
      try checkPatterns(options, parsed)
    } catch {
      return LunarCommandLine.usageFailure(error)
    }
    let coverage = CoverageOption(parsed)
    options.coverage = coverage?.coverage
    for path in options.paths where !FileSystem.exists(path) {
      return LunarCommandLine.usageFailure(UsageError(message: "no such file or folder: \(path)", command: "test"))
    }
    let chromeTrace: ChromeTraceFile?
    do {
      chromeTrace = try traceFile?.install(in: &options)
    } catch {
      Console.error("lunar: --trace-file \(error)")
      return 2
    }
    let runner = SpecRunner(options: options)
    let discovered: [String]
    do {
      discovered = try runner.discoverFiles()
    } catch {
      return LunarCommandLine.usageFailure(UsageError(message: "bad --pattern: \(error)", command: "test"))
    }
    let durations: SpecDurations?
    do {
      durations = try options.durationsPath.flatMap(SpecDurations.load)
      // A whole run records durations: a file that is not ours is refused now.
      if let path = options.durationsPath, options.shard == nil { try FileOutput.check(path, kind: SpecDurations.kind) }
    } catch {
      Console.error("lunar: --durations \(error)")
      return 2
    }
    let (files, note) = shardFiles(discovered, options: options, durations: durations)
    // A report file is checked now, so a file that is not a report is
    // refused before the run, and written whole at the end.
    let reportPath = parsed.value("output-file")
    if let reportPath {
      do {
        try FileOutput.check(reportPath, kind: format.reportKind)
      } catch {
        Console.error("lunar: \(error)")
        return 2
      }
    }
    do {
      try coverage?.prepare()
    } catch {
      Console.error("lunar: --coverage: \(error)")
      return 2
    }
    let output = FileOutput(descriptor: 1)
    let terminal = reportPath == nil && isatty(1) != 0
    let reporter = format.reporter(terminal: terminal, seed: options.shuffle ? options.seed : nil)
    var report = format == .plain ? note : ""
    if options.shuffle && format == .plain { report += "shuffled with --seed \(options.seed)\n" }
    if reportPath == nil, !report.isEmpty {
      try? output.write(report)
      report = ""
    }
    let started = SpecClock.now()
    let interruptsBefore = Runtime.interruptCount
    let results = Blocking.run {
      await runner.run(files: files) { file in
        let text = reporter.progress(file)
        if !text.isEmpty { try? output.write(text) }
      }
    }
    report += reporter.report(results, seconds: SpecClock.now() - started)
    // The report is printed whatever becomes of the trace: a trace that
    // cannot be written is one error line after it, and the run fails.
    var traceWritten = true
    do {
      try chromeTrace?.write()
    } catch {
      traceWritten = false
      Console.error("lunar: --trace-file \(error)")
    }
    do {
      if let reportPath {
        _ = try FileOutput(path: reportPath, kind: format.reportKind, contents: Array(report.utf8))
      } else {
        try output.write(report)
      }
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
    if let coverage {
      do {
        let line = try coverage.write(specFiles: discovered, specPaths: options.paths)
        // A machine-read report on standard output is left as it is.
        if format == .plain || reportPath != nil { try? output.write(line + "\n") } else { Console.error(line) }
      } catch {
        Console.error("lunar: --coverage: \(error)")
        return 1
      }
    }
    // Ctrl-C: the report above counts the tests that finished, every file's.
    if Runtime.interruptCount > interruptsBefore {
      Console.error("lunar: interrupted")
      return 130
    }
    // Only a whole run records: shards read the durations to agree on a
    // plan, so none may change them under the others.
    if let path = options.durationsPath, options.shard == nil, !options.list, !results.isEmpty {
      let recorded = (durations ?? SpecDurations()).recording(results)
      do {
        _ = try FileOutput(path: path, kind: SpecDurations.kind, contents: Array(recorded.text.utf8))
      } catch {
        Console.error("lunar: --durations \(error)")
        return 1
      }
    }
    return SpecSummary(results).succeeded && traceWritten ? 0 : 1
  }

  /// The files of the run's shard (every file without `--shard`), and the
  /// line a plain report begins with. A shard without files says so on
  /// standard error (the report stays a report) and runs nothing.
  static func shardFiles(_ files: [String], options: SpecOptions, durations: SpecDurations?) -> ([String], String) {
    guard let shard = options.shard else { return (files, "") }
    let (chosen, basis) = shard.files(of: files, durations: durations)
    let name = "shard \(shard.index)/\(shard.count)"
    if chosen.isEmpty {
      Console.error("lunar: \(name) has no spec files (\(files.count) files for \(shard.count) shards)")
      return (chosen, "")
    }
    let weights = basis == .durations ? "the durations in \(options.durationsPath ?? "")" : "file size"
    return (chosen, "\(name): \(chosen.count) of \(files.count) spec files, balanced by \(weights)\n")
  }

  /// Refuses a malformed Lua pattern, naming the flag (or the `.busted`
  /// setting) that gave it.
  static func checkPatterns(_ options: SpecOptions, _ parsed: ParsedArguments) throws(UsageError) {
    do {
      try options.checkPatterns()
    } catch {
      let source = parsed.has(error.setting) ? "--\(error.setting)" : ".busted '\(error.setting)'"
      throw UsageError(message: "\(source): bad Lua pattern '\(RunText.printable(error.pattern))': \(error.problem)", command: "test")
    }
  }

  /// Applies the flags over the defaults and `.busted`; returns the format.
  static func apply(_ parsed: ParsedArguments, to options: inout SpecOptions) throws(UsageError) -> SpecOutputFormat {
    func list(_ name: String) -> [String]? {
      parsed.flags[name].map { $0.flatMap { $0.split(separator: ",").map(String.init) } }
    }
    if !parsed.operands.isEmpty { options.paths = parsed.operands }
    if let value = parsed.value("pattern") { options.pattern = value }
    if let value = parsed.flags["exclude-pattern"] { options.excludePatterns = value }
    if let value = parsed.flags["filter"] { options.filters = value }
    if let value = parsed.flags["filter-out"] { options.filtersOut = value }
    if let value = list("tags") { options.tags = value }
    if let value = list("exclude-tags") { options.excludeTags = value }
    if let value = parsed.value("lpath") { options.luaPath = value }
    if let value = parsed.value("cpath") { options.luaCPath = value }
    options.pluginDirectories = parsed.flags["plugin-dir"] ?? []
    options.list = parsed.has("list")
    if parsed.has("shuffle") { options.shuffle = true }
    if let text = parsed.value("seed") {
      guard let seed = Int64(text) else { throw UsageError(message: "--seed needs a whole number, got '\(text)'", command: "test") }
      options.seed = seed
    } else if options.shuffle {
      options.seed = Int64(SpecClock.epochNow() * 1000) % 1_000_000
    }
    if let text = parsed.value("shard") {
      guard let shard = SpecShard(parsing: text) else {
        throw UsageError(
          message: "--shard needs I/N, whole numbers with 1 <= I <= N <= \(SpecShard.maximumCount), got '\(text)'",
          command: "test")
      }
      options.shard = shard
    }
    if let value = parsed.value("durations") { options.durationsPath = value }
    if let text = parsed.value("jobs") {
      guard let jobs = Int(text), jobs > 0 else { throw UsageError(message: "--jobs needs a positive number, got '\(text)'", command: "test") }
      options.jobs = jobs
    }
    let name = parsed.value("output") ?? "plain"
    guard let format = SpecOutputFormat(rawValue: name) else {
      throw UsageError(message: "unknown output format '\(name)' (plain, tap, junit, json)", command: "test")
    }
    options.details = format.needsDetails
    return format
  }
}
