import Foundation

/// `lunar test` on generated suites, 200 spec files of 20 tests and 1,000
/// files of 2, against Debian's `busted` on the same files when it is
/// installed. Each round runs every command once, in turn, so a burst of
/// load on the shared machine meets them alike; the best of the rounds
/// counts (wall time and, beside it, CPU time).
enum SpecSuiteBenchmark {
  /// A suite's shape.
  struct Shape {
    let files: Int
    let tests: Int
  }

  static let shapes = [Shape(files: 200, tests: 20), Shape(files: 1_000, tests: 2)]

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let busted = FileManager.default.isExecutableFile(atPath: "/usr/bin/busted") ? "/usr/bin/busted" : nil
    for shape in shapes {
      let folder = try suite(shape)
      defer { try? FileManager.default.removeItem(at: folder) }
      var commands = [(lunar, ["test", "--jobs", "1", "."]), (lunar, ["test", "--jobs", String(cores), "."])]
      if let busted { commands.append((busted, ["."])) }
      let best = bestOf(rounds: 3, commands, in: folder.path)
      let name = "lunar test \(shape.files)×\(shape.tests) specs"
      guard busted != nil else {
        print(String(format: "%@: %.0f ms on 1 job, %.0f ms on %d (busted not installed)", name, best[0].wall, best[1].wall, cores))
        continue
      }
      let baseline = best[2]
      Harness.report("\(name), --jobs 1", subject: best[0].wall, baseline: baseline.wall, baselineName: "busted:", unit: "ms", goal: "≤ 0.33× (3× faster)")
      Harness.report("\(name), --jobs \(cores)", subject: best[1].wall, baseline: baseline.wall, baselineName: "busted:", unit: "ms", goal: "≤ 0.33× (3× faster)")
      print(String(format: "  CPU time: lunar --jobs 1 %.0f ms, --jobs %d %.0f ms; busted %.0f ms", best[0].cpu, cores, best[1].cpu, baseline.cpu))
    }
  }

  /// A temporary folder of `shape.files` spec files of `shape.tests` tests.
  static func suite(_ shape: Shape) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-specs-\(getpid())-\(shape.files)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for file in 1...shape.files {
      var source = "describe('suite \(file)', function()\n  local t\n  before_each(function() t = { file = \(file) } end)\n"
      for test in 1...shape.tests {
        source += "  it('case \(test)', function() assert.are.same({ file = \(file) }, t); assert.is_true(\(test) > 0) end)\n"
      }
      source += "end)\n"
      try Data(source.utf8).write(to: folder.appendingPathComponent("s\(file)_spec.lua"))
    }
    return folder
  }

  /// The least wall and CPU milliseconds of each command over `rounds`
  /// rounds in which the commands take turns.
  static func bestOf(rounds: Int, _ commands: [(String, [String])], in directory: String) -> [(wall: Double, cpu: Double)] {
    var best = [(wall: Double, cpu: Double)](repeating: (.infinity, .infinity), count: commands.count)
    for _ in 0..<rounds {
      for (index, (path, arguments)) in commands.enumerated() {
        var cpu = 0.0
        let wall = StartupBenchmark.milliseconds { cpu = spawn(path, arguments, in: directory) }
        best[index] = (min(best[index].wall, wall), min(best[index].cpu, cpu))
      }
    }
    return best
  }

  /// Runs a process in `directory` with its output discarded; returns the
  /// CPU milliseconds (user and system) it used.
  static func spawn(_ path: String, _ arguments: [String], in directory: String) -> Double {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let previous = FileManager.default.currentDirectoryPath
    _ = FileManager.default.changeCurrentDirectoryPath(directory)
    defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return .nan }
    var status: Int32 = 0
    var usage = rusage()
    wait4(pid, &status, 0, &usage)
    func milliseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1e3 + Double(time.tv_usec) / 1e3 }
    return milliseconds(usage.ru_utime) + milliseconds(usage.ru_stime)
  }
}
