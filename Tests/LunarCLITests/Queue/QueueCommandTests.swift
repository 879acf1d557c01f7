import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `lunar queue ls`, `queue show NAME` and `queue resume NAME`: the durable
/// queues of a real store, filled through the store layer as workers fill
/// it, read as a user reads them.
@Suite struct QueueCommandTests {
  /// 2024-05-06 07:08:09 UTC: the fixed moment the fixture's finished jobs
  /// are dated from, so their local times print the same on every run.
  static let t0 = StoreTimestamp(microseconds: 1_714_979_289_000_000)

  /// `t0` plus `seconds`.
  static func at(_ seconds: Double) -> StoreTimestamp {
    StoreTimestamp(microseconds: t0.microseconds + Int64(seconds * 1_000_000))
  }

  /// `now` minus `seconds`.
  static func ago(_ seconds: Int64, from now: StoreTimestamp) -> StoreTimestamp {
    StoreTimestamp(microseconds: now.microseconds - seconds * 1_000_000)
  }

  /// LuaValueCodec bytes of `values`.
  static func encoded(_ values: [LuaValue]) throws -> [UInt8] { try LuaValueCodec.encode(values) }

  /// Fills `store` with four queues:
  /// - `b\255in` (a name that is not text): #1 succeeded with bytes, #2
  ///   cancelled, #3 claimed long ago by a worker whose lease ended;
  /// - `deploys`: #1 succeeded, #2 failed with policy stop (the queue is
  ///   halted by it), #3 and #4 waiting;
  /// - `mail`: #1 running on `host-a:42` under a live lease, #2 waiting
  ///   since 3 h 10 min 30 s before `now`;
  /// - `zeta`: #1 and #2 failed with error values (a table, a string).
  static func fill(_ store: any QueueStore, now: StoreTimestamp) throws {
    let bytes = LuaString(bytes: Array("b".utf8) + [0xFF] + Array("in".utf8))
    let oneHour = Duration.seconds(3_600)

    _ = try store.enqueue(queue: bytes, action: "pack", input: try encoded([]), policy: .continue, at: at(0))
    let cancelled = try store.enqueue(queue: bytes, action: "pack", input: try encoded([]), policy: .continue, at: at(0.5))
    _ = try store.enqueue(queue: bytes, action: "pack", input: try encoded([]), policy: .continue, at: at(0.75))
    let packed = try #require(try store.claim(worker: WorkerID("w\tx"), queues: [bytes], lease: oneHour, at: at(1)))
    try store.complete(
      job: packed.id, token: packed.token, outcome: .succeeded(output: try encoded([.string(LuaString(bytes: [0xFF, 0, 0x62]))])),
      at: at(2))
    try store.cancel(job: cancelled.id, at: at(2.5))
    let lost = try #require(try store.claim(worker: WorkerID("w\tx"), queues: [bytes], lease: .seconds(10), at: at(3)))
    #expect(lost.sequence == 3)

    _ = try store.enqueue(queue: "deploys", action: "deploy", input: try encoded([.string("eu")]), policy: .stop, at: at(0))
    _ = try store.enqueue(queue: "deploys", action: "deploy", input: try encoded([.string("us")]), policy: .stop, at: at(0.1))
    _ = try store.enqueue(queue: "deploys", action: "deploy", input: try encoded([.string("ap")]), policy: .stop, at: at(0.2))
    _ = try store.enqueue(queue: "deploys", action: "notify", input: try encoded([]), policy: .continue, at: at(0.3))
    let first = try #require(try store.claim(worker: WorkerID("build-1"), queues: ["deploys"], lease: oneHour, at: at(1)))
    let url = LuaValue.table(LuaTable(fields: [.string("url"): .string("https://eu.example"), .string("ok"): .boolean(true)]))
    try store.complete(job: first.id, token: first.token, outcome: .succeeded(output: try encoded([url, .integer(2)])), at: at(3.5))
    let second = try #require(try store.claim(worker: WorkerID("build-2"), queues: ["deploys"], lease: oneHour, at: at(4)))
    try store.complete(
      job: second.id, token: second.token,
      outcome: .failed(error: Array("deploy.lua:7: region us is down\nstack traceback:\n\t[C]: in ?".utf8)), at: at(5.25))

    _ = try store.enqueue(queue: "mail", action: "send", input: try encoded([]), policy: .continue, at: ago(5 * 3_600, from: now))
    _ = try store.enqueue(queue: "mail", action: "send", input: try encoded([]), policy: .continue, at: ago(11_430, from: now))
    let sending = try #require(try store.claim(worker: WorkerID("host-a:42"), queues: ["mail"], lease: oneHour, at: now))
    #expect(sending.sequence == 1)

    _ = try store.enqueue(queue: "zeta", action: "check", input: try encoded([]), policy: .continue, at: at(0))
    _ = try store.enqueue(queue: "zeta", action: "check", input: try encoded([]), policy: .continue, at: at(0))
    let code = LuaValue.table(LuaTable(fields: [.string("code"): .integer(7)]))
    for error in [try encoded([code]), try encoded([.string("plain\nsecond")])] {
      let job = try #require(try store.claim(worker: WorkerID("w"), queues: ["zeta"], lease: oneHour, at: at(1)))
      try store.complete(job: job.id, token: job.token, outcome: .failed(error: error), at: at(2))
    }
  }

