import Foundation
import LuaKit
import LunarStore

/// Durable queues on a SQLite store: `lunar run` submits no-op jobs, then
/// `lunar worker` processes run them, beside huey's `SqliteHuey` (one
/// consumer, one worker) on the same count of no-op tasks, in one run.
/// Lunar's enqueue figure is the whole submitting process (start-up
/// included); its processing figure runs from the workers' spawn until the
/// store holds no unfinished job. `scripts/bench` installs huey into the
/// benchmarks' virtual environment and names its Python in
/// `LUNAR_BENCH_PYTHON`.
enum QueueDurableBenchmark {
  static let jobs = 2_000

  /// How the jobs are spread and how many worker processes run them.
  struct Shape {
    var queues: Int
    var workers: Int
    var label: String
  }

  static let shapes = [
    Shape(queues: 1, workers: 1, label: "1 strict queue, 1 worker"),
    Shape(queues: 100, workers: 4, label: "100 queues, 4 workers"),
  ]

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-queue-durable-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let huey = try hueySeconds(in: folder, normal: false)
    // Lunar's store commits with synchronous=NORMAL (no fsync per commit);
    // huey's default is SQLite's FULL: also measured at Lunar's setting.
    let hueyNormal = try hueySeconds(in: folder, normal: true)
    let worker = folder.appendingPathComponent("worker.lua")
    try Data("lunar.action(\"noop\", function() end)\n".utf8).write(to: worker)
    for shape in shapes {
      let script = folder.appendingPathComponent("submit-\(shape.queues).lua")
      try Data(submitSource(queues: shape.queues).utf8).write(to: script)
      let store = folder.appendingPathComponent("store-\(shape.queues).db").path
      let location = "sqlite:" + store
      let enqueue = WorkflowBenchmark.measure(lunar, ["run", "--store", location, script.path])
      let processing = try process(lunar, store: store, worker: worker.path, workers: shape.workers)
      let name = "queue-durable SQLite, \(shape.label)"
      report(name + ", enqueue", lunar: Double(jobs) / enqueue.seconds, huey: huey.map { Double(jobs) / $0.enqueue })
      reportNormal(lunar: Double(jobs) / enqueue.seconds, huey: hueyNormal.map { Double(jobs) / $0.enqueue })
      guard let processing else {
        print("\(name): the workers did not finish every job")
        continue
      }
      report(name + ", process", lunar: Double(jobs) / processing.seconds, huey: huey.map { Double(jobs) / $0.process })
      reportNormal(lunar: Double(jobs) / processing.seconds, huey: hueyNormal.map { Double(jobs) / $0.process })
      let rss = processing.peakMegabytes.map { String(format: "%.0f", $0) }.joined(separator: ", ")
      print(String(format: "    peak RSS per worker %@ MB, enqueueing process %.0f MB", rss as NSString, enqueue.peakMegabytes))
    }
  }

  /// Prints one line of jobs/s, Lunar beside huey (higher is better).
  static func report(_ name: String, lunar: Double, huey: Double?) {
    guard let huey else {
      print(String(format: "%-58@ %8.0f jobs/s   (huey not installed: baseline missing)", name as NSString, lunar))
      return
    }
    print(
      String(format: "%-58@ %8.0f jobs/s   SqliteHuey: %8.0f jobs/s   ratio %.2f×   (goal: ≥ 1×, at least SqliteHuey's rate, with the order guarantee it lacks across processes)",
        name as NSString, lunar, huey, lunar / huey))
  }

  /// Prints the comparison with huey at Lunar's durability, under a line of `report`.
  static func reportNormal(lunar: Double, huey: Double?) {
    guard let huey else { return }
    print(String(format: "    SqliteHuey with synchronous=NORMAL (as Lunar's store): %8.0f jobs/s   ratio %.2f×", huey, lunar / huey))
  }

  /// A script that submits the jobs round-robin over `queues` durable queues.
  static func submitSource(queues: Int) -> String {
    """
    local queue = require "lunar.queue"
    local queues = {}
    for k = 1, \(queues) do
      queues[k] = queue.new { name = \(queues == 1 ? "\"q\"" : "\"q\" .. k"), durable = true }
    end
    for i = 1, \(jobs) do
      queues[(i - 1) % \(queues) + 1]:submit("noop", i)
    end

    """
  }

  struct Processing {
    var seconds: Double
    var peakMegabytes: [Double]
  }

  /// Starts `workers` worker processes and polls the store until no job is
  /// waiting or running; then stops them with SIGTERM. Nil if the jobs did
  /// not all succeed within a minute.
  static func process(_ lunar: String, store: String, worker: String, workers: Int) throws -> Processing? {
    let queueStore = try SQLiteQueueStore(path: store, createIfMissing: false)
    let start = ContinuousClock.now
    let pids = (0..<workers).map { _ in QuietChild.spawn(lunar, ["worker", "--store", "sqlite:" + store, worker]) }
    var seconds: Double?
    while ContinuousClock.now - start < .seconds(60) {
      let summaries = try queueStore.queues()
      let submitted = summaries.reduce(0) { $0 + $1.submitted }
      if submitted == Int64(jobs) && summaries.allSatisfy({ $0.waiting == 0 && $0.running == nil }) {
        seconds = (ContinuousClock.now - start).nanoseconds / 1e9
        break
      }
      usleep(5_000)
    }
    var peaks: [Double] = []
    for pid in pids where pid > 0 {
      kill(pid, SIGTERM)
      var status: Int32 = 0
      var usage = rusage()
      wait4(pid, &status, 0, &usage)
      peaks.append(Double(usage.ru_maxrss) / 1024)
    }
    guard let seconds, try allSucceeded(queueStore) else { return nil }
    return Processing(seconds: seconds, peakMegabytes: peaks)
  }

  /// True if every queue's newest jobs all succeeded (a job of an unknown
  /// action would finish too, as failed).
  static func allSucceeded(_ store: SQLiteQueueStore) throws -> Bool {
    for summary in try store.queues() {
      let newest = try store.jobs(queue: summary.name, limit: 20)
      if !newest.allSatisfy({ $0.status == .succeeded }) { return false }
    }
    return true
  }

  /// SqliteHuey's seconds to enqueue and to process the tasks (with its
  /// default `synchronous`, or NORMAL), or nil when no Python with huey is at hand.
  static func hueySeconds(in folder: URL, normal: Bool) throws -> (enqueue: Double, process: Double)? {
    guard let python = ProcessInfo.processInfo.environment["LUNAR_BENCH_PYTHON"] else { return nil }
    let script = folder.appendingPathComponent("huey_baseline.py")
    try Data(hueyScript.utf8).write(to: script)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    let database = folder.appendingPathComponent(normal ? "huey-normal.db" : "huey.db").path
    process.arguments = [script.path, database, String(jobs), normal ? "normal" : "default"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var seconds: [String: Double] = [:]
    for line in output.split(separator: "\n") {
      let words = line.split(separator: " ")
      if words.count == 2, let value = Double(words[1]) { seconds[String(words[0])] = value }
    }
    guard let enqueue = seconds["enqueue"], let process = seconds["process"] else { return nil }
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
