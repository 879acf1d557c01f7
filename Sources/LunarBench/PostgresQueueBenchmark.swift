import Foundation
import LunarStore

/// Durable queues on PostgreSQL beside procrastinate on the same server (the
/// cluster `scripts/bench` starts, fsync on), in one run: 2,000 no-op jobs
/// in each shape, Lunar's figures measured as `QueueDurableBenchmark`'s,
/// then `QueueBacklogBenchmark`. Every figure here waits for the disk's
/// flush once or more per job, and a shared machine's flushes may take 0.1
/// or 5 ms from one minute to the next: the two sides take turns, `rounds`
/// times, and each figure is the best of its rounds.
enum PostgresQueueBenchmark {
  static let jobs = 2_000
  static let rounds = 2
  /// Long enough for 2,000 jobs at 20 jobs/s, when the disk's flushes are slow.
  static let limit = Duration.seconds(120)

  static func run() throws {
    guard let server = BenchPostgresServer.fromEnvironment() else {
      print("queue-durable-postgres: skipped, no PostgreSQL cluster (scripts/bench starts one)")
      return
    }
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-queue-postgres-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    print(String(format: "queue-durable PostgreSQL: fsync on; a commit of one row takes %.0f µs (median of 200)", try server.commitMicroseconds()))
    for shape in DurableQueueShape.both {
      var best = Best()
      for _ in 0..<rounds {
        best.procrastinate(
          try ProcrastinateBaseline.measure(
            server: server, database: "procrastinate_\(shape.queues)", jobs: jobs, locks: shape.queues, workers: shape.workers,
            limit: limit, backlog: false, in: folder))
        let database = "lunar_\(shape.queues)"
        let store = try createStore(on: server, database: database)
        defer { server.drop(database) }
        let (enqueue, processing) = try QueueDurableBenchmark.measure(lunar, shape: shape, jobs: jobs, store: store, in: folder, limit: limit)
        best.lunar(enqueue: enqueue, processing: processing)
      }
      let name = "queue-durable PostgreSQL, \(shape.label)"
      let label = "procrastinate (\(procrastinateLabel(shape)))"
      DurableQueueReport.line(name + ", enqueue", lunar: best.lunarEnqueue, baseline: (label, best.procrastinateEnqueue), goal: "≥ 3×")
      guard let processing = best.lunarProcessing else {
        print("\(name): the workers failed jobs")
        continue
      }
      let goal = shape.queues == 1 ? "≥ 3× and ≥ 1,000 jobs/s" : "≥ 3× and ≥ 2,000 jobs/s"
      DurableQueueReport.line(
        name + ", process", lunar: processing.jobsPerSecond, baseline: (label, best.procrastinateProcess), goal: goal)
      if !processing.isComplete { print("    Lunar finished \(processing.finished) of \(jobs) jobs within \(limit)") }
      if best.procrastinateIncomplete { print("    procrastinate did not finish every job within \(limit)") }
      print(
        String(format: "    peak RSS per worker %@ MB, enqueueing process %.0f MB (the most of %d rounds)",
          best.workerMegabytes.map { String(format: "%.0f", $0) }.joined(separator: ", ") as NSString, best.enqueueMegabytes, rounds))
    }
    try QueueBacklogBenchmark.run(lunar, server: server, in: folder)
  }

  /// The best figure of each side over the rounds, and the most memory.
  struct Best {
    var lunarEnqueue = 0.0
    var lunarProcessing: LunarQueueWorkers.Processing?
    var lunarFailed = false
    var workerMegabytes: [Double] = []
    var enqueueMegabytes = 0.0
    var procrastinateEnqueue: Double?
    var procrastinateProcess: Double?
    var procrastinateIncomplete = false

    mutating func lunar(enqueue: WorkflowBenchmark.Child, processing: LunarQueueWorkers.Processing) {
      lunarEnqueue = max(lunarEnqueue, Double(jobs) / enqueue.seconds)
      enqueueMegabytes = max(enqueueMegabytes, enqueue.peakMegabytes)
      workerMegabytes = workerMegabytes.isEmpty
        ? processing.peakMegabytes : zip(workerMegabytes, processing.peakMegabytes).map { max($0, $1) }
      lunarFailed = lunarFailed || !processing.succeeded
      if lunarFailed {
        lunarProcessing = nil
      } else if processing.jobsPerSecond > lunarProcessing?.jobsPerSecond ?? 0 {
        lunarProcessing = processing
      }
    }

    mutating func procrastinate(_ figures: ProcrastinateBaseline.Figures?) {
      guard let figures else { return }
      if let seconds = figures.enqueueSeconds { procrastinateEnqueue = max(procrastinateEnqueue ?? 0, Double(jobs) / seconds) }
      procrastinateProcess = max(procrastinateProcess ?? 0, figures.processJobsPerSecond)
      procrastinateIncomplete = procrastinateIncomplete || figures.finished < jobs
    }
  }

  /// The database `name` made afresh with Lunar's tables in it, created
  /// before any timing (procrastinate's schema is applied untimed too); its URL.
  static func createStore(on server: BenchPostgresServer, database name: String) throws -> String {
    let url = try server.freshDatabase(name)
    _ = try StoreLocation(parsing: url, currentFolder: StoreLocation.currentFolder).openQueueStore()
    return url
  }

  /// "1 lock, 1 worker" or "100 locks, 4 worker processes".
  static func procrastinateLabel(_ shape: DurableQueueShape) -> String {
    (shape.queues == 1 ? "1 lock" : "\(shape.queues) locks") + ", "
      + (shape.workers == 1 ? "1 worker" : "\(shape.workers) worker processes")
  }
}
