import Foundation

/// procrastinate (PyPI), the PostgreSQL baseline of the durable-queue
/// benchmarks: no-op jobs deferred with a `lock` each (one lock for all is
/// its strict serial order), then run by worker processes (`run_worker`
/// with `wait=False`, concurrency 1 each, forked after the imports), in a
/// database of its own made afresh on the benchmarks' cluster and dropped
/// at the end. `scripts/bench` installs procrastinate and psycopg into the
/// benchmarks' virtual environment.
enum ProcrastinateBaseline {
  /// What procrastinate did; nil parts were not measured.
  struct Figures {
    /// Seconds to defer the jobs one by one (nil for a backlog loaded in batches).
    var enqueueSeconds: Double?
    /// Seconds from the workers' start until all jobs finished or the limit passed.
    var processSeconds: Double
    /// Jobs that succeeded in `processSeconds`.
    var finished: Int

    var processJobsPerSecond: Double { Double(finished) / processSeconds }
  }

  /// Defers `jobs` no-op jobs over `locks` locks one by one, timed, or as
  /// an untimed `backlog` (one lock, in batches of 1,000, every commit
  /// then not waiting for the disk's flush, the workers' too), then runs
  /// `workers` worker processes for at most `limit`. Nil when
  /// procrastinate is not installed or did not report.
  static func measure(
    server: BenchPostgresServer, database: String, jobs: Int, locks: Int, workers: Int, limit: Duration, backlog: Bool,
    in folder: URL
  ) throws -> Figures? {
    let arguments = [
      server.url, database, String(jobs), String(locks), String(workers),
      String(Double(limit.components.seconds)), backlog ? "backlog" : "measure",
    ]
    guard let lines = try PythonBaseline.run(script, named: "procrastinate_baseline.py", in: folder, arguments: arguments),
      let process = PythonBaseline.numbers(after: "process", in: lines), process.count == 2
    else { return nil }
    return Figures(
      enqueueSeconds: PythonBaseline.numbers(after: "enqueue", in: lines)?.first, processSeconds: process[0],
      finished: Int(process[1]))
  }

  /// The measurement, in Python: prints `enqueue SECONDS` (unless loading
  /// a backlog) and `process SECONDS FINISHED`.
  static let script = """
    import multiprocessing, sys, time
    try:
        import procrastinate
        import psycopg
        from psycopg.conninfo import make_conninfo
    except ImportError:
        sys.exit(0)

    url, database, n, locks, workers, limit, mode = sys.argv[1:8]
    n, locks, workers, limit = int(n), int(locks), int(workers), float(limit)

    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{database}"')
    # A backlog's commits do not wait for the disk's flush (see QueueBacklogBenchmark).
    conninfo = make_conninfo(url, dbname=database, **({"options": "-c synchronous_commit=off"} if mode == "backlog" else {}))
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))

    @app.task(name="noop")
    def noop(i):
        pass

    with app.open():
        app.schema_manager.apply_schema()
        if mode == "backlog":
            for first in range(0, n, 1000):
                noop.configure(lock="lock0").batch_defer(*({"i": i} for i in range(first, min(n, first + 1000))))
        else:
            start = time.perf_counter()
            for i in range(n):
                noop.configure(lock=f"lock{i % locks}").defer(i=i)
            print("enqueue", time.perf_counter() - start, flush=True)

    def work():
        app.run_worker(wait=False, concurrency=1, install_signal_handlers=False, listen_notify=False)

    processes = [multiprocessing.get_context("fork").Process(target=work) for _ in range(workers)]
    start = time.perf_counter()
    for process in processes:
        process.start()
    for process in processes:
        process.join(max(0.0, start + limit - time.perf_counter()))
    seconds = time.perf_counter() - start
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join()
    with psycopg.connect(conninfo) as db:
        finished = db.execute("SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'").fetchone()[0]
    print("process", seconds, finished, flush=True)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{database}" WITH (FORCE)')

    """
}
