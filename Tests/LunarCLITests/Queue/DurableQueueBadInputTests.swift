import Foundation
import Testing
import TestSupport

/// Bad input to `lunar worker`, and to durable queues in `lunar run`: one
/// line that names the problem and a non-zero status, never a signal, a
/// Swift trap or a hang.
struct DurableQueueBadInputTests {
  /// Expects `outcome` to be a usage error of `command`: `message` on one
  /// line, then the usual hint, status 2.
  static func expectUsageError(_ outcome: LunarProcess.Outcome, _ message: String, command: String, _ what: String) {
    #expect(outcome.exitedNormally && outcome.status == 2, "\(what): \(outcome.status) \(outcome.stderr)")
    #expect(outcome.stderr == "lunar: \(message)\nTry 'lunar help \(command)'.\n", "\(what)")
    #expect(outcome.stdout.isEmpty, "\(what)")
  }

  /// Expects `outcome` to have failed with status 1 and `line` alone on
  /// standard error.
  static func expectOneLine(_ outcome: LunarProcess.Outcome, _ line: String, _ what: String) {
    #expect(outcome.exitedNormally && outcome.status == 1, "\(what): \(outcome.status) \(outcome.stderr)")
    #expect(outcome.stderr == line + "\n", "\(what)")
  }

  @Test func badWorkerCommandLinesAreUsageErrors() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("q.db").path
    let worker = try folder.write("worker.lua", "lunar.action('a', function() end)")
    let cases: [([String], String)] = [
      ([], "missing worker file (or --runs N, to run submitted runs)"),
      ([worker, worker], "unexpected argument '\(worker)'"),
      (["--concurrency", "0", worker], "--concurrency needs a positive number, got '0'"),
      (["--concurrency", "-1", worker], "--concurrency needs a positive number, got '-1'"),
      (["--concurrency", "abc", worker], "--concurrency needs a positive number, got 'abc'"),
      (["--concurrency", "99999999999999999999", worker], "--concurrency needs a positive number, got '99999999999999999999'"),
      (["--concurrency", "", worker], "--concurrency needs a positive number, got ''"),
      (["--lease", "0", worker], "--lease needs a positive number of seconds, got '0'"),
      (["--lease", "-1", worker], "--lease needs a positive number of seconds, got '-1'"),
      (["--lease", "soon", worker], "--lease needs a positive number of seconds, got 'soon'"),
      (["--lease", "nan", worker], "--lease needs a positive number of seconds, got 'nan'"),
      (["--lease", "inf", worker], "--lease needs a positive number of seconds, got 'inf'"),
      (["--lease", "1e9", worker], "--lease must be shorter than a year (31622400 seconds), got '1e9'"),
      (["--lease", "1e-7", worker], "--lease must be at least a microsecond (0.000001), got '1e-7'"),
      (["--queues", "", worker], "--queues needs queue names, got ''"),
      (["--queues", ",,", worker], "--queues needs queue names, got ',,'"),
    ]
    for (arguments, message) in cases {
      let outcome = try await LunarProcess.run(["worker", "--store", store] + arguments)
      Self.expectUsageError(outcome, message, command: "worker", "\(arguments)")
    }
    // Nothing was even opened.
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("q.db").path))
  }

  @Test func leasesTooShortToHeartbeatAndBadStopFlagsAreUsageErrors() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("q.db").path
    let worker = try folder.write("worker.lua", "lunar.action('a', function() end)")
    let short = "must be at least 1 second (the worker renews its leases every third of their length, and a renewal must reach the store before the lease ends)"
    let cases: [([String], String)] = [
      (["--lease", "0.001", worker], "--lease \(short), got '0.001'"),
      (["--lease", "0.999", worker], "--lease \(short), got '0.999'"),
      (["--grace", "-1", worker], "--grace needs a number of seconds, 0 or more, got '-1'"),
      (["--grace", "nan", worker], "--grace needs a number of seconds, 0 or more, got 'nan'"),
      (["--grace", "1e9", worker], "--grace must be shorter than a year (31622400 seconds), got '1e9'"),
      (["--max-lost-leases", "0", worker], "--max-lost-leases needs a positive number, got '0'"),
      (["--max-lost-leases", "x", worker], "--max-lost-leases needs a positive number, got 'x'"),
    ]
    for (arguments, message) in cases {
      let outcome = try await LunarProcess.run(["worker", "--store", store] + arguments)
      Self.expectUsageError(outcome, message, command: "worker", "\(arguments)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("q.db").path))
  }

  @Test func aMissingWorkerFileIsOneLine() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("q.db").path
    let missing = folder.url.appendingPathComponent("nowhere.lua").path
    let outcome = try await LunarProcess.run(["worker", "--store", store, missing])
    Self.expectOneLine(outcome, "lunar: cannot open \(missing): No such file or directory", "missing file")
  }

  @Test func malformedStoreURLsAreUsageErrors() async throws {
    let folder = try TemporaryFolder()
    let worker = try folder.write("worker.lua", "lunar.action('a', function() end)")
    let script = try folder.write("submit.lua", "require('lunar.queue').new { name = 'q', durable = true }:submit('a', 1)")
    let cases = [
      ("postgres://[bad", "--store: 'postgres://[bad' is not a PostgreSQL URL: end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgres://[bad\""),
      ("nosuch:x", "--store: unknown kind of store 'nosuch:' in 'nosuch:x': use sqlite:PATH or postgres://..."),
      ("", "--store: the store URL is empty: write sqlite:PATH or postgres://..."),
    ]
    for (url, message) in cases {
      Self.expectUsageError(try await LunarProcess.run(["worker", "--store", url, worker]), message, command: "worker", "worker \(url)")
      Self.expectUsageError(try await LunarProcess.run(["run", "--store", url, script]), message, command: "run", "run \(url)")
      // The same URL from the environment is named as coming from there
      // (an empty LUNAR_STORE is no choice at all: the default serves).
      if !url.isEmpty {
        let fromEnvironment = try await LunarProcess.run(["worker", worker], environment: ["LUNAR_STORE": url])
        Self.expectUsageError(
          fromEnvironment, "LUNAR_STORE" + message.dropFirst("--store".count), command: "worker", "LUNAR_STORE=\(url)")
      }
    }
  }

  @Test func anUnreachableServerIsOneLine() async throws {
    let folder = try TemporaryFolder()
    let worker = try folder.write("worker.lua", "lunar.action('a', function() end)")
    let script = try folder.write(
      "submit.lua", "local q = require('lunar.queue').new { name = 'q', durable = true }\nprint(q:submit('a', 1))")
    // Port 1 on the loopback: nothing listens there.
    let url = "postgresql://lunar@127.0.0.1:1/x"
    let reason =
      "cannot connect to store \(url): connection to server at \"127.0.0.1\", port 1 failed: Connection refused"
      + " Is the server running on that host and accepting TCP/IP connections?"
    Self.expectOneLine(try await LunarProcess.run(["worker", "--store", url, worker]), "lunar: " + reason, "worker")
    Self.expectOneLine(try await LunarProcess.run(["queue", "ls", "--store", url]), "lunar: " + reason, "queue ls")
    // A script meets the store where it makes its durable queue: the error
    // is the script's, at that line, and may be caught there.
    let run = try await LunarProcess.run(["run", "--store", url, script])
    #expect(run.exitedNormally && run.status == 1, "\(run.stderr)")
    let lines = run.stderr.split(separator: "\n").map(String.init)
    #expect(lines.first == "lunar: \(script):1: durable queue \"q\": " + reason, "\(run.stderr)")
    #expect(lines.dropFirst().first == "stack traceback:", "\(run.stderr)")
    #expect(run.stdout.isEmpty)
  }

  @Test func aServerThatNeverAnswersTimesOut() async throws {
    // A port that accepts connections and never says a word: libpq waits
    // for the server's greeting until the connect timeout (10 s unless the
    // URL sets one) ends the wait.
    let silent = try SilentListener()
    let url = "postgresql://lunar@127.0.0.1:\(silent.port)/x"
    let folder = try TemporaryFolder()
    let worker = try folder.write("worker.lua", "lunar.action('a', function() end)")
    let outcome = try await LunarProcess.run(["worker", "--store", url, worker], timeout: 120)
    Self.expectOneLine(
      outcome,
      "lunar: cannot connect to store \(url): connection to server at \"127.0.0.1\", port \(silent.port) failed: timeout expired",
      "silent server")
  }

  @Test func anUnknownActionFailsItsJobWithAClearError() async throws {
    let fixture = try DurableQueueCommandTests.Fixture()
    let (folder, store, worker) = (fixture.folder, fixture.store, fixture.worker)
    let reason = "unknown action 'nowhere': the worker that ran this job does not define it"
    let script = try folder.write(
      "submit.lua",
      """
      local q = require("lunar.queue").new { name = "lost", durable = true }
      local h = q:submit("nowhere", { queue = "lost", seq = 1 })
      print(pcall(h.await, h))
      print(h:status())
      h:await()
      """)
    let workers = try DurableQueueCommandTests.startWorkers(1, file: worker, store: store)
    let outcome = try await LunarProcess.run(["run", "--store", store, script], timeout: 60)
    try await DurableQueueCommandTests.stop(workers)
    #expect(outcome.stdout == "false\t\(reason)\nfailed\n", "\(outcome.stderr)")
    // Uncaught, the job's error ends the script like any error.
    #expect(outcome.exitedNormally && outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: \(reason)\nstack traceback:\n"), "\(outcome.stderr)")
    let show = try await LunarProcess.run(["queue", "show", "lost", "--store", store])
    #expect(show.status == 0, "\(show.stderr)")
    let lines = show.stdout.split(separator: "\n").map(String.init)
    #expect(lines.contains { $0.hasPrefix(" #1  nowhere  failed") }, "\(show.stdout)")
    #expect(lines.contains("    error: \(reason)"), "\(show.stdout)")
  }
}

/// A TCP port on 127.0.0.1 whose connections the kernel accepts and
/// nobody ever answers; closed when released.
private final class SilentListener {
  let port: Int
  private let socket: Int32

  init() throws {
    let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Failure(message: "socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let listening = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        bind(fd, address, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, address, &length) == 0
      }
    }
    guard listening else {
      let reason = String(cString: strerror(errno))
      close(fd)
      throw Failure(message: "listening on 127.0.0.1: \(reason)")
    }
    socket = fd
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit { close(socket) }

  struct Failure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
  }
}
