import Foundation

/// `lunar run examples/hello.lua` and `lunar version` against
/// `lua5.4 examples/hello.lua`, each started many times.
enum StartupBenchmark {
  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? siblingBinary("lunar")
    guard FileManager.default.isExecutableFile(atPath: lunar) else {
      print("startup: skipped, no lunar binary at \(lunar)")
      return
    }
    // scripts/bench runs from the package folder; elsewhere a script of
    // the same kind stands in.
    var script = URL(fileURLWithPath: "examples/hello.lua")
    var madeScript = false
    if !FileManager.default.fileExists(atPath: script.path) {
      script = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-hello.lua")
      try Data("print(('hello, %s, from %s'):format(... or 'world', _VERSION))\n".utf8).write(to: script)
      madeScript = true
    }
    defer { if madeScript { try? FileManager.default.removeItem(at: script) } }

    // Interleaved, one start of each per round, so a burst of noise on the
    // machine hits all three alike; the medians are compared.
    var runTimes: [Double] = []
    var versionTimes: [Double] = []
    var luaTimes: [Double] = []
    for _ in 0..<300 {
      runTimes.append(milliseconds { spawn(lunar, ["run", script.path]) })
      versionTimes.append(milliseconds { spawn(lunar, ["version"]) })
      luaTimes.append(milliseconds { spawn("/usr/bin/lua5.4", [script.path]) })
    }
    let luaTime = median(luaTimes)
    Harness.report(
      "start-up: lunar run examples/hello.lua", subject: median(runTimes), baseline: luaTime, baselineName: "lua5.4:",
      unit: "ms", goal: "≤ 2×")
    Harness.report(
      "start-up: lunar version", subject: median(versionTimes), baseline: luaTime, baselineName: "lua5.4:", unit: "ms",
      goal: "≤ 2×")
  }

  static func milliseconds(_ body: () -> Void) -> Double {
    let start = ContinuousClock.now
    body()
    let elapsed = ContinuousClock.now - start
    return elapsed.nanoseconds / 1e6
  }

  static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
  }

  static func siblingBinary(_ name: String) -> String {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name).path
  }

  /// Starts a process with output discarded and waits for it.
  static func spawn(_ path: String, _ arguments: [String], in directory: String? = nil) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let previous = FileManager.default.currentDirectoryPath
    if let directory { _ = FileManager.default.changeCurrentDirectoryPath(directory) }
    defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
    defer { posix_spawn_file_actions_destroy(&actions) }
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
  }
}
