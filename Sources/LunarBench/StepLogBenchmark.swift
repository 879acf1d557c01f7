import Foundation

/// The cost of keeping a step's printed output in the run store: `lunar
/// run` on a workflow whose one step prints 10,000 lines, with the store's
/// log capture on (the default) and off (`--no-logs`), the same SQLite
/// store otherwise; whole process, output to /dev/null, best of five.
enum StepLogBenchmark {
  static let lines = 10_000

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-step-log-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("printing.lua")
    try Data(source.utf8).write(to: file)
    let store = folder.appendingPathComponent("store.db").path
    func measure(_ flags: [String]) -> Double {
      WorkflowBenchmark.best(of: 5) {
        try? FileManager.default.removeItem(atPath: store)
        return WorkflowBenchmark.measure(lunar, ["run", "--store", "sqlite:" + store] + flags + [file.path])
      }.seconds
    }
    // Interleaved, so a loaded machine weighs on both alike.
    var on = Double.infinity
    var off = Double.infinity
    for _ in 0..<2 {
      on = min(on, measure([]))
      off = min(off, measure(["--no-logs"]))
    }
    Harness.report(
      "workflow step printing \(lines) lines, logs kept", subject: on * 1000, baseline: off * 1000,
      baselineName: "--no-logs:", unit: "ms", goal: "≤ 1.5×")
    print(String(format: "    %.2f µs more per printed line", (on - off) / Double(lines) * 1e6))
  }

  /// One step that prints `lines` lines of about 40 bytes each.
  static let source = """
    local workflow = require "lunar.workflow"
    return workflow "printing" {
      workflow.step "loud" { run = function()
        for i = 1, \(lines) do print("line " .. i, "of the step's output", i * 2) end
      end },
    }

    """
}
