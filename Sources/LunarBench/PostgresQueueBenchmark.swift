import Foundation
import LunarStore

/// Durable queues on PostgreSQL beside procrastinate on the same server (the
/// cluster `scripts/bench` starts, fsync on), in one run: 2,000 no-op jobs
/// in each shape, Lunar's figures measured as `QueueDurableBenchmark`'s.
/// Then the backlog: the processing rate of one strict queue (one lock for
/// procrastinate) with 20,000 jobs waiting against its rate with 2,000, for
/// Lunar on PostgreSQL and on SQLite and for procrastinate. A backlog is
/// loaded untimed and processed for at most `backlogLimit`; its rate is the
/// jobs finished by then over the time taken.
enum PostgresQueueBenchmark {
  static let jobs = 2_000
  static let backlog = 20_000
  static let backlogLimit = Duration.seconds(30)
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
    var strictRates: (lunar: Double?, procrastinate: Double?) = (nil, nil)
    for shape in DurableQueueShape.both {
      let procrastinate = try ProcrastinateBaseline.measure(
        server: server, database: "procrastinate_\(shape.queues)", jobs: jobs, locks: shape.queues, workers: shape.workers,
        limit: limit, backlog: false, in: folder)
      let database = "lunar_\(shape.queues)"
      let store = try createStore(on: server, database: database)
      defer { server.drop(database) }
      let (enqueue, processing) = try QueueDurableBenchmark.measure(
        lunar, shape: shape, jobs: jobs, store: store, in: folder, limit: limit)
      let name = "queue-durable PostgreSQL, \(shape.label)"
      let label = "procrastinate (\(procrastinateLabel(shape)))"
      DurableQueueReport.line(
        name + ", enqueue", lunar: Double(jobs) / enqueue.seconds,
        baseline: (label, procrastinate?.enqueueSeconds.map { Double(jobs) / $0 }), goal: "≥ 3×")
      guard processing.succeeded else {
        print("\(name): the workers failed jobs")
        continue
      }
      let goal = shape.queues == 1 ? "≥ 3× and ≥ 1,000 jobs/s" : "≥ 3× and ≥ 2,000 jobs/s"
      DurableQueueReport.line(
        name + ", process", lunar: processing.jobsPerSecond, baseline: (label, procrastinate?.processJobsPerSecond), goal: goal)
      printPartial(lunar: processing, procrastinate: procrastinate, jobs: jobs)
      LunarQueueWorkers.printMemory(processing, enqueueing: enqueue)
      if shape.queues == 1 { strictRates = (processing.jobsPerSecond, procrastinate?.processJobsPerSecond) }
    }
    try measureBacklog(lunar, server: server, in: folder, ratesWith2000: strictRates)
  }

  /// Lunar and procrastinate with `backlog` jobs waiting in one strict queue
  /// (one lock), and Lunar on SQLite, each against its rate with `jobs`
  /// waiting (SQLite's measured here).
  static func measureBacklog(_ lunar: String, server: BenchPostgresServer, in folder: URL, ratesWith2000: (lunar: Double?, procrastinate: Double?))
    throws
  {
    let strict = DurableQueueShape.both[0]
    let database = "lunar_backlog"
    let store = try createStore(on: server, database: database)
    defer { server.drop(database) }
    // The backlog is loaded without waiting for each commit's flush: its
    // enqueueing is not measured; the workers commit as ever.
    let loader = server.url(ofDatabase: database, options: "-csynchronous_commit=off")
    let postgres = try QueueDurableBenchmark.measure(
      lunar, shape: strict, jobs: backlog, store: store, submitStore: loader, in: folder, limit: backlogLimit
    ).processing
    reportBacklog("queue-durable PostgreSQL", backlog: postgres.succeeded ? postgres.jobsPerSecond : nil, finished: postgres.finished,
      seconds: postgres.seconds, with2000: ratesWith2000.lunar, goal: "≥ 1×: no slower with 10 times the backlog")

    let sqlite2000 = try QueueDurableBenchmark.measure(
      lunar, shape: strict, jobs: jobs, store: "sqlite:" + folder.appendingPathComponent("store-2000.db").path, in: folder
    ).processing
    let sqlite = try QueueDurableBenchmark.measure(
      lunar, shape: strict, jobs: backlog, store: "sqlite:" + folder.appendingPathComponent("store-backlog.db").path, in: folder,
      limit: backlogLimit
    ).processing
    reportBacklog("queue-durable SQLite", backlog: sqlite.succeeded ? sqlite.jobsPerSecond : nil, finished: sqlite.finished,
      seconds: sqlite.seconds, with2000: sqlite2000.isComplete && sqlite2000.succeeded ? sqlite2000.jobsPerSecond : nil,
      goal: "≥ 1×: no slower with 10 times the backlog")

    let procrastinate = try ProcrastinateBaseline.measure(
      server: server, database: "procrastinate_backlog", jobs: backlog, locks: 1, workers: 1, limit: backlogLimit, backlog: true,
      in: folder)
    reportBacklog("procrastinate (1 lock)", backlog: procrastinate?.processJobsPerSecond, finished: procrastinate?.finished ?? 0,
      seconds: procrastinate?.processSeconds ?? 0, with2000: ratesWith2000.procrastinate, goal: "report")
    if postgres.succeeded, let procrastinate {
      print(String(format: "    Lunar on PostgreSQL / procrastinate with %@ jobs waiting: ratio %.2f×   (goal: ≥ 3×)", backlog.formatted() as NSString,
        postgres.jobsPerSecond / procrastinate.processJobsPerSecond))
    }
  }

  /// Prints the rate with the backlog against the rate with 2,000 waiting,
  /// and how much of the backlog the limit let through.
  static func reportBacklog(_ subject: String, backlog rate: Double?, finished: Int, seconds: Double, with2000: Double?, goal: String) {
    let name = "\(subject), \(backlog.formatted()) waiting, process"
    guard let rate else {
      print("\(name): not measured (jobs failed, or the baseline is missing)")
      return
    }
    DurableQueueReport.line(name, lunar: rate, baseline: ("with \(jobs.formatted()) waiting", with2000), goal: goal)
    if finished < backlog {
      print(String(format: "    over the first %@ jobs: the limit of %.0f s came first", finished.formatted() as NSString, seconds))
    }
  }

  /// Notes a 2,000-job run the limit cut short: its rate is then over the jobs finished.
  static func printPartial(lunar: LunarQueueWorkers.Processing, procrastinate: ProcrastinateBaseline.Figures?, jobs: Int) {
    if !lunar.isComplete { print("    Lunar finished \(lunar.finished) of \(jobs) jobs within \(limit)") }
    if let procrastinate, procrastinate.finished < jobs {
      print("    procrastinate finished \(procrastinate.finished) of \(jobs) jobs within \(limit)")
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
