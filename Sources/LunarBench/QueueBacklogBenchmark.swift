import Foundation

/// How one strict queue's processing rate changes with its backlog: 20,000
/// jobs waiting against 2,000, for Lunar on PostgreSQL and on SQLite and for
/// procrastinate with one lock (which slows with the square of a lock's
/// backlog). Each pair is measured back to back, loaded untimed, and its
/// PostgreSQL commits do not wait for the disk's flush
/// (`synchronous_commit=off`; SQLite's store never does): what is compared
/// is the work per job as the backlog grows, which the flushes of a shared
/// disk, moving 20-fold from one minute to the next, would drown. A backlog
/// is processed for at most `limit`; its rate is the jobs finished by then
/// over the time taken.
enum QueueBacklogBenchmark {
  static let small = 2_000
  static let backlog = 20_000
  static let limit = Duration.seconds(30)

  static func run(_ lunar: String, server: BenchPostgresServer, in folder: URL) throws {
    let strict = DurableQueueShape.both[0]
    let goal = "≥ 1×: no slower with 10 times the backlog"
    var postgres: [Int: LunarQueueWorkers.Processing] = [:]
    for jobs in [small, backlog] {
      let database = "lunar_backlog_\(jobs)"
      _ = try PostgresQueueBenchmark.createStore(on: server, database: database)
      defer { server.drop(database) }
      let store = server.url(ofDatabase: database, options: "-csynchronous_commit=off")
      postgres[jobs] = try QueueDurableBenchmark.measure(lunar, shape: strict, jobs: jobs, store: store, in: folder, limit: limit).processing
    }
    report("queue-durable PostgreSQL", postgres[backlog]!, with2000: postgres[small]!, goal: goal)

    var sqlite: [Int: LunarQueueWorkers.Processing] = [:]
    for jobs in [small, backlog] {
      let store = "sqlite:" + folder.appendingPathComponent("backlog-\(jobs).db").path
      sqlite[jobs] = try QueueDurableBenchmark.measure(lunar, shape: strict, jobs: jobs, store: store, in: folder, limit: limit).processing
    }
    report("queue-durable SQLite", sqlite[backlog]!, with2000: sqlite[small]!, goal: goal)

    var procrastinate: [Int: ProcrastinateBaseline.Figures] = [:]
    for jobs in [small, backlog] {
      procrastinate[jobs] = try ProcrastinateBaseline.measure(
        server: server, database: "procrastinate_backlog", jobs: jobs, locks: 1, workers: 1, limit: limit, backlog: true, in: folder)
    }
    let name = "procrastinate (1 lock), \(backlog.formatted()) waiting, process"
    guard let large = procrastinate[backlog], let base = procrastinate[small] else {
      print("\(name): not measured (procrastinate not installed)")
      return
    }
    DurableQueueReport.line(
      name, lunar: large.processJobsPerSecond, baseline: ("with \(small.formatted()) waiting", base.processJobsPerSecond), goal: "report")
    printLimit(finished: large.finished, seconds: large.processSeconds)
    if let lunarRate = postgres[backlog].flatMap({ $0.succeeded ? $0.jobsPerSecond : nil }) {
      print(String(format: "    Lunar on PostgreSQL / procrastinate with %@ jobs waiting: ratio %.2f×   (goal: ≥ 3×)",
        backlog.formatted() as NSString, lunarRate / large.processJobsPerSecond))
    }
  }

  /// Prints Lunar's rate with the backlog against its rate with 2,000 waiting.
  static func report(_ subject: String, _ large: LunarQueueWorkers.Processing, with2000 base: LunarQueueWorkers.Processing, goal: String) {
    let name = "\(subject), \(backlog.formatted()) waiting, process"
    guard large.succeeded && base.succeeded && base.isComplete else {
      print("\(name): the workers failed jobs or did not finish \(small.formatted()) within \(limit)")
      return
    }
    DurableQueueReport.line(name, lunar: large.jobsPerSecond, baseline: ("with \(small.formatted()) waiting", base.jobsPerSecond), goal: goal)
    printLimit(finished: large.finished, seconds: large.seconds)
  }

  /// Says when the limit stopped a backlog's processing before its end.
  static func printLimit(finished: Int, seconds: Double) {
    if finished < backlog {
      print(String(format: "    over the first %@ jobs: the limit of %.0f s came first", finished.formatted() as NSString, seconds))
    }
  }
}
