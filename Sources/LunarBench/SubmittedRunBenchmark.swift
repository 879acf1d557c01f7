import Foundation
import LunarStore

/// Runs that run themselves, measured with the release `lunar`:
/// - 20 queued runs of a two-step workflow drained by one `lunar worker
///   --runs 2`, from the worker's start to the last finish, against the
///   same 20 runs as 20 `lunar run`s one after another (what a cron job
///   does); the submits are timed apart;
/// - a takeover: a 1,000-step submitted run whose worker and process are
///   killed with SIGKILL halfway; the time until a second worker commits the
///   next step is set against the lease (3 s), which it must follow within a
///   second, and the steps whose bodies ran twice are counted.
enum SubmittedRunBenchmark {
  static let runs = 20

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-submitted-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(source.utf8).write(to: folder.appendingPathComponent("flow.lua"))
    try throughput(lunar, in: folder)
    try takeover(lunar, in: folder)
  }

  private static func throughput(_ lunar: String, in folder: URL) throws {
    let direct = folder.appendingPathComponent("direct.db").path
    let queued = folder.appendingPathComponent("queued.db").path
    var sequential = Double.infinity
    var worker = Double.infinity
    var submits = Double.infinity
    for _ in 0..<3 {
      try? FileManager.default.removeItem(atPath: direct)
      let start = ContinuousClock.now
      for index in 0..<runs {
        _ = wait(spawn(lunar, ["run", "--store", "sqlite:" + direct, "flow.lua", "\(index)", "0"], in: folder))
      }
      sequential = min(sequential, (ContinuousClock.now - start).nanoseconds / 1e9)

      try? FileManager.default.removeItem(atPath: queued)
      let submitting = ContinuousClock.now
      for index in 0..<runs {
        _ = wait(spawn(lunar, ["submit", "--store", "sqlite:" + queued, "flow.lua", "\(index)", "0"], in: folder))
      }
      submits = min(submits, (ContinuousClock.now - submitting).nanoseconds / 1e9)
      let began = ContinuousClock.now
      let pid = spawn(lunar, ["worker", "--store", "sqlite:" + queued, "--runs", "2"], in: folder)
      let store = try SQLiteRunStore(path: queued)
      while try store.runs(workflow: nil, limit: runs).contains(where: { !$0.run.status.isFinished }) {
        usleep(2_000)
      }
      worker = min(worker, (ContinuousClock.now - began).nanoseconds / 1e9)
      kill(pid, SIGTERM)
      _ = wait(pid)
    }
    Harness.report(
      "\(runs) queued runs drained by a worker --runs 2", subject: worker * 1000, baseline: sequential * 1000,
      baselineName: "\(runs) lunar runs:", unit: "ms", goal: "≤ 1×")
    print(String(format: "    %.0f submits/s (each a lunar submit process), %.0f runs/s drained", Double(runs) / submits, Double(runs) / worker))
  }

  private static func takeover(_ lunar: String, in folder: URL) throws {
    let path = folder.appendingPathComponent("takeover.db").path
    let url = "sqlite:" + path
    let lease = 3.0
    let steps = 1000
    try Data(chain(steps).utf8).write(to: folder.appendingPathComponent("chain.lua"))
    _ = wait(spawn(lunar, ["submit", "--store", url, "chain.lua"], in: folder))
    let first = spawn(lunar, ["worker", "--store", url, "--runs", "1", "--lease", "\(lease)"], in: folder)
    let store = try SQLiteRunStore(path: path)
    // Halfway through: the run's own process holds it and has committed half its steps.
    var committed = 0
    while committed < steps / 2 {
      usleep(2_000)
      committed = try store.steps(of: RunID(1)).count
    }
    guard let held = try store.run(RunID(1)) else { return }
    let second = spawn(lunar, ["worker", "--store", url, "--runs", "1", "--lease", "\(lease)"], in: folder)
    kill(first, SIGKILL)
    kill(held.pid, SIGKILL)
    let died = ContinuousClock.now
    _ = wait(first)
    let atDeath = try store.steps(of: RunID(1)).filter { $0.status == .succeeded }.count
    // Until the second worker's process commits a step the first did not.
    while try store.steps(of: RunID(1)).filter({ $0.status == .succeeded }).count <= atDeath { usleep(2_000) }
    let nextCommit = (ContinuousClock.now - died).nanoseconds / 1e9
    while try store.run(RunID(1))?.status.isFinished == false { usleep(10_000) }
    let status = try store.run(RunID(1))?.status.rawValue ?? "gone"
    kill(second, SIGTERM)
    _ = wait(second)
    // Each step appended its name once per run of its body.
    let marks = (try? String(contentsOf: folder.appendingPathComponent("marks"), encoding: .utf8)) ?? ""
    var counts: [Substring: Int] = [:]
    for line in marks.split(separator: "\n") { counts[line, default: 0] += 1 }
    // A chain commits in order: s1 ... s<atDeath> were committed at the kill.
    let ranAgain = (1...atDeath).filter { counts["s\($0)"[...], default: 0] > 1 }.count
    Harness.report(
      "\(steps)-step run killed halfway: next commit (run \(status))", subject: nextCommit * 1000, baseline: lease * 1000,
      baselineName: "the lease:", unit: "ms", goal: "≤ lease + 1 s")
    print("    \(atDeath) steps committed at the kill; \(ranAgain) of them ran again (goal: 0)")
  }

  /// A chain of `steps` steps, each noting its name in `marks`.
  static func chain(_ steps: Int) -> String {
    """
    local workflow = require "lunar.workflow"
    local steps = {}
    for i = 1, \(steps) do
      steps[i] = workflow.step("s" .. i) { needs = i > 1 and ("s" .. (i - 1)) or nil, run = function()
        local f = assert(io.open("marks", "a"))
        f:write("s", i, "\\n")
        f:close()
        return i
      end }
    end
    return workflow "chain" (steps)

    """
  }

  /// Starts `lunar` in `folder`, its output discarded.
  static func spawn(_ path: String, _ arguments: [String], in folder: URL) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let previous = FileManager.default.currentDirectoryPath
    // posix_spawn has no portable chdir action: the benchmark's own folder
    // changes around the spawn, on this single thread.
    _ = FileManager.default.changeCurrentDirectoryPath(folder.path)
    defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return 0 }
    return pid
  }

  static func wait(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return status
  }

  /// Two steps; b sleeps the seconds given as the second argument.
  static let source = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local tag, hold = ...
    return workflow "flow" {
      step "a" { run = function() return tag end },
      step "b" { needs = "a", run = function(ctx) lunar.sleep(tonumber(hold) or 0) return ctx.steps.a.output end },
    }

    """
}
