import Foundation
import Synchronization

/// The SQLite store's write-ahead log while a `lunar run` submits jobs and a
/// `lunar worker` runs them at the same time, beside the same jobs
/// submitted first and run afterwards (each process alone keeps the log
/// near SQLite's 1,000 pages). Prints the peak size of the log, sampled
/// every millisecond, of each.
enum WriteAheadLogBenchmark {
  static let jobs = 20_000

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-wal-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let worker = folder.appendingPathComponent("worker.lua")
    try Data(DurableQueueShape.workerSource.utf8).write(to: worker)
    let shape = DurableQueueShape.both[0]
    let script = folder.appendingPathComponent("submit.lua")
    try Data(shape.submitSource(jobs: jobs).utf8).write(to: script)

    // One after the other.
    let alone = "sqlite:" + folder.appendingPathComponent("alone.db").path
    let (aloneBytes, _) = try sampling(alone) {
      _ = WorkflowBenchmark.measure(lunar, ["run", "--store", alone, script.path])
      return try LunarQueueWorkers.run(lunar, location: alone, worker: worker.path, workers: 1, limit: .seconds(120))
    }
    // At the same time: the worker waits for the first job.
    let together = "sqlite:" + folder.appendingPathComponent("together.db").path
    let (togetherBytes, processing) = try sampling(together) {
      let pid = QuietChild.spawn(lunar, ["worker", "--store", together, worker.path])
      defer { stop(pid) }
      _ = WorkflowBenchmark.measure(lunar, ["run", "--store", together, script.path])
      return try LunarQueueWorkers.run(lunar, location: together, worker: worker.path, workers: 0, limit: .seconds(120))
    }
    guard processing.isComplete else {
      print("queue-durable-wal: the worker did not finish every job")
      return
    }
    let megabyte = 1024.0 * 1024.0
    Harness.report(
      "write-ahead log, submitter and worker at once, \(jobs) jobs: peak", subject: Double(togetherBytes) / megabyte,
      baseline: Double(aloneBytes) / megabyte, baselineName: "one at a time:", unit: "MB",
      goal: "≤ 3× (it was 1.1 GB for 30,000 jobs)")
  }

  /// Runs `body` while a thread samples the size of the log of the SQLite
  /// store `location` every millisecond; the largest size seen, and what
  /// `body` returned.
  static func sampling<T>(_ location: String, _ body: () throws -> T) throws -> (Int, T) {
    let log = String(location.dropFirst("sqlite:".count)) + "-wal"
    let state = Sampler()
    let thread = Thread {
      while !state.done.load(ordering: .acquiring) {
        var info = stat()
        if stat(log, &info) == 0 { state.peak.max(Int(info.st_size)) }
        usleep(1_000)
      }
    }
    thread.start()
    defer { state.done.store(true, ordering: .releasing) }
    let result = try body()
    state.done.store(true, ordering: .releasing)
    while !thread.isFinished { usleep(1_000) }
    return (state.peak.value.load(ordering: .acquiring), result)
  }

  /// What the sampling thread shares with the benchmark's.
  final class Sampler: Sendable {
    let done = Atomic(false)
    let peak = AtomicMaximum()
  }

  /// An integer only ever raised.
  final class AtomicMaximum: Sendable {
    let value = Atomic(0)

    func max(_ candidate: Int) {
      var current = value.load(ordering: .relaxed)
      while candidate > current {
        let (exchanged, original) = value.compareExchange(expected: current, desired: candidate, ordering: .relaxed)
        if exchanged { return }
        current = original
      }
    }
  }

  /// Stops a worker with SIGTERM and reaps it.
  static func stop(_ pid: pid_t) {
    guard pid > 0 else { return }
    kill(pid, SIGTERM)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
  }
}
