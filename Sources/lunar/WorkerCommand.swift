import LuaKit
import Lunar
import LunarStore
import LunarSchedules

#if canImport(Glibc)
import Glibc
#endif

/// `lunar worker [FILE] [--runs N]`: with FILE (which defines actions, or
/// requires the plugins that do), runs a `DurableWorker` on the store's
/// durable queues; with `--runs N`, a `RunWorker` that fires schedules and
/// runs submitted runs, N at once, each in a process of its own. Both until
/// SIGTERM or SIGINT, after which running jobs and runs may finish for the
/// grace period and the worker exits 0; jobs still running then, or at a
/// second signal, are given back, runs are left to their processes, and
/// the status is the signal's (130, 143). With `--steps`, FILE returns a
/// workflow whose steps are its actions, loaded with ARGS: the worker
/// processes `lunar run --processes` starts.
enum WorkerCommand {
  static let spec = CommandSpec(
    name: "worker",
    summary: "Run the jobs of durable queues with the actions FILE defines, and with --runs N submitted and scheduled runs.",
    operands: "[FILE [ARGS...]]",
    options: [
      OptionSpec(name: "store", value: "URL", help: "the store whose queues to serve (sqlite:PATH or postgres://...; default $LUNAR_STORE or ~/.local/state/lunar/lunar.db)"),
      OptionSpec(name: "queues", value: "A,B", help: "serve only these queues (default: every queue but those of `lunar run --processes`)"),
      OptionSpec(name: "concurrency", value: "N", help: "jobs run at once, each of a different queue (default 1)"),
      OptionSpec(name: "lease", value: "SECONDS", help: "how long a job or a run stays its worker's without a heartbeat (default 10; at least 3 with --runs)"),
      OptionSpec(name: "max-lost-leases", value: "N", help: "abandon a job once N of its leases were lost: its workers ended running it (default 3)"),
      OptionSpec(name: "grace", value: "SECONDS", help: "after SIGTERM or Ctrl-C, how long running jobs may finish before they are cancelled and given back (default 10)"),
      OptionSpec(name: "plugin-dir", value: "DIR", help: "search DIR for Lua plugins (repeatable)"),
      OptionSpec(name: "runs", value: "N", help: "also run submitted runs and fire schedules, at most N runs at once, each in a process of its own"),
      OptionSpec(name: "root", value: "DIR", help: "with --runs: find workflow files by the path they were submitted with under DIR (default: the current folder)"),
      OptionSpec(name: "steps", help: "FILE returns a workflow: its steps are the actions, and ARGS its arguments (what lunar run --processes starts)"),
      OptionSpec(name: "parent", value: "PID", help: "stop, as at SIGTERM, once process PID is no longer this worker's parent"),
    ],
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    let runs: Int?
    do {
      runs = try parsed.value("runs").map { try positiveInteger($0, flag: "--runs") }
      if runs == nil, parsed.has("root") { throw UsageError(message: "--root is for --runs", command: "worker") }
    } catch let error as UsageError {
      return LunarCommandLine.usageFailure(error)
    } catch {
      return 1
    }
    let file = parsed.operands.first
    if parsed.has("steps") && (file == nil || runs != nil) {
      return LunarCommandLine.usageFailure(
        UsageError(message: "--steps needs a workflow FILE, and cannot be used with --runs", command: "worker"))
    }
    if file == nil && runs == nil {
      return LunarCommandLine.usageFailure(
        UsageError(message: "missing worker file (or --runs N, to run submitted runs)", command: "worker"))
    }
    let parent: pid_t?
    do {
      parent = try parsed.value("parent").map { text in
        guard let pid = pid_t(exactly: try positiveInteger(text, flag: "--parent")) else {
          throw UsageError(message: "--parent needs a process id, got '\(text)'", command: "worker")
        }
        return pid
      }
    } catch let error as UsageError {
      return LunarCommandLine.usageFailure(error)
    } catch {
      return 1
    }
    guard parsed.operands.count <= 1 || parsed.has("steps") else {
      return LunarCommandLine.usageFailure(UsageError(message: "unexpected argument '\(parsed.operands[1])'", command: "worker"))
    }
    let concurrency: Int
    let lease: Duration
    let lostLeaseLimit: Int
    let grace: Duration
    let location: StoreLocation
    do {
      concurrency = try positiveInteger(parsed.value("concurrency") ?? "1", flag: "--concurrency")
      lease = try seconds(parsed.value("lease") ?? "10")
      lostLeaseLimit = try positiveInteger(
        parsed.value("max-lost-leases") ?? "\(QueueLimits.defaultLostLeaseLimit)", flag: "--max-lost-leases")
      grace = try gracePeriod(parsed.value("grace") ?? "10")
      location = try StoreLocation.chosen(
        option: parsed.value("store"), environment: Environment.forStore, currentFolder: StoreLocation.currentFolder)
    } catch let error as UsageError {
      return LunarCommandLine.usageFailure(error)
    } catch {
      return LunarCommandLine.usageFailure(UsageError(message: "\(error)", command: "worker"))
    }
    var queues: [LuaString]?
    if let text = parsed.value("queues"), let bytes = parsed.bytes("queues") {
      // Queue names are bytes, as the names the store keeps from Lua.
      let names = bytes.bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).map { LuaString(bytes: Array($0)) }
      guard !names.isEmpty else {
        return LunarCommandLine.usageFailure(UsageError(message: "--queues needs queue names, got '\(text)'", command: "worker"))
      }
      queues = names
    }
    if runs != nil, lease < .seconds(3) {
      return LunarCommandLine.usageFailure(
        UsageError(message: "--lease must be at least 3 seconds with --runs (a run heartbeats every second), got '\(parsed.value("lease") ?? "")'", command: "worker"))
    }
    let options = DurableWorker.Options(
      worker: WorkerID(workerName()), queues: queues, concurrency: concurrency, lease: lease, lostLeaseLimit: lostLeaseLimit,
      gracePeriod: grace)
    do {
      try options.check()
    } catch {
      return LunarCommandLine.usageFailure(usageError(error, parsed))
    }
    Signals.catchStopRequests()
    if let parent { ParentWatch.start(parent) }
    let presence = presenceBeat(location, worker: options.worker, lease: lease, runs: runs, file: file, queues: queues)
    defer { presence?.stop() }
    let startRunWorker = { () throws -> RunWorkerThread? in
      guard let runs else { return nil }
      return try RunWorkerThread.start(
        location: location, runs: runs, root: parsed.value("root") ?? StoreLocation.currentFolder, lease: lease, grace: grace)
    }
    guard let file else {
      do {
        let runWorker = try startRunWorker()
        runWorker?.wait()
        return runWorker?.leftRunning == true ? Signals.stopStatus : 0
      } catch {
        Console.error("lunar: \(error)")
        return 1
      }
    }
    let store: any QueueStore
    do {
      store = try location.openQueueStore()
    } catch {
      Console.error("lunar: \(error.message)")
      return 1
    }

