import Foundation
import LunarStore

/// Submitted runs in bulk: 1,000 runs of a three-step workflow submitted
/// through the store's API from this process, then drained by two `lunar
/// worker --runs 2` (each run a process of its own), on SQLite and on the
/// throwaway PostgreSQL cluster; beside it DBOS Transact enqueueing the
/// same workflow 1,000 times on a `Queue` and processing them in its own
/// process, on the same kind of store. Submits/s and runs/s for both.
enum SubmittedDrainBenchmark {
  static let runs = 1_000

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-drain-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let flow = folder.appendingPathComponent("three.lua")
    try Data(source.utf8).write(to: flow)
    let dbosScript = folder.appendingPathComponent("dbos_queue.py")
    try Data(Self.dbosScript.utf8).write(to: dbosScript)
    let python = ProcessInfo.processInfo.environment["LUNAR_BENCH_PYTHON"]

    var stores: [(name: String, lunar: String, dbos: String)] = [
      ("SQLite", "sqlite:" + folder.appendingPathComponent("lunar.db").path,
       "sqlite:///" + folder.appendingPathComponent("dbos.sqlite").path)
    ]
    let server = BenchPostgresServer.fromEnvironment()
    if let server, let lunarURL = try? server.freshDatabase("lunar_drain"), let dbosURL = try? server.freshDatabase("dbos_drain") {
      let tcp = ProcessInfo.processInfo.environment["LUNAR_BENCH_PG_TCP_URL"].flatMap { url in
        url.lastIndex(of: "/").map { String(url[..<$0]) + "/dbos_drain" }
      }
      stores.append(("PostgreSQL", lunarURL, tcp ?? dbosURL))
    } else {
      print("submitted runs in bulk, PostgreSQL: skipped (no LUNAR_BENCH_PG_URL: run through scripts/bench)")
    }
    for store in stores {
      let (submits, drained) = try drain(lunar, store: store.lunar, file: flow, in: folder)
      let name = "\(runs) submitted 3-step runs, 2 workers, \(store.name)"
      print(String(format: "%-44@ submits %8.0f/s   runs %6.0f/s", name as NSString, submits, drained))
      guard let python, let (enqueues, processed) = dbos(python, script: dbosScript, url: store.dbos) else {
        print("    DBOS: not installed or failed (no ratio)")
        continue
      }
      print(
        String(
          format: "    DBOS Transact Queue, same workflow: enqueues %8.0f/s   workflows %6.0f/s   ratio: submits %.2f×, runs %.2f× (goal: ≥ 5×)",
          enqueues, processed, submits / enqueues, drained / processed))
    }
    if let server {
      server.drop("lunar_drain")
      server.drop("dbos_drain")
    }
  }

  /// Submits the runs, then drains them with two workers: submits/s, runs/s.
  private static func drain(_ lunar: String, store url: String, file: URL, in folder: URL) throws -> (Double, Double) {
    let store = try StoreLocation(parsing: url, currentFolder: folder.path).openSchedulingStore()
    let fingerprint = Fingerprint(bytes: SHA256.hash(Array(try Data(contentsOf: file))))!
    let submitting = ContinuousClock.now
    var submitted: [RunID] = []
    for index in 0..<runs {
      submitted.append(
        try store.submit(RunSubmission(file: file.lastPathComponent, arguments: ["\(index)"], fileFingerprint: fingerprint)).run.id)
    }
    let submitSeconds = (ContinuousClock.now - submitting).nanoseconds / 1e9
    let began = ContinuousClock.now
    let workers = (0..<2).map { _ in
      SubmittedRunBenchmark.spawn(lunar, ["worker", "--store", url, "--runs", "2"], in: folder)
    }
    // Each run waited for in turn, as DBOS's script waits for each handle:
    // one row read per look, so the watching costs the workers little.
    for id in submitted {
      while try store.run(id)?.status.isFinished != true { usleep(20_000) }
    }
    let drainSeconds = (ContinuousClock.now - began).nanoseconds / 1e9
    for pid in workers { kill(pid, SIGTERM) }
    for pid in workers { _ = SubmittedRunBenchmark.wait(pid) }
    return (Double(runs) / submitSeconds, Double(runs) / drainSeconds)
  }

  /// DBOS's enqueues/s and workflows/s, as its script prints them; nil if it failed.
  private static func dbos(_ python: String, script: URL, url: String) -> (Double, Double)? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script.path, url, String(runs)]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let numbers = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    guard process.terminationStatus == 0, numbers.count == 2, numbers[0] > 0, numbers[1] > 0 else { return nil }
    return (Double(runs) / numbers[0], Double(runs) / numbers[1])
  }

  /// Three steps; the first gets the run's argument.
  static let source = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local index = tonumber(arg[1]) or 0
    return workflow "three" {
      step "a" { run = function() return index end },
      step "b" { needs = "a", run = function(ctx) return ctx.steps.a.output + 1 end },
      step "c" { needs = "b", run = function(ctx) return ctx.steps.b.output * 2 end },
    }

    """

  /// The same workflow on a DBOS queue polled every 0.1 s (its default is
  /// 1 s), no concurrency limit: prints the seconds to enqueue and the
  /// seconds until the last result.
  static let dbosScript = """
    import sys, time
    from dbos import DBOS

    url, n = sys.argv[1], int(sys.argv[2])
    DBOS(config={"name": "lunar-bench-drain", "system_database_url": url})
    @DBOS.step()
    def a(i):
        return i

    @DBOS.step()
    def b(x):
        return x + 1

    @DBOS.step()
    def c(x):
        return x * 2

    @DBOS.workflow()
    def three(i):
        return c(b(a(i)))

    DBOS.launch()
    queue = DBOS.register_queue("runs", polling_interval_sec=0.1)
    start = time.monotonic()
    handles = [queue.enqueue(three, i) for i in range(n)]
    enqueued = time.monotonic() - start
    for handle in handles:
        handle.get_result()
    print(enqueued, time.monotonic() - start)
    DBOS.destroy()

    """
}
