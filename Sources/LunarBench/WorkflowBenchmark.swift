import Foundation

/// `lunar run` on generated workflows of no-op steps (independent ones, and
/// a chain) beside two baselines on the same graphs, in one run: the floor,
/// plain `lua5.4` building the same step tables and running each step as a
/// coroutine in dependency order (whole process, as Lunar's figure is), and
/// Dask's threaded scheduler (its `get` alone). Lunar's figure includes
/// start-up and the definition of every step, so it is an upper bound on
/// engine time. `scripts/bench` installs Dask into a virtual environment of
/// its own and names its Python in `LUNAR_BENCH_PYTHON`.
enum WorkflowBenchmark {
  enum Shape: String, CaseIterable {
    case independent, chain
  }

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-workflows-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let dask = try daskSeconds(in: folder)
    for shape in Shape.allCases {
      var perStep: [Int: Double] = [:]
      for steps in [10_000, 20_000] {
        let file = folder.appendingPathComponent("\(shape)-\(steps).lua")
        try Data(source(shape, steps: steps).utf8).write(to: file)
        let floorFile = folder.appendingPathComponent("\(shape)-\(steps)-floor.lua")
        try Data(floorSource(shape, steps: steps).utf8).write(to: floorFile)
        var child = Child(seconds: .infinity, peakMegabytes: 0)
        var floor = Child(seconds: .infinity, peakMegabytes: 0)
        // Interleaved, so a burst of noise on the machine hits both alike.
        for _ in 0..<3 {
          child = [child, measure(lunar, ["run", "--no-store", "--jobs", "4", file.path])].min { $0.seconds < $1.seconds }!
          floor = [floor, measure("/usr/bin/lua5.4", [floorFile.path])].min { $0.seconds < $1.seconds }!
        }
        perStep[steps] = child.seconds / Double(steps)
        let name = "workflow, \(steps) \(shape) no-op steps"
        Harness.report(
          name, subject: child.seconds * 1000, baseline: floor.seconds * 1000, baselineName: "plain lua5.4:", unit: "ms",
          goal: "≤ 3×")
        if let baseline = dask[shape.rawValue + " \(steps)"] {
          Harness.report(name, subject: child.seconds * 1000, baseline: baseline * 1000, baselineName: "Dask threaded:", unit: "ms", goal: "≤ 0.25× (4× faster)")
        } else {
          print(String(format: "%-44@ %10.1f ms   (Dask not installed)", name as NSString, child.seconds * 1000))
        }
        print(String(format: "    %.1f µs per step, peak RSS %.0f MB (goals: ≤ 30 µs, ≤ 60 MB)", child.seconds / Double(steps) * 1e6, child.peakMegabytes))
      }
      if let small = perStep[10_000], let large = perStep[20_000] {
        print(String(format: "    20,000 steps took %.2f× the time of 10,000 (goal: ≤ 2.2×, linear)", large * 20_000 / (small * 10_000)))
      }
    }
    // The store on: every output committed before its dependents start.
    for shape in Shape.allCases {
      let steps = 10_000
      let file = folder.appendingPathComponent("\(shape)-\(steps).lua")
      let store = folder.appendingPathComponent("store-\(shape).db").path
      let child = best(of: 3) {
        try? FileManager.default.removeItem(atPath: store)
        return measure(lunar, ["run", "--store", "sqlite:" + store, "--jobs", "4", file.path])
      }
      print(String(format: "workflow, %d %@ steps, SQLite store        %10.0f steps/s (goal: ≥ 5,000), peak RSS %.0f MB",
        steps, shape.rawValue as NSString, Double(steps) / child.seconds, child.peakMegabytes))
    }
  }

  /// A workflow of `steps` no-op steps, independent or each needing the one before.
  static func source(_ shape: Shape, steps: Int) -> String {
    """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local steps = {}
    local noop = function() end
    for i = 1, \(steps) do
      steps[i] = step("s" .. i) { run = noop\(shape == .chain ? ", needs = i > 1 and { \"s\" .. (i - 1) } or nil" : "") }
    end
    return workflow "bench" (steps)

    """
  }

  /// The floor for `source(shape, steps:)`, for plain `lua5.4`: the same
  /// step tables, each step's function run as a coroutine in dependency
  /// order (Kahn's), with a context and a result table per step.
  static func floorSource(_ shape: Shape, steps: Int) -> String {
    """
    local steps = {}
    local noop = function() end
    for i = 1, \(steps) do
      steps[i] = { name = "s" .. i, run = noop\(shape == .chain ? ", needs = i > 1 and { \"s\" .. (i - 1) } or nil" : "") }
    end
    local waiting, dependents, ready = {}, {}, {}
    for i, s in ipairs(steps) do
      local count = 0
      for _, need in ipairs(s.needs or {}) do
        count = count + 1
        local list = dependents[need] or {}
        dependents[need] = list
        list[#list + 1] = i
      end
      waiting[i] = count
      if count == 0 then ready[#ready + 1] = i end
    end
    local results, head = {}, 1
    while head <= #ready do
      local s = steps[ready[head]]
      head = head + 1
      local ok, output = coroutine.resume(coroutine.create(s.run), { step = s.name, steps = results })
      results[s.name] = { status = ok and "succeeded" or "failed", output = output }
      for _, j in ipairs(dependents[s.name] or {}) do
        waiting[j] = waiting[j] - 1
        if waiting[j] == 0 then ready[#ready + 1] = j end
      end
    end
    assert(head - 1 == #steps)

    """
  }

  struct Child {
    var seconds: Double
    var peakMegabytes: Double
  }

  static func best(of rounds: Int, _ body: () -> Child) -> Child {
    var best = Child(seconds: .infinity, peakMegabytes: 0)
    for _ in 0..<rounds {
      let child = body()
      if child.seconds < best.seconds { best = child }
    }
    return best
  }

  /// Runs a process with its output discarded; its wall time and peak RSS.
  static func measure(_ path: String, _ arguments: [String]) -> Child {
    let start = ContinuousClock.now
    let pid = QuietChild.spawn(path, arguments)
    guard pid != 0 else { return Child(seconds: .infinity, peakMegabytes: 0) }
    var status: Int32 = 0
    var usage = rusage()
    wait4(pid, &status, 0, &usage)
    let seconds = (ContinuousClock.now - start).nanoseconds / 1e9
    // A child that failed gives no time: a ratio against it would be a lie.
    if status != 0 {
      print("    \(arguments.joined(separator: " ")) exited with status \(status)")
      return Child(seconds: .infinity, peakMegabytes: Double(usage.ru_maxrss) / 1024)
    }
    return Child(seconds: seconds, peakMegabytes: Double(usage.ru_maxrss) / 1024)
  }

  /// Dask's threaded scheduler on the same graphs: seconds by "shape steps".
  static func daskSeconds(in folder: URL) throws -> [String: Double] {
    var seconds: [String: Double] = [:]
    for words in try PythonBaseline.run(daskScript, named: "dask_baseline.py", in: folder) ?? [] {
      if words.count == 3, let value = Double(words[2]) { seconds["\(words[0]) \(words[1])"] = value }
    }
    return seconds
  }

  /// The best of three `get`s of each graph, no-op tasks, threaded scheduler.
  static let daskScript = """
    import time
    from dask.threaded import get

    def noop(*args):
        return None

    def graph(shape, n):
        if shape == "independent":
            return {f"s{i}": (noop,) for i in range(n)}, [f"s{i}" for i in range(n)]
        g = {"s0": (noop,)}
        for i in range(1, n):
            g[f"s{i}"] = (noop, f"s{i-1}")
        return g, [f"s{n-1}"]

    for shape in ("independent", "chain"):
        for n in (10000, 20000):
            g, keys = graph(shape, n)
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                get(g, keys)
                best = min(best, time.perf_counter() - start)
            print(shape, n, best)

    """
}
