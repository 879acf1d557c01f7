import Foundation

/// `lunar test` on a generated suite of 200 spec files with 20 tests each,
/// against Debian's `busted` on the same files when it is installed.
enum SpecSuiteBenchmark {
  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-specs-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    for file in 1...200 {
      var source = "describe('suite \(file)', function()\n  local t\n  before_each(function() t = { file = \(file) } end)\n"
      for test in 1...20 {
        source += "  it('case \(test)', function() assert.are.same({ file = \(file) }, t); assert.is_true(\(test) > 0) end)\n"
      }
      source += "end)\n"
      try Data(source.utf8).write(to: folder.appendingPathComponent("s\(file)_spec.lua"))
    }
    func time(_ path: String, _ arguments: [String]) -> Double {
      Harness.nanoseconds(iterations: 1, rounds: 3) { _ in
        StartupBenchmark.spawn(path, arguments, in: folder.path)
      } / 1e6
    }
    let oneJob = time(lunar, ["test", "--jobs", "1", "."])
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let allJobs = time(lunar, ["test", "--jobs", String(cores), "."])
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/busted") else {
      print(String(format: "lunar test, 200 files × 20 tests: %.0f ms on 1 job, %.0f ms on %d (busted not installed)", oneJob, allJobs, cores))
      return
    }
    let busted = time("/usr/bin/busted", ["."])
    Harness.report("lunar test 200×20 specs, --jobs 1", subject: oneJob, baseline: busted, baselineName: "busted:", unit: "ms", goal: "≤ 0.33× (3× faster)")
    Harness.report("lunar test 200×20 specs, --jobs \(cores)", subject: allJobs, baseline: busted, baselineName: "busted:", unit: "ms", goal: "faster still")
  }
}
