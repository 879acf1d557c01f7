import Foundation

/// Durable queues on a SQLite store: `lunar run` submits no-op jobs, then
/// `lunar worker` processes run them, beside huey's `SqliteHuey` (one
/// consumer, one worker) on the same count of no-op tasks, in one run.
/// Lunar's enqueue figure is the whole submitting process (start-up
/// included); its processing figure runs from the workers' spawn until the
/// store holds no unfinished job. `scripts/bench` installs huey into the
/// benchmarks' virtual environment and names its Python in
/// `LUNAR_BENCH_PYTHON`. `PostgresQueueBenchmark` is its PostgreSQL side.
enum QueueDurableBenchmark {
  static let jobs = 2_000

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-queue-durable-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let huey = try hueySeconds(in: folder, normal: false)
    // Lunar's store commits with synchronous=NORMAL (no fsync per commit);
    // huey's default is SQLite's FULL: also measured at Lunar's setting.
    let hueyNormal = try hueySeconds(in: folder, normal: true)
    for shape in DurableQueueShape.both {
      let store = "sqlite:" + folder.appendingPathComponent("store-\(shape.queues).db").path
      let (enqueue, processing) = try measure(lunar, shape: shape, jobs: jobs, store: store, in: folder)
      let name = "queue-durable SQLite, \(shape.label)"
      report(name + ", enqueue", lunar: Double(jobs) / enqueue.seconds, huey: huey.map { Double(jobs) / $0.enqueue })
      reportNormal(lunar: Double(jobs) / enqueue.seconds, huey: hueyNormal.map { Double(jobs) / $0.enqueue })
      guard processing.isComplete && processing.succeeded else {
        print("\(name): the workers did not finish every job")
        continue
      }
      report(name + ", process", lunar: processing.jobsPerSecond, huey: huey.map { Double(jobs) / $0.process })
      reportNormal(lunar: processing.jobsPerSecond, huey: hueyNormal.map { Double(jobs) / $0.process })
      LunarQueueWorkers.printMemory(processing, enqueueing: enqueue)
    }
  }

  /// Lunar on the durable queues of `store`: `lunar run` submits `jobs`
  /// no-op jobs spread as `shape` says (the whole process timed, start-up
  /// included), through `submitStore` if given (the same store under
  /// other settings), then the shape's `lunar worker` processes run them,
  /// for at most `limit`.
  static func measure(
    _ lunar: String, shape: DurableQueueShape, jobs: Int, store: String, submitStore: String? = nil, in folder: URL,
    limit: Duration = .seconds(60)
  ) throws -> (enqueue: WorkflowBenchmark.Child, processing: LunarQueueWorkers.Processing) {
    let worker = folder.appendingPathComponent("worker.lua")
    try Data(DurableQueueShape.workerSource.utf8).write(to: worker)
    let script = folder.appendingPathComponent("submit-\(shape.queues)-\(jobs).lua")
    try Data(shape.submitSource(jobs: jobs).utf8).write(to: script)
    let enqueue = WorkflowBenchmark.measure(lunar, ["run", "--store", submitStore ?? store, script.path])
    let processing = try LunarQueueWorkers.run(lunar, location: store, worker: worker.path, workers: shape.workers, limit: limit)
    return (enqueue, processing)
  }

  /// Prints one line of jobs/s, Lunar beside huey.
  static func report(_ name: String, lunar: Double, huey: Double?) {
    DurableQueueReport.line(
      name, lunar: lunar, baseline: ("SqliteHuey", huey),
      goal: "≥ 1×, at least SqliteHuey's rate, with the order guarantee it lacks across processes")
  }

  /// Prints the comparison with huey at Lunar's durability, under a line of `report`.
  static func reportNormal(lunar: Double, huey: Double?) {
    guard let huey else { return }
    print(String(format: "    SqliteHuey with synchronous=NORMAL (as Lunar's store): %8.0f jobs/s   ratio %.2f×", huey, lunar / huey))
  }

  /// SqliteHuey's seconds to enqueue and to process the tasks (with its
  /// default `synchronous`, or NORMAL), or nil when no Python with huey is at hand.
  static func hueySeconds(in folder: URL, normal: Bool) throws -> (enqueue: Double, process: Double)? {
    let database = folder.appendingPathComponent(normal ? "huey-normal.db" : "huey.db").path
    guard
      let lines = try PythonBaseline.run(
        hueyScript, named: "huey_baseline.py", in: folder, arguments: [database, String(jobs), normal ? "normal" : "default"]),
      let enqueue = PythonBaseline.numbers(after: "enqueue", in: lines)?.first,
      let process = PythonBaseline.numbers(after: "process", in: lines)?.first
    else { return nil }
    return (enqueue, process)
  }

  /// Enqueues the no-op tasks, then runs one consumer with one worker
  /// thread until all have run. Default settings (WAL, SQLite's own
  /// `synchronous`: FULL), or `synchronous=NORMAL`. The counter tells when
  /// the last task has run.
  static let hueyScript = """
    import os, sys, threading, time
    try:
        from huey import SqliteHuey
    except ImportError:
        sys.exit(0)

    class NormalSqliteHuey(SqliteHuey):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            storage_create = self.storage._create_connection
            def create():
                conn = storage_create()
                conn.execute("pragma synchronous=NORMAL")
                return conn
            self.storage._create_connection = create

    path, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    huey = (NormalSqliteHuey if mode == "normal" else SqliteHuey)(filename=path)
    done = threading.Event()
    count = [0]

    @huey.task()
    def noop(i):
        count[0] += 1
        if count[0] == n:
            done.set()

    start = time.perf_counter()
    for i in range(n):
        noop(i)
    print("enqueue", time.perf_counter() - start)
    consumer = huey.create_consumer(workers=1, periodic=False)
    start = time.perf_counter()
    consumer.start()
    finished = done.wait(60)
    if finished:
        print("process", time.perf_counter() - start)
    sys.stdout.flush()
    os._exit(0)

    """
}