    var configuration = RuntimeConfiguration()
    configuration.environment = Environment.current
    var workflow = WorkflowRunOptions()
    workflow.scriptFile = file
    workflow.servesSteps = parsed.has("steps")
    configuration.plugins = [WorkflowPlugin(options: workflow)] + DefaultPlugins.all
    configuration.pluginDirectories = parsed.flags["plugin-dir"] ?? []
    // Jobs may submit further jobs to the worker's own store.
    configuration.store = location
    let runtime: Runtime
    do {
      runtime = try Runtime(configuration)
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
    let arguments = parsed.has("steps") ? Array(parsed.operands.dropFirst()) : []
    let loaded = runtime.runBlocking(Script(source: .file(file), arguments: arguments, interpreterArguments: parsed.prefix))
    fflush(nil)
    if case .failure = loaded { return RunCommand.report(loaded) }

    let name = options.worker
    let worker: DurableWorker
    do {
      worker = try DurableWorker(
        runtime: runtime, store: store, options: options, log: { Console.error("lunar worker \(name): \($0)") })
    } catch {
      return LunarCommandLine.usageFailure(usageError(error, parsed))
    }
    let runWorker: RunWorkerThread?
    do {
      runWorker = try startRunWorker()
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
    let stop = worker.run(stopRequests: { Signals.stopRequests })
    runWorker?.wait()
    fflush(nil)
    guard stop == .finished, runWorker?.leftRunning != true else {
      // Jobs were given back: the runtime may still be running one, which
      // nothing waits for.
      presence?.stop()
      _exit(Signals.stopStatus)
    }
    return 0
  }

  /// The heartbeat that lists this worker in the store (`lunar serve`'s
  /// Queues page) while it runs; nil for a store that keeps no workers.
  private static func presenceBeat(
    _ location: StoreLocation, worker: WorkerID, lease: Duration, runs: Int?, file: String?, queues: [LuaString]?
  ) -> WorkerPresenceBeat? {
    guard let store = try? location.openRunStore() as? any WorkerStore else { return nil }
    var serves: [String] = []
    if let runs { serves.append("runs (\(runs) at once)") }
    if let file {
      let names = queues.map { $0.map { RunText.name($0) }.joined(separator: ", ") } ?? "every queue"
      serves.append("queues: \(names) (\(file))")
    }
    return WorkerPresenceBeat(
      store: store, worker: worker, serves: serves.joined(separator: "; "), lease: lease,
      log: { Console.error("lunar worker \(worker): \($0)") })
  }

  /// `host:pid`, as `lunar queue ls` shows the worker running a job.
  static func workerName() -> String {
    var buffer = [UInt8](repeating: 0, count: 256)
    let host = gethostname(&buffer, buffer.count - 1) == 0
      ? String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self) : "localhost"
    return "\(host):\(getpid())"
  }

