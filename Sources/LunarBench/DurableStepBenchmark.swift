import Foundation

/// The durable step rate with ownership and fencing on: `lunar run` on a
/// chain of 2,000 no-op steps recorded in a store (each commit carries the
/// run's fencing token, a heartbeat thread holds the lease), whole process,
/// beside DBOS Transact (PyPI `dbos`) running a chain of as many
/// `@DBOS.step` calls in one workflow, whole process too, on the same
/// SQLite folder and the same throwaway PostgreSQL cluster. `scripts/bench`
/// installs `dbos` into the benchmarks' virtual environment.
enum DurableStepBenchmark {
  static let steps = 2_000

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-durable-steps-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("chain.lua")
    try Data(WorkflowBenchmark.source(.chain, steps: steps).utf8).write(to: file)
    let dbosScript = folder.appendingPathComponent("dbos_chain.py")
    try Data(Self.dbosScript.utf8).write(to: dbosScript)
    let python = ProcessInfo.processInfo.environment["LUNAR_BENCH_PYTHON"]
    let hasDBOS = python.map(dbosImports) ?? false

    var stores: [(name: String, lunar: () -> String, dbos: () -> String)] = [
      (
        "SQLite",
        {
          let path = folder.appendingPathComponent("lunar.db").path
          try? FileManager.default.removeItem(atPath: path)
          return "sqlite:" + path
        },
        {
          let path = folder.appendingPathComponent("dbos.sqlite").path
          try? FileManager.default.removeItem(atPath: path)
          return "sqlite:///" + path
        }
      )
    ]
    let server = BenchPostgresServer.fromEnvironment()
    if let server {
      stores.append((
        "PostgreSQL",
        { (try? server.freshDatabase("lunar_steps")) ?? "" },
        {
          _ = try? server.freshDatabase("dbos_steps")
          return tcpURL(ofDatabase: "dbos_steps") ?? server.url(ofDatabase: "dbos_steps")
        }
      ))
    } else {
      print("durable steps, PostgreSQL: skipped (no LUNAR_BENCH_PG_URL: run through scripts/bench)")
    }
    for store in stores {
      let child = WorkflowBenchmark.best(of: 3) { WorkflowBenchmark.measure(lunar, ["run", "--store", store.lunar(), file.path]) }
      let name = "durable steps, \(steps)-step chain, \(store.name)"
      let rate = Double(steps) / child.seconds
      guard hasDBOS, let python else {
        print(String(format: "%-44@ %10.0f steps/s   (DBOS not installed)", name as NSString, rate))
        continue
      }
      let baseline = WorkflowBenchmark.best(of: 3) { WorkflowBenchmark.measure(python, [dbosScript.path, store.dbos(), String(steps)]) }
      guard baseline.seconds.isFinite else {
        print(String(format: "%-44@ %10.0f steps/s   (DBOS failed: no ratio)", name as NSString, rate))
        continue
      }
      let baselineRate = Double(steps) / baseline.seconds
      print(String(format: "%-44@ %10.0f steps/s   DBOS: %8.0f steps/s   %.1f× (goal: ≥ 5×)", name as NSString, rate, baselineRate,
        rate / baselineRate))
    }
    if let server {
      server.drop("lunar_steps")
      server.drop("dbos_steps")
    }
  }

  /// True when `python` imports `dbos` (exit status 0).
  private static func dbosImports(_ python: String) -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = ["-c", "import dbos"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
  }

  /// The cluster's TCP URL for database `name` (`LUNAR_BENCH_PG_TCP_URL`,
  /// which SQLAlchemy reads where it would not read a socket's).
  private static func tcpURL(ofDatabase name: String) -> String? {
    guard let url = ProcessInfo.processInfo.environment["LUNAR_BENCH_PG_TCP_URL"], let slash = url.lastIndex(of: "/") else {
      return nil
    }
    return url[..<slash] + "/" + name
  }

  /// One workflow, a chain of `@DBOS.step` calls, on the system database
  /// the first argument names.
  static let dbosScript = """
    import sys
    from dbos import DBOS

    url, n = sys.argv[1], int(sys.argv[2])
    DBOS(config={"name": "lunar-bench", "system_database_url": url})

    @DBOS.step()
    def noop(i):
        return i

    @DBOS.workflow()
    def chain(n):
        for i in range(n):
            noop(i)

    DBOS.launch()
    chain(n)
    DBOS.destroy()

    """
}