  /// A folder with a store path in it.
  struct Fixture {
    let folder: TemporaryFolder
    let store: String
    var storeURL: String { "sqlite:" + store }

    /// When `filled()` fills the store (its "now").
    let filledAt = StoreTimestamp.now

    init() throws {
      folder = try TemporaryFolder()
      store = folder.url.appendingPathComponent("queues.db").path
    }

    /// The store, created if missing, as a worker opens it.
    func open() throws -> SQLiteQueueStore { try SQLiteQueueStore(path: store) }

    /// A store filled by `QueueCommandTests.fill`.
    func filled() throws -> SQLiteQueueStore {
      let store = try open()
      try QueueCommandTests.fill(store, now: filledAt)
      return store
    }

    /// `lunar queue ARGUMENTS --store URL` in the folder, its times in UTC.
    func queue(_ arguments: [String], environment: [String: String] = ["TZ": "UTC"]) async throws -> LunarProcess.Outcome {
      try await LunarProcess.run(["queue"] + arguments + ["--store", storeURL], in: folder.url, environment: environment)
    }
  }

  /// `text` with every age of days and hours (the fixture's jobs of 2024)
  /// as `AGE`, right-aligned in the width it had, so that columns stay as
  /// the command aligned them; as a label's value, after the label's gap.
  static func normalized(_ text: String) -> String {
    text.replacing(#/\d+d \d\dh/#) { String(repeating: " ", count: max(0, $0.output.count - 3)) + "AGE" }
      .replacing(#/oldest waiting  +AGE/#, with: "oldest waiting  AGE")
  }

  /// `text` with the age of the mail queue's oldest job, 3 h 10 min 30 s
  /// old at `filledAt`, written `3h 10m` when it is a later age the command
  /// may have printed by now (a loaded machine can take a minute), so the
  /// expected texts need not know how long the command took.
  static func settlingMailAge(_ text: String, filledAt: StoreTimestamp) -> String {
    let elapsed = (StoreTimestamp.now.microseconds - filledAt.microseconds) / 1_000_000
    let later = Int((30 + elapsed) / 60)
    guard later >= 1 else { return text }
    return (1...min(later, 49)).reduce(text) { text, extra in text.replacing("3h \(10 + extra)m", with: "3h 10m") }
  }

  @Test func aStoreInAFolderTheReaderCannotWriteIsRead() async throws {
    let fixture = try Fixture()
    _ = try fixture.filled()
    let list = try await UnwritableFolderReader.run(["queue", "ls", "--store", fixture.storeURL], reading: fixture.folder.url)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout.split(separator: "\n").count == 5, "\(list.stdout)")
    let show = try await UnwritableFolderReader.run(
      ["queue", "show", "deploys", "--store", fixture.storeURL], reading: fixture.folder.url)
    #expect(show.status == 0, "\(show.stderr)")
    #expect(show.stdout.hasPrefix("queue           deploys\n"), "\(show.stdout)")
    // Resuming writes: refused in one line, not half done.
    let resume = try await UnwritableFolderReader.run(
      ["queue", "resume", "deploys", "--store", fixture.storeURL], reading: fixture.folder.url)
    #expect(resume.status == 1 && resume.stderr.split(separator: "\n").count == 1, "\(resume.stderr)")
  }

  @Test func aTimeOutOfRangeInTheStoreIsOneLineNotACrash() async throws {
    let fixture = try Fixture()
    let store = try fixture.filled()
    // The mail queue's running job #1 and waiting job #2.
    let running = try #require(try store.job(queue: "mail", sequence: 1))
    let waiting = try #require(try store.job(queue: "mail", sequence: 2))
    let cases: [(JobID, String, [[String]])] = [
      (running.id, "started_at", [["show", "mail"]]), (running.id, "lease_expires_at", [["ls"], ["show", "mail"]]),
      (waiting.id, "enqueued_at", [["ls"], ["show", "mail"]]),
    ]
    for (job, column, commands) in cases {
      for value in [Int64.min, Int64.max] {
        // Written as sqlite3 would write it.
        let database = try SQLiteDatabase(path: fixture.store)
        let saved = try database.scalar("SELECT \(column) FROM job WHERE id = ?", [.integer(job.rawValue)])
        try database.run("UPDATE job SET \(column) = ? WHERE id = ?", [.integer(value), .integer(job.rawValue)])
        for arguments in commands {
          let outcome = try await fixture.queue(arguments)
          let said = "job \(job) \(column) = \(value), \(arguments): \(outcome.stderr)"
          #expect(outcome.exitedNormally && outcome.status == 1, "\(said)")
          #expect(outcome.stderr.split(separator: "\n").count == 1, "\(said)")
          #expect(outcome.stderr.hasPrefix("lunar: store \(fixture.store): "), "\(said)")
          #expect(outcome.stderr.contains(" has a bad \(column): \(value) ("), "\(said)")
        }
        try database.run("UPDATE job SET \(column) = ? WHERE id = ?", [saved ?? .null, .integer(job.rawValue)])
      }
    }
    let restored = try await fixture.queue(["show", "mail"])
    #expect(restored.status == 0, "\(restored.stderr)")
  }

  @Test func lsListsEveryQueueWithItsWaitingRunningAndHaltedJobs() async throws {
    let fixture = try Fixture()
    _ = try fixture.filled()
    let list = try await fixture.queue(["ls"])
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stderr.isEmpty)
    #expect(
      Self.normalized(Self.settlingMailAge(list.stdout, filledAt: fixture.filledAt)) == #"""
        queue    submitted  waiting  running  worker     halted  oldest waiting
        b\255in          3        0       #3  w\tx       -                    -
        deploys          4        2        -  -          by #2              AGE
        mail             2        1       #1  host-a:42  -               3h 10m
        zeta             2        0        -  -          -                    -

        """#)
  }

  @Test func showPrintsTheNewestJobsWithTheirTimesOutputsAndErrors() async throws {
    let fixture = try Fixture()
    _ = try fixture.filled()
    let deploys = try await fixture.queue(["show", "deploys"])
    #expect(deploys.status == 0, "\(deploys.stderr)")
    #expect(
      Self.normalized(deploys.stdout) == #"""
        queue           deploys
        submitted       4
        waiting         2
        oldest waiting  AGE
        running         -
        halted          by #2 (lunar queue resume lets it go on)

        job  action  status     attempts  worker   enqueued             started              finished             duration
         #4  notify  waiting           0  -        2024-05-06 07:08:09  -                    -                           -
         #3  deploy  waiting           0  -        2024-05-06 07:08:09  -                    -                           -
         #2  deploy  failed            1  build-2  2024-05-06 07:08:09  2024-05-06 07:08:13  2024-05-06 07:08:14     1.25s
            error: deploy.lua:7: region us is down
                   stack traceback:
                   \t[C]: in ?
         #1  deploy  succeeded         1  build-1  2024-05-06 07:08:09  2024-05-06 07:08:10  2024-05-06 07:08:12     2.50s
            output: { ok = true, url = "https://eu.example" }, 2

        """#)

    // Local times follow TZ.
    let east = try await fixture.queue(["show", "deploys"], environment: ["TZ": "LUN-5"])
    #expect(east.stdout.contains("  2024-05-06 12:08:13  2024-05-06 12:08:14  "), "\(east.stdout)")

    let mail = try await fixture.queue(["show", "mail"])
    #expect(mail.status == 0, "\(mail.stderr)")
    let mailLines = Self.settlingMailAge(mail.stdout, filledAt: fixture.filledAt)
      .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(mailLines.prefix(6) == [
      "queue           mail", "submitted       2", "waiting         1", "oldest waiting  3h 10m", "running         #1 (worker host-a:42)",
      "halted          no",
    ], "\(mail.stdout)")
    #expect(mailLines.contains { $0.hasPrefix(" #1  send    running         1  host-a:42  2") }, "\(mail.stdout)")
    #expect(mailLines.contains { $0.hasPrefix("    lease: until ") }, "\(mail.stdout)")

    let zeta = try await fixture.queue(["show", "zeta"])
    #expect(zeta.status == 0, "\(zeta.stderr)")
    #expect(zeta.stdout.contains("\n    error: plain\n           second\n"), "\(zeta.stdout)")
    #expect(zeta.stdout.contains("\n    error: { code = 7 }\n"), "\(zeta.stdout)")
  }

  @Test func aNameThatIsNotTextIsAskedForByItsBytesAndPrintedEscaped() async throws {
    let fixture = try Fixture()
    _ = try fixture.filled()
    // The name's byte 255 passed as it is: no Swift string holds it.
    let shell = Process()
    shell.executableURL = URL(fileURLWithPath: "/bin/sh")
    shell.arguments = [
      "-c", #"TZ=UTC exec "$0" queue show --store "$1" "$(printf 'b\377in')" >"$2" 2>&1"#, LunarProcess.binary,
      fixture.storeURL, fixture.folder.url.appendingPathComponent("out.txt").path,
    ]
    try shell.run()
    #expect(await ChildProcess.wait(for: shell))
    let output = try String(contentsOf: fixture.folder.url.appendingPathComponent("out.txt"), encoding: .utf8)
    #expect(shell.terminationStatus == 0, "\(output)")
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines.prefix(6) == [#"queue      b\255in"#, "submitted  3", "waiting    0", #"running    #3 (worker w\tx)"#, "halted     no", ""])
    // The job the lost worker holds runs on (its duration grows) until a
    // worker claims it again.
    #expect(lines.count == 13, "\(output)")
    #expect(lines[safe: 7]?.hasPrefix(#" #3  pack    running           1  w\tx    2024-05-06 07:08:09  2024-05-06 07:08:12  -    "#) == true)
    #expect(lines[safe: 8] == "    lease: ended 2024-05-06 07:08:22; its worker is presumed lost and the next claim runs it again")
    #expect(lines[safe: 9]?.hasPrefix(" #2  pack    cancelled         0  -       2024-05-06 07:08:09  -                    2024-05-06 07:08:11    ") == true)
    #expect(lines[safe: 9]?.hasSuffix("  -") == true, "a cancelled job has no duration")
    #expect(lines[safe: 10]?.hasPrefix(#" #1  pack    succeeded         1  w\tx    2024-05-06 07:08:09  2024-05-06 07:08:10  2024-05-06 07:08:11  "#) == true)
    #expect(lines[safe: 10]?.hasSuffix("  1.00s") == true)
    #expect(lines[safe: 11] == #"    output: "\255\0b""#)

    // Typed as text, the replacement character names another queue.
    let lossy = try await fixture.queue(["show", "b\u{FFFD}in"])
    #expect(lossy.status == 1)
    #expect(lossy.stderr == "lunar: no queue 'b\u{FFFD}in' in \(fixture.storeURL)\n")
  }

  @Test func limitShowsTheNewestJobsAndDefaultsToTwenty() async throws {
    let fixture = try Fixture()
    let store = try fixture.filled()
    func places(_ arguments: [String]) async throws -> [String] {
      let outcome = try await fixture.queue(["show"] + arguments)
      #expect(outcome.status == 0, "\(outcome.stderr)")
      return outcome.stdout.split(separator: "\n").compactMap { line in
        line.hasPrefix(" #") || line.hasPrefix("#") ? String(line.split(separator: " ")[0]) : nil
      }
    }
    #expect(try await places(["deploys", "--limit", "2"]) == ["#4", "#3"])
    #expect(try await places(["--limit=1", "deploys"]) == ["#4"])
    #expect(try await places(["deploys", "--limit", "100"]) == ["#4", "#3", "#2", "#1"])
    let limited = try await fixture.queue(["show", "deploys", "--limit", "2"])
    #expect(limited.stdout.hasSuffix("\n(the newest 2 of 4 jobs; --limit N shows more)\n"), "\(limited.stdout)")
    let all = try await fixture.queue(["show", "deploys"])
    #expect(!all.stdout.contains("the newest"))

    for _ in 1...21 {
      _ = try store.enqueue(queue: "many", action: "a", input: try Self.encoded([]), policy: .continue, at: .now)
    }
    #expect(try await places(["many"]) == (2...21).reversed().map { "#\($0)" })
  }

  @Test func resumeLetsAHaltedQueueGoOn() async throws {
    let fixture = try Fixture()
    let store = try fixture.filled()
    #expect(try store.claim(worker: WorkerID("w"), queues: ["deploys"], lease: .seconds(60), at: .now) == nil, "halted")

    let resumed = try await fixture.queue(["resume", "deploys"])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    #expect(resumed.stdout == "queue 'deploys' was halted by job #2; resumed: its next job may start\n")
    let next = try #require(try store.claim(worker: WorkerID("w"), queues: ["deploys"], lease: .seconds(60), at: .now))
    #expect(next.sequence == 3)
    let list = try await fixture.queue(["ls"])
    #expect(list.stdout.contains("\ndeploys          4        1       #3  w          -    "), "\(list.stdout)")

    let again = try await fixture.queue(["resume", "deploys"])
    #expect(again.status == 0)
    #expect(again.stdout == "queue 'deploys' was not halted: nothing to resume\n")
  }

  @Test func anUnknownQueueIsAnError() async throws {
    let fixture = try Fixture()
    _ = try fixture.filled()
    for word in ["show", "resume"] {
      let outcome = try await fixture.queue([word, "nope"])
      #expect(outcome.status == 1, "\(word)")
      #expect(outcome.stderr == "lunar: no queue 'nope' in \(fixture.storeURL)\n", "\(word)")
      #expect(outcome.stdout.isEmpty)
    }
    // Names are bytes: a name canonically equivalent to another is another.
    _ = try fixture.open().enqueue(queue: "caf\u{E9}", action: "a", input: try Self.encoded([]), policy: .continue, at: .now)
    #expect(try await fixture.queue(["show", "caf\u{E9}"]).status == 0)
    let decomposed = try await fixture.queue(["show", "cafe\u{301}"])
    #expect(decomposed.status == 1)
    #expect(decomposed.stderr == "lunar: no queue 'cafe\u{301}' in \(fixture.storeURL)\n")
  }

  @Test func aStoreWithoutQueuesSaysSo() async throws {
    let fixture = try Fixture()
    _ = try fixture.open()
    let list = try await fixture.queue(["ls"])
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout == "no queues in \(fixture.storeURL)\n")
  }

  @Test func badCommandLinesAreUsageErrors() async throws {
    let fixture = try Fixture()
    _ = try fixture.filled()
    let cases: [([String], String)] = [
      ([], "queue needs ls, show NAME or resume NAME"),
      (["list"], "unknown word 'list': use queue ls, queue show NAME or queue resume NAME"),
      (["ls", "deploys"], "queue ls takes no operands, got 'deploys'"),
      (["ls", "--limit", "3"], "--limit is for queue show, not for queue ls"),
      (["show"], "queue show needs a queue NAME"),
      (["show", "a", "b"], "queue show takes one NAME, got 2"),
      (["show", ""], "a queue NAME must not be empty"),
      (["show", "deploys", "--limit", "0"], "--limit needs a positive number of jobs, got '0'"),
      (["show", "deploys", "--limit", "abc"], "--limit needs a positive number of jobs, got 'abc'"),
      (["show", "deploys", "--limit=-3"], "--limit needs a positive number of jobs, got '-3'"),
      (["show", "deploys", "--limit"], "option '--limit' needs a value (N)"),
      (["resume"], "queue resume needs a queue NAME"),
      (["resume", "deploys", "--limit", "2"], "--limit is for queue show, not for queue resume"),
      (["ls", "--bogus"], "unknown option '--bogus' for 'lunar queue'"),
    ]
    for (arguments, message) in cases {
      // --store goes first here, so a value-less --limit is the last word.
      let outcome = try await LunarProcess.run(["queue", "--store", fixture.storeURL] + arguments, in: fixture.folder.url)
      #expect(outcome.status == 2, "\(arguments)")
      #expect(outcome.stderr == "lunar: \(message)\nTry 'lunar help queue'.\n", "\(arguments)")
      #expect(outcome.stdout.isEmpty)
    }
    let badURL = try await LunarProcess.run(["queue", "ls", "--store", "queues.db"], in: fixture.folder.url)
    #expect(badURL.status == 2)
    #expect(badURL.stderr == "lunar: --store: 'queues.db' is not a store URL: for a SQLite file write sqlite:queues.db\nTry 'lunar help queue'.\n")
  }

  @Test func aMissingStoreIsReportedAndNotCreated() async throws {
    let fixture = try Fixture()
    let state = try TemporaryFolder()
    let environment = ["XDG_STATE_HOME": state.url.path]
    let defaultStore = "sqlite:\(state.url.path)/lunar/lunar.db"
    let list = try await LunarProcess.run(["queue", "ls"], in: fixture.folder.url, environment: environment)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout == "no queues in \(defaultStore) (there is no store there yet)\n")
    for word in ["show", "resume"] {
      let outcome = try await LunarProcess.run(["queue", word, "deploys"], in: fixture.folder.url, environment: environment)
      #expect(outcome.status == 1, "\(word)")
      #expect(outcome.stderr == "lunar: no queue 'deploys' in \(defaultStore): there is no store there yet\n")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: state.url.path).isEmpty, "no folder made for the store")

    let chosen = try await fixture.queue(["ls"])
    #expect(chosen.stdout == "no queues in \(fixture.storeURL) (there is no store there yet)\n")
    #expect(!FileManager.default.fileExists(atPath: fixture.store))
  }

  @Test func theStoreIsChosenAsLunarRunChoosesIt() async throws {
    let fixture = try Fixture()
    _ = try fixture.filled()
    let fromEnvironment = try await LunarProcess.run(
      ["queue", "ls"], in: fixture.folder.url, environment: ["LUNAR_STORE": fixture.storeURL])
    #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
    #expect(fromEnvironment.stdout.split(separator: "\n").count == 5, "\(fromEnvironment.stdout)")
    let other = try TemporaryFolder()
    let overridden = try await LunarProcess.run(
      ["queue", "ls", "--store", "sqlite:\(other.url.path)/none.db"], in: fixture.folder.url,
      environment: ["LUNAR_STORE": fixture.storeURL])
    #expect(overridden.stdout == "no queues in sqlite:\(other.url.path)/none.db (there is no store there yet)\n")
  }

  @Test func aFileThatIsNotAStoreIsRefusedUntouched() async throws {
    let fixture = try Fixture()
    let notes = try fixture.folder.write("notes.txt", "my notes\n")
    for arguments in [["ls"], ["show", "deploys"], ["resume", "deploys"]] {
      let outcome = try await LunarProcess.run(
        ["queue"] + arguments + ["--store", "sqlite:notes.txt"], in: fixture.folder.url)
      #expect(outcome.status == 1, "\(arguments)")
      #expect(outcome.stderr == "lunar: \(notes) is not a Lunar store (it is not a SQLite database); Lunar leaves it untouched\n")
      #expect(outcome.stdout.isEmpty)
    }
    #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
    let files = try FileManager.default.contentsOfDirectory(atPath: fixture.folder.url.path).sorted()
    #expect(files == ["notes.txt"], "no WAL or journal file beside it")
  }

  @Test func helpIsGeneratedFromTheCommandsFlags() async throws {
    let help = try await LunarProcess.run(["queue", "--help"])
    #expect(help.status == 0)
    #expect(help.stdout.hasPrefix("usage: lunar queue [OPTIONS] ls | show NAME | resume NAME\n"))
    for flag in ["--store URL", "--limit N", "--help"] {
      #expect(help.stdout.contains(flag), "\(flag)")
    }
    #expect(try await LunarProcess.run(["help", "queue"]).stdout == help.stdout)
    #expect(try await LunarProcess.run(["help"]).stdout.contains("\n  queue "))
  }
}

/// `lunar queue` on the throwaway PostgreSQL server `scripts/test` starts;
/// skipped (visibly) without one.
@Suite(.enabled(if: TestPostgresSchema.isAvailable, "needs LUNAR_TEST_POSTGRES: run scripts/test, which starts a server"))
struct PostgresQueueCommandTests {
  @Test func lsShowAndResumeReadTheServersQueues() async throws {
    let schema = try TestPostgresSchema()
    let location = StoreLocation(.postgres(url: schema.url))
    let empty = try await LunarProcess.run(["queue", "ls", "--store", schema.url])
    #expect(empty.status == 0, "\(empty.stderr)")
    #expect(empty.stdout == "no queues in \(location) (there is no store there yet)\n")
    #expect(try schema.query("SELECT count(*) FROM pg_tables WHERE schemaname = '\(schema.name)'") == ["0"], "nothing created")

    let store = try PostgresQueueStore(url: schema.url, location: "test")
    let filledAt = StoreTimestamp.now
    try QueueCommandTests.fill(store, now: filledAt)
    let list = try await LunarProcess.run(["queue", "ls", "--store", schema.url])
    #expect(list.status == 0, "\(list.stderr)")
    #expect(QueueCommandTests.normalized(QueueCommandTests.settlingMailAge(list.stdout, filledAt: filledAt)).hasSuffix("""
      deploys          4        2        -  -          by #2              AGE
      mail             2        1       #1  host-a:42  -               3h 10m
      zeta             2        0        -  -          -                    -

      """), "\(list.stdout)")
    let show = try await LunarProcess.run(["queue", "show", "deploys", "--limit", "2", "--store", schema.url], environment: ["TZ": "UTC"])
    #expect(show.status == 0, "\(show.stderr)")
    #expect(show.stdout.contains("\n #4  notify  waiting  "), "\(show.stdout)")
    #expect(!show.stdout.contains("\n #2  "))
    let resumed = try await LunarProcess.run(["queue", "resume", "deploys", "--store", schema.url])
    #expect(resumed.stdout == "queue 'deploys' was halted by job #2; resumed: its next job may start\n", "\(resumed.stderr)")
    #expect(try store.claim(worker: WorkerID("w"), queues: ["deploys"], lease: .seconds(60), at: .now)?.sequence == 3)
    let unknown = try await LunarProcess.run(["queue", "resume", "nope", "--store", schema.url])
    #expect(unknown.status == 1)
    #expect(unknown.stderr == "lunar: no queue 'nope' in \(location)\n")
  }
}

extension Array {
  /// The element at `index`, or nil past the ends.
  fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
