import Foundation

/// Every core (`lunar run --processes N`), measured with the release
/// `lunar`: four CPU-bound steps of about half a second each, run with
/// `--processes 2` against `--processes 1` side by side (best of three),
/// on this machine's cores; the plain in-process run is shown beside them.
enum EveryCoreBenchmark {
  /// The loop count that makes one step take about half a second here.
  static let iterations = 40_000_000

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-every-core-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(source.utf8).write(to: folder.appendingPathComponent("cpu.lua"))
    func best(_ flags: [String]) -> Double {
      var best = Double.infinity
      for _ in 0..<3 {
        let start = ContinuousClock.now
        let status = SubmittedRunBenchmark.wait(
          SubmittedRunBenchmark.spawn(lunar, ["run", "--no-store"] + flags + ["cpu.lua", "\(iterations)"], in: folder))
        guard status == 0 else { return .nan }
        best = min(best, (ContinuousClock.now - start).nanoseconds / 1e9)
      }
      return best
    }
    let inProcess = best([])
    let one = best(["--processes", "1"])
    let two = best(["--processes", "2"])
    Harness.report(
      "4 CPU-bound steps, --processes 2", subject: two * 1000, baseline: one * 1000, baselineName: "--processes 1:",
      unit: "ms", goal: "≤ 0.6×")
    print(
      String(
        format: "    in the run's own process: %.0f ms (%.2f s a step); %d cores",
        inProcess * 1000, inProcess / 4, ProcessInfo.processInfo.activeProcessorCount))
  }

  /// Four steps counting to the first argument, and one that needs them.
  static let source = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local n = math.tointeger(tonumber(arg[1]))
    local function spin()
      local x = 0
      for i = 1, n do x = x + i % 7 end
      return x
    end
    return workflow "cpu" {
      step "a" { run = spin }, step "b" { run = spin }, step "c" { run = spin }, step "d" { run = spin },
      step "sum" { needs = { "a", "b", "c", "d" }, run = function(ctx)
        return ctx.steps.a.output + ctx.steps.b.output + ctx.steps.c.output + ctx.steps.d.output
      end },
    }
    """
}
