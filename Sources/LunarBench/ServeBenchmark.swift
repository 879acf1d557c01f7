import Foundation
import LuaKit
import LunarStore

/// `lunar serve` on a big store: the time to the first byte of the runs
/// page and of a 1,000-step run's page, with 100,000 runs and 2,000,000
/// steps in a SQLite store, beside the same server's not-found page (no
/// store read) timed in the same rounds; the goal is 50 ms. Then how soon
/// a commit of another process shows in `/changes`, what live pages watch
/// (goal: 250 ms on PostgreSQL, 1 s on SQLite), beside the commit itself.
enum ServeBenchmark {
  static let runs = 100_000
  static let stepsPerRun = 20
  static let bigRunSteps = 1_000
  /// A path the site does not have: its 404 reads no store.
  static let notFound = "/nothing-here"

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    guard FileManager.default.isExecutableFile(atPath: lunar) else {
      print("serve: skipped, no lunar binary at \(lunar)")
      return
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-serve-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("runs.db").path
    try measure(lunar, store: "sqlite:" + path, label: "SQLite", changeGoal: "≤ 1000 ms") { try seed(path) }
    guard let server = BenchPostgresServer.fromEnvironment() else {
      print("serve: PostgreSQL skipped (LUNAR_BENCH_PG_URL unset; scripts/bench sets it)")
      return
    }
    let url = try server.freshDatabase("lunar_bench_serve")
    defer { server.drop("lunar_bench_serve") }
    try measure(lunar, store: url, label: "PostgreSQL", changeGoal: "≤ 250 ms") { try seedPostgres(url) }
  }

  /// Seeds a store with `seed`, serves it, and reports the two pages' first
  /// bytes beside the not-found page's.
  static func measure(_ lunar: String, store: String, label: String, changeGoal: String, seed: () throws -> RunID) throws {
    let seeding = ContinuousClock.now
    let bigRun = try seed()
    print(String(format: "serve: seeded %d runs and %d steps (%@) in %.1f s", runs + 1, runs * stepsPerRun + bigRunSteps,
      label as NSString, (ContinuousClock.now - seeding).nanoseconds / 1e9))

    // Port 0: the server takes a free port and says which.
    let server = Process()
    server.executableURL = URL(fileURLWithPath: lunar)
    server.arguments = ["serve", "--store", store, "--listen", "127.0.0.1:0"]
    let said = Pipe()
    server.standardOutput = said
    try server.run()
    defer {
      server.terminate()
      server.waitUntilExit()
    }
    let port = try announcedPort(said.fileHandleForReading)
    // Best of 20, the three pages taking turns: the not-found page meets
    // the same moments of the machine's load as the two store pages.
    let paths = ["/", "/runs/\(bigRun.rawValue)", notFound]
    var times = [Double](repeating: .infinity, count: paths.count)
    for _ in 0..<20 {
      for (index, page) in paths.enumerated() { times[index] = min(times[index], try firstByte(port: port, path: page) * 1e3) }
    }
    Harness.report(
      "serve, \(label): runs page (100K runs), first byte", subject: times[0], baseline: times[2], baselineName: "404:",
      unit: "ms", goal: "≤ 50 ms")
    Harness.report(
      "serve, \(label): a 1,000-step run, first byte", subject: times[1], baseline: times[2], baselineName: "404:",
      unit: "ms", goal: "≤ 50 ms")
    let alone = try measureChanges(port: port, store: store, run: bigRun, label: label, goal: changeGoal)
    try measureCrowd(
      port: port, server: server.processIdentifier, store: store, run: bigRun, label: label, alone: alone, goal: changeGoal)
  }

