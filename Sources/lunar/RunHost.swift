import Glibc
import Lunar

/// `lunar run --host-runs`: a warm process of `lunar worker`
/// (`WarmRunProcesses`). It reads the runs the worker hands over on
/// descriptor 3, one at a time, runs each exactly as `lunar run --adopt
/// RUN:TOKEN --lease SECONDS FILE ARGS...` would, on a fresh runtime
/// whose stores stay open for the next run, and answers with the run's
/// exit status. It ends when the worker closes the socket, or after a run
/// that a stop signal ended.
enum RunHost {
  /// The descriptor the worker's socket is on.
  static let descriptor: Int32 = 3

  /// Serves the worker's runs; `parsed` holds `--host-runs` and the flags
  /// every run gets (`--store`, `--lease`, `--plugin-dir`).
  static func serve(_ parsed: ParsedArguments) -> Int32 {
    guard parsed.operands.isEmpty else {
      return LunarCommandLine.usageFailure(
        UsageError(message: "--host-runs takes no FILE: lunar worker hands each run over", command: "run"))
    }
    if let other = parsed.flags.keys.sorted().first(where: { !["host-runs", "lease", "plugin-dir", "store"].contains($0) }) {
      return LunarCommandLine.usageFailure(
        UsageError(message: "--host-runs gives each run only --store, --lease and --plugin-dir: it cannot be used with --\(other)", command: "run"))
    }
    var status = stat()
    guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else {
      return LunarCommandLine.usageFailure(
        UsageError(message: "--host-runs runs what lunar worker hands over on descriptor 3, which is not its socket", command: "run"))
    }
    let socket = SocketLines(descriptor: descriptor)
    let kept = KeptRunStores()
    var flags: [String] = []
    if let store = parsed.value("store") { flags += ["--store", store] }
    if let lease = parsed.value("lease") { flags += ["--lease", lease] }
    for directory in parsed.flags["plugin-dir"] ?? [] { flags += ["--plugin-dir", directory] }
    while let line = socket.read() {
      guard let request = HostedRunRequest(line: line) else {
        Console.error("lunar: --host-runs: not a run from lunar worker: \(String(decoding: line.prefix(80), as: UTF8.self))")
        return 2
      }
      let words = ["--adopt", request.handover.description] + flags + ["--", request.file] + request.arguments
      let exit: Int32
      do {
        exit = RunCommand.run(try RunCommand.spec.parse(words, prefix: ["lunar", "run"]), keeping: kept)
      } catch {
        exit = LunarCommandLine.usageFailure(error)
      }
      guard socket.write(HostedRunRequest.reply(request.handover.run, status: exit)) else { return exit }
      // A stop signal was meant for this process, not only for its run.
      if Runtime.stopSignal != 0 { return exit }
    }
    return 0
  }
}