  private static func positiveInteger(_ text: String, flag: String) throws -> Int {
    guard let value = Int(text), value > 0 else {
      throw UsageError(message: "\(flag) needs a positive number, got '\(text)'", command: "worker")
    }
    return value
  }

  /// The usage error of an option `DurableWorker` refuses, naming its
  /// flag and quoting what was typed.
  private static func usageError(_ error: DurableWorker.OptionError, _ parsed: ParsedArguments) -> UsageError {
    let flag =
      switch error.option {
      case .concurrency: "concurrency"
      case .lease: "lease"
      case .lostLeaseLimit: "max-lost-leases"
      case .gracePeriod: "grace"
      }
    let typed = parsed.value(flag).map { ", got '\($0)'" } ?? ""
    return UsageError(message: "--\(flag) \(error.requirement)\(typed)", command: "worker")
  }

  /// `--grace`: 0 or more seconds, under a year.
  private static func gracePeriod(_ text: String) throws -> Duration {
    guard let value = Double(text), value.isFinite, value >= 0 else {
      throw UsageError(message: "--grace needs a number of seconds, 0 or more, got '\(text)'", command: "worker")
    }
    guard value < 366 * 86_400 else {
      throw UsageError(message: "--grace must be shorter than a year (31622400 seconds), got '\(text)'", command: "worker")
    }
    return .microseconds(Int64((value * 1_000_000).rounded()))
  }

  /// A lease the store can hold: it counts microseconds, up to a year.
  private static func seconds(_ text: String) throws -> Duration {
    guard let value = Double(text), value.isFinite, value > 0 else {
      throw UsageError(message: "--lease needs a positive number of seconds, got '\(text)'", command: "worker")
    }
    guard value < 366 * 86_400 else {
      throw UsageError(message: "--lease must be shorter than a year (31622400 seconds), got '\(text)'", command: "worker")
    }
    let microseconds = Int64((value * 1_000_000).rounded())
    guard microseconds > 0 else {
      throw UsageError(message: "--lease must be at least a microsecond (0.000001), got '\(text)'", command: "worker")
    }
    return .microseconds(microseconds)
  }
}
