import Foundation
import LunarStore

/// Runs that run themselves, measured with the release `lunar`:
/// - 20 queued runs of a two-step workflow drained by one `lunar worker
///   --runs 2`, from the worker's start to the last finish, against the
///   same 20 runs as 20 `lunar run`s one after another (what a cron job
///   does); the submits are timed apart;
/// - a takeover: the run's process is killed once a heartbeat recorded its
///   running step, and the time until a second worker took the run over is
///   set against the lease (3 s), whose end the takeover must follow within
///   a second.
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
    _ = wait(spawn(lunar, ["submit", "--store", url, "flow.lua", "t", "2"], in: folder))
    let first = spawn(lunar, ["worker", "--store", url, "--runs", "1", "--lease", "\(lease)"], in: folder)
    let store = try SQLiteRunStore(path: path)
    // Until the run's own process holds it and a heartbeat recorded b running.
    var owner = try store.run(RunID(1))
    while owner?.running != ["b"] {
      usleep(5_000)
      owner = try store.run(RunID(1))
    }
    guard let held = owner else { return }
    let second = spawn(lunar, ["worker", "--store", url, "--runs", "1", "--lease", "\(lease)"], in: folder)
    kill(first, SIGKILL)
    kill(held.pid, SIGKILL)
    let died = ContinuousClock.now
    _ = wait(first)
    while try store.run(RunID(1))?.ownerToken == held.ownerToken { usleep(5_000) }
    let tookOver = (ContinuousClock.now - died).nanoseconds / 1e9
    while try store.run(RunID(1))?.status.isFinished == false { usleep(10_000) }
    let status = try store.run(RunID(1))?.status.rawValue ?? "gone"
    kill(second, SIGTERM)
    _ = wait(second)
    Harness.report(
      "takeover after the owner's death (run \(status))", subject: tookOver * 1000, baseline: lease * 1000,
      baselineName: "the lease:", unit: "ms", goal: "≤ lease + 1 s")
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