  /// 500 live pages at once: 500 kept-alive connections, each asking
  /// `/changes` every 100 ms as a page does (one thread sends them in
  /// turn, paced to that rate at most), while a commit is timed to
  /// `/changes` as above (beside the same without them, `alone`); the
  /// server's resident memory with them, beside it idle.
  static func measureCrowd(
    port: Int, server: Int32, store: String, run: RunID, label: String, alone: Double, goal: String
  ) throws {
    let idle = residentMegabytes(server)
    var crowd: [Int32] = []
    defer { crowd.forEach { close($0) } }
    for _ in 0..<500 { crowd.append(try connected(port: port)) }
    let writer = try StoreLocation(parsing: store, currentFolder: FileManager.default.currentDirectoryPath).openRunStore()
    let request = Array("GET /changes HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
    var seen: [Double] = []
    var peak = idle
    var asked = 0
    let began = ContinuousClock.now
    for round in 0..<10 {
      let before = try answer(port: port, path: "/changes")
      let start = ContinuousClock.now
      try writer.recordSteps([StepRecord(name: LuaString("crowd \(round)"), position: 0, status: .succeeded)], of: run)
      // A page's question in turn: 500 every 100 ms, checking between
      // sweeps' tenths whether the commit shows yet.
      var shown: Double?
      while shown == nil {
        for (index, socket) in crowd.enumerated() {
          guard write(socket, request, request.count) == request.count else { throw BenchmarkFailure(description: "crowd write: errno \(errno)") }
          _ = try readAnswer(socket)
          asked += 1
          if index % 50 == 49 {
            if shown == nil, try answer(port: port, path: "/changes") != before { shown = (ContinuousClock.now - start).nanoseconds / 1e6 }
            let due = began + .milliseconds(asked / 5)
            if ContinuousClock.now < due { Thread.sleep(forTimeInterval: (due - ContinuousClock.now).nanoseconds / 1e9) }
          }
        }
        guard ContinuousClock.now - start < .seconds(10) else { throw BenchmarkFailure(description: "/changes never changed") }
      }
      seen.append(shown ?? 0)
      peak = max(peak, residentMegabytes(server))
    }
    let rate = Double(asked) / ((ContinuousClock.now - began).nanoseconds / 1e9)
    print(String(format: "serve, %@: 500 connections asked %.0f times a second", label as NSString, rate))
    Harness.report(
      "serve, \(label): 500 live pages, resident memory", subject: peak, baseline: idle, baselineName: "idle:", unit: "MB",
      goal: "bounded")
    Harness.report(
      "serve, \(label): a commit seen among 500 pages (worst of 10)", subject: seen.max() ?? 0, baseline: alone,
      baselineName: "alone:", unit: "ms", goal: goal)
  }

  /// The resident memory of process `pid`, in MB (0 if unknown).
  static func residentMegabytes(_ pid: Int32) -> Double {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
      let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes / 1024
  }

  /// A socket connected to the server.
  static func connected(port: Int) throws -> Int32 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw BenchmarkFailure(description: "socket: errno \(errno)") }
    var address = loopback(port: port)
    let done = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard done == 0 else {
      close(socket)
      throw BenchmarkFailure(description: "connect: errno \(errno)")
    }
    return socket
  }

  /// One answer on a kept-alive connection: its head, then as many bytes
  /// as its Content-Length says.
  static func readAnswer(_ socket: Int32) throws -> [UInt8] {
    var received: [UInt8] = []
    var byte = [UInt8](repeating: 0, count: 4096)
    while true {
      if let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
        let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).lowercased()
        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
          .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        if received.count - end.upperBound >= length { return Array(received[end.upperBound..<(end.upperBound + length)]) }
      }
      let count = read(socket, &byte, byte.count)
      guard count > 0 else { throw BenchmarkFailure(description: "crowd: the server closed a connection") }
      received += byte[0..<count]
    }
  }

  /// From a step committed here (another process than the server) to
  /// `/changes` answering a new number, 20 times, asking every millisecond;
  /// the slowest, beside the slowest commit.
  @discardableResult
  static func measureChanges(port: Int, store: String, run: RunID, label: String, goal: String) throws -> Double {
    let writer = try StoreLocation(parsing: store, currentFolder: FileManager.default.currentDirectoryPath).openRunStore()
    // The first question starts the server's feed; let it start listening.
    _ = try answer(port: port, path: "/changes")
    Thread.sleep(forTimeInterval: 1)
    var seen: [Double] = []
    var commits: [Double] = []
    for round in 0..<20 {
      let before = try answer(port: port, path: "/changes")
      let start = ContinuousClock.now
      try writer.recordSteps([StepRecord(name: LuaString("bench \(round)"), position: 0, status: .succeeded)], of: run)
      commits.append((ContinuousClock.now - start).nanoseconds / 1e6)
      while try answer(port: port, path: "/changes") == before {
        guard ContinuousClock.now - start < .seconds(10) else { throw BenchmarkFailure(description: "/changes never changed") }
        Thread.sleep(forTimeInterval: 0.001)
      }
      seen.append((ContinuousClock.now - start).nanoseconds / 1e6)
      Thread.sleep(forTimeInterval: 0.05)
    }
    Harness.report(
      "serve, \(label): a commit seen by /changes (worst of 20)", subject: seen.max() ?? 0, baseline: commits.max() ?? 1,
      baselineName: "commit:", unit: "ms", goal: goal)
    return seen.max() ?? 0
  }

  /// The body of the answer to a GET of `path`.
  static func answer(port: Int, path: String) throws -> String {
    let socket = try connected(port: port)
    defer { close(socket) }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
    guard write(socket, request, request.count) == request.count else { throw BenchmarkFailure(description: "write: errno \(errno)") }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var whole: [UInt8] = []
    while case let count = read(socket, &buffer, buffer.count), count > 0 { whole += buffer[0..<count] }
    let text = String(decoding: whole, as: UTF8.self)
    guard let body = text.range(of: "\r\n\r\n") else { throw BenchmarkFailure(description: "\(path): no answer") }
    return String(text[body.upperBound...])
  }

  /// Writes the runs and steps in one transaction with SQL (the store's
  /// own calls would commit 2,000,000 times); returns the 1,000-step run.
  static func seed(_ path: String) throws -> RunID {
    let store = try SQLiteRunStore(path: path)
    let first = try store.beginRun(NewRun(workflow: "nightly", file: "nightly.lua", startedAt: StoreTimestamp(microseconds: 0)))
    let database = try SQLiteDatabase(path: path)
    let start: Int64 = 1_800_000_000_000_000
    try database.transaction {
      try database.execute(
        """
        WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < \(runs + 1))
        INSERT INTO run (id, workflow, file, arguments, status, started_at, finished_at, host, pid)
        SELECT i, CAST(CASE i % 3 WHEN 0 THEN 'nightly' WHEN 1 THEN 'deploy' ELSE 'report' END AS BLOB), 'w.lua',
          (SELECT arguments FROM run WHERE id = \(first.rawValue)), CASE i % 10 WHEN 0 THEN 'failed' ELSE 'succeeded' END,
          \(start) + i * 60000000, \(start) + i * 60000000 + 30000000, 'bench', 1
        FROM n
        """)
      try database.execute(
        """
        WITH RECURSIVE s(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM s WHERE j < \(stepsPerRun - 1))
        INSERT INTO step (run, name, position, status, attempts, started_at, finished_at)
        SELECT run.id, CAST('step-' || j AS BLOB), j, 'succeeded', 1, run.started_at + j * 1000000,
          run.started_at + j * 1000000 + 900000
        FROM run, s WHERE run.id > \(first.rawValue)
        """)
    }
    // The newest run: 1,000 steps, some of them overlapping.
    let big = RunID(Int64(runs + 2))
    try database.transaction {
      try database.execute(
        """
        INSERT INTO run (id, workflow, file, arguments, status, started_at, finished_at, host, pid)
        SELECT \(big.rawValue), CAST('big' AS BLOB), 'big.lua', arguments, 'succeeded', \(start + Int64(runs + 2) * 60_000_000),
          \(start + Int64(runs + 3) * 60_000_000), 'bench', 1 FROM run WHERE id = \(first.rawValue)
        """)
      try database.execute(
        """
        WITH RECURSIVE s(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM s WHERE j < \(bigRunSteps - 1))
        INSERT INTO step (run, name, position, status, attempts, started_at, finished_at)
        SELECT \(big.rawValue), CAST('step-' || j AS BLOB), j, CASE j % 50 WHEN 0 THEN 'failed' ELSE 'succeeded' END, 1,
          \(start + Int64(runs + 2) * 60_000_000) + (j / 4) * 100000, \(start + Int64(runs + 2) * 60_000_000) + (j / 4) * 100000 + 350000
        FROM s
        """)
    }
    return big
  }

  /// The same rows in a PostgreSQL store at `url`, by SQL in one
  /// transaction; returns the 1,000-step run.
  static func seedPostgres(_ url: String) throws -> RunID {
    let store = try StoreLocation(parsing: url, currentFolder: StoreLocation.currentFolder).openRunStore()
    let first = try store.beginRun(NewRun(workflow: "nightly", file: "nightly.lua", startedAt: StoreTimestamp(microseconds: 0)))
    let connection = try PostgresConnection(url: url)
    let start: Int64 = 1_800_000_000_000_000
    try connection.execute(
      """
      BEGIN;
      INSERT INTO run (workflow, file, arguments, status, started_at, finished_at, host, pid)
      SELECT convert_to(CASE i % 3 WHEN 0 THEN 'nightly' WHEN 1 THEN 'deploy' ELSE 'report' END, 'UTF8'), 'w.lua',
        (SELECT arguments FROM run WHERE id = \(first.rawValue)), CASE i % 10 WHEN 0 THEN 'failed' ELSE 'succeeded' END,
        \(start) + i * 60000000, \(start) + i * 60000000 + 30000000, 'bench', 1
      FROM generate_series(2::bigint, \(runs + 1)) i;
      INSERT INTO step (run, name, position, status, attempts, started_at, finished_at)
      SELECT r.id, convert_to('step-' || j, 'UTF8'), j, 'succeeded', 1, r.started_at + j * 1000000,
        r.started_at + j * 1000000 + 900000
      FROM run r, generate_series(0::bigint, \(stepsPerRun - 1)) j WHERE r.id > \(first.rawValue);
      INSERT INTO run (workflow, file, arguments, status, started_at, finished_at, host, pid)
      SELECT convert_to('big', 'UTF8'), 'big.lua', arguments, 'succeeded', \(start + Int64(runs + 2) * 60_000_000),
        \(start + Int64(runs + 3) * 60_000_000), 'bench', 1 FROM run WHERE id = \(first.rawValue);
      INSERT INTO step (run, name, position, status, attempts, started_at, finished_at)
      SELECT (SELECT max(id) FROM run), convert_to('step-' || j, 'UTF8'), j,
        CASE j % 50 WHEN 0 THEN 'failed' ELSE 'succeeded' END, 1,
        \(start + Int64(runs + 2) * 60_000_000) + (j / 4) * 100000, \(start + Int64(runs + 2) * 60_000_000) + (j / 4) * 100000 + 350000
      FROM generate_series(0::bigint, \(bigRunSteps - 1)) j;
      COMMIT;
      ANALYZE;
      """)
    let rows = try connection.query("SELECT max(id) FROM run")
    return RunID(rows.int64(0, 0))
  }

  /// The port in the line `lunar serve` prints on start
  /// ("lunar serve: http://127.0.0.1:PORT/ (runs of ...)").
  static func announcedPort(_ output: FileHandle) throws -> Int {
    var line: [UInt8] = []
    while !line.contains(UInt8(ascii: "\n")) {
      let more = output.availableData
      guard !more.isEmpty else { throw BenchmarkFailure(description: "lunar serve ended before saying its URL") }
      line += more
    }
    let text = String(decoding: line, as: UTF8.self)
    guard let address = text.range(of: "http://127.0.0.1:"),
      let port = Int(text[address.upperBound...].prefix { $0.isNumber })
    else { throw BenchmarkFailure(description: "lunar serve said: \(text)") }
    return port
  }

  /// Sends a GET for `path` and waits for the answer's first byte; the
  /// seconds that took. The rest is read to check the status (200, or 404
  /// for the not-found page).
  static func firstByte(port: Int, path: String) throws -> Double {
    let start = ContinuousClock.now
    let socket = try connected(port: port)
    defer { close(socket) }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
    guard write(socket, request, request.count) == request.count else { throw BenchmarkFailure(description: "write: errno \(errno)") }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    guard read(socket, &buffer, 1) == 1 else { throw BenchmarkFailure(description: "no answer for \(path)") }
    let elapsed = (ContinuousClock.now - start).nanoseconds / 1e9
    var answer = [buffer[0]]
    while case let count = read(socket, &buffer, buffer.count), count > 0 { answer += buffer[0..<count] }
    // A fast error page is not the page asked for.
    let expected = path == notFound ? "HTTP/1.1 404" : "HTTP/1.1 200"
    guard answer.starts(with: Array(expected.utf8)) else {
      throw BenchmarkFailure(description: "\(path) answered \(String(decoding: answer.prefix(200), as: UTF8.self))")
    }
    return elapsed
  }

  private static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
  }
}
