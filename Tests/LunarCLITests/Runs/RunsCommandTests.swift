import Foundation
import LunarStore
import Testing
import TestSupport

/// `lunar runs` and `lunar runs show RUN`: the runs `lunar run` recorded, as
/// a user reads them, from real runs in a real store.
@Suite struct RunsCommandTests {
  /// A workflow whose steps all succeed, with outputs of several kinds.
  static let deploy = #"""
    local workflow = require "lunar.workflow"
    local step = workflow.step
    return workflow "deploy" {
      step "build" { run = function() return { artifact = "app.tar", size = 3 } end },
      step "bytes" { run = function() return "\255\0bin" end },
      step "big" { run = function()
        local t = {}
        for i = 1, 8 do t[i] = { name = "launch " .. i, t = i * 1.5 } end
        return t
      end },
      step "test" { needs = { "build" }, run = function() return true end },
    }
    """#

  /// A workflow that fails: one step succeeds, one fails after two attempts
  /// (on two lines), one is skipped for it and one by its condition.
  static let flaky = #"""
    local workflow = require "lunar.workflow"
    local step = workflow.step
    return workflow "flaky" {
      step "prepare" { run = function() return "ready" end },
      step "boom" { needs = { "prepare" }, retry = { attempts = 2, backoff = 0 }, run = function()
        error("not fixed\nsee the log", 0)
      end },
      step "after" { needs = { "boom" }, run = function() return 1 end },
      step "never" { when = function() return false end, run = function() return 1 end },
    }
    """#

  /// A folder with the two workflows and a store path in it.
  struct Fixture {
    let folder: TemporaryFolder
    let store: String
    var storeURL: String { "sqlite:" + store }

    init() throws {
      folder = try TemporaryFolder()
      try folder.write("deploy.lua", RunsCommandTests.deploy)
      try folder.write("flaky.lua", RunsCommandTests.flaky)
      store = folder.url.appendingPathComponent("runs.db").path
    }

    /// `lunar ARGUMENTS` in the folder.
    func lunar(_ arguments: [String], environment: [String: String] = [:]) async throws -> LunarProcess.Outcome {
      try await LunarProcess.run(arguments, in: folder.url, environment: environment)
    }

    /// Records three runs: 1 deploy (succeeds), 2 flaky with arguments
    /// (fails), 3 flaky resumed from 2 (reuses `prepare`, fails again; its
    /// attempts are numbered on from run 2's).
    func recordThreeRuns() async throws {
      let deploy = try await lunar(["run", "--store", storeURL, "deploy.lua"])
      #expect(deploy.status == 0, "\(deploy.stderr)")
      let flaky = try await lunar(["run", "--store", storeURL, "flaky.lua", "x", "two words"])
      #expect(flaky.status == 1)
      let resumed = try await lunar(["run", "--store", storeURL, "--resume", "flaky.lua"])
      #expect(resumed.status == 1)
      #expect(resumed.stdout.contains("step prepare reused"), "\(resumed.stdout)")
    }
  }

  /// `text` with every local time as `TIME` and every duration as `Ns`.
  static func normalized(_ text: String) -> String {
    text.replacing(#/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/#, with: "TIME").replacing(#/\d+\.\d+s/#, with: "Ns")
  }

  /// The moment a `started` cell names, read in `zone`.
  static func moment(_ text: String, in zone: TimeZone) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = zone
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter.date(from: text)
  }

  /// The `started` cells of a list, top to bottom.
  static func startedCells(_ list: String) -> [String] {
    list.matches(of: #/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/#).map { String($0.output) }
  }

  @Test func listsRunsNewestFirstWithTheirStepCounts() async throws {
    let fixture = try Fixture()
    try await fixture.recordThreeRuns()
    let list = try await fixture.lunar(["runs", "--store", fixture.storeURL])
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stderr.isEmpty)
    let lines = list.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4, "\(list.stdout)")
    #expect(lines.first == "id  workflow  status     started              duration  succeeded  failed  skipped  reused")
    let rows = lines.dropFirst().map { $0.split(separator: " ").map(String.init) }
    // id, workflow, status, date, time, duration, succeeded, failed, skipped, reused
    #expect(rows.map { [$0[0], $0[1], $0[2]] } == [["3", "flaky", "failed"], ["2", "flaky", "failed"], ["1", "deploy", "succeeded"]])
    #expect(rows.map { Array($0[6...]) } == [["0", "1", "2", "1"], ["1", "1", "2", "0"], ["4", "0", "0", "0"]])
    for row in rows {
      #expect(row.count == 10, "\(row)")
      #expect(row[5].wholeMatch(of: #/\d+\.\d\ds/#) != nil, "a duration: \(row[5])")
    }
    // Every column starts where its header does; numbers end where theirs do.
    let header = lines[0]
    for (line, row) in zip(lines.dropFirst(), rows) {
      #expect(line.range(of: row[3])?.lowerBound.utf16Offset(in: line) == header.range(of: "started")?.lowerBound.utf16Offset(in: header))
      #expect(line.range(of: row[2])?.lowerBound.utf16Offset(in: line) == header.range(of: "status")?.lowerBound.utf16Offset(in: header))
      #expect(line.count == header.count, "the last count ends under 'reused'")
    }
  }

  @Test func startedIsLocalTimeOfTheRunsStart() async throws {
    let fixture = try Fixture()
    let before = Date()
    try await fixture.recordThreeRuns()
    let after = Date()
    let utc = try await fixture.lunar(["runs", "--store", fixture.storeURL], environment: ["TZ": "UTC0"])
    // A POSIX zone five hours east of UTC, with no zone files needed.
    let east = try await fixture.lunar(["runs", "--store", fixture.storeURL], environment: ["TZ": "LUN-5"])
    let utcCells = Self.startedCells(utc.stdout)
    let eastCells = Self.startedCells(east.stdout)
    #expect(utcCells.count == 3 && eastCells.count == 3, "\(utc.stdout)\(east.stdout)")
    let gmt = try #require(TimeZone(identifier: "UTC"))
    let starts = try utcCells.map { try #require(Self.moment($0, in: gmt)) }
    for start in starts {
      #expect(start >= before.addingTimeInterval(-1) && start <= after, "\(start) is between \(before) and \(after)")
    }
    #expect(starts == starts.sorted(by: >), "newest first")
    for (utcCell, eastCell) in zip(utcCells, eastCells) {
      let shifted = try #require(Self.moment(eastCell, in: gmt))
      #expect(shifted.timeIntervalSince(try #require(Self.moment(utcCell, in: gmt))) == 5 * 3600)
    }
  }

  @Test func showPrintsTheHeaderAndEachStepWithItsErrorOrAskedOutput() async throws {
    let fixture = try Fixture()
    try await fixture.recordThreeRuns()
    let last = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "last", "--outputs"])
    #expect(last.status == 0, "\(last.stderr)")
    #expect(
      Self.normalized(last.stdout) == """
        run           3
        workflow      flaky
        file          flaky.lua
        arguments     (none)
        status        failed
        started       TIME
        duration      Ns
        resumed from  run 2

        step     status     attempts   duration
        prepare  reused            0          -
            output: "ready"
        boom     failed            4      Ns
            error: not fixed
                   see the log
        after    skipped           0          -
        never    skipped           0          -

        """)

    let second = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "2"])
    #expect(second.status == 0, "\(second.stderr)")
    #expect(second.stdout.contains("\narguments  x 'two words'\n"), "\(second.stdout)")
    #expect(second.stdout.contains("\nprepare  succeeded         1      "))
    #expect(!second.stdout.contains("resumed from"))

    let first = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "1", "--outputs"])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(
      Self.normalized(first.stdout) == #"""
        run        1
        workflow   deploy
        file       deploy.lua
        arguments  (none)
        status     succeeded
        started    TIME
        duration   Ns

        step   status     attempts   duration
        build  succeeded         1      Ns
            output: { artifact = "app.tar", size = 3 }
        bytes  succeeded         1      Ns
            output: "\255\0bin"
        big    succeeded         1      Ns
            output: {
              { name = "launch 1", t = 1.5 },
              { name = "launch 2", t = 3.0 },
              { name = "launch 3", t = 4.5 },
              { name = "launch 4", t = 6.0 },
              { name = "launch 5", t = 7.5 },
              { name = "launch 6", t = 9.0 },
              { name = "launch 7", t = 10.5 },
              { name = "launch 8", t = 12.0 },
            }
        test   succeeded         1      Ns
            output: true

        """#)
  }

  @Test func workflowAndLimitNarrowTheList() async throws {
    let fixture = try Fixture()
    try await fixture.recordThreeRuns()
    func ids(_ arguments: [String]) async throws -> [String] {
      let outcome = try await fixture.lunar(["runs", "--store", fixture.storeURL] + arguments)
      #expect(outcome.status == 0, "\(outcome.stderr)")
      return outcome.stdout.split(separator: "\n").dropFirst().map { String($0.split(separator: " ")[0]) }
    }
    #expect(try await ids(["--workflow", "deploy"]) == ["1"])
    #expect(try await ids(["--workflow", "flaky"]) == ["3", "2"])
    #expect(try await ids(["--limit", "2"]) == ["3", "2"])
    #expect(try await ids(["--workflow=flaky", "--limit=1"]) == ["3"])
    #expect(try await ids(["--limit", "1", "--workflow", "deploy"]) == ["1"])

    let none = try await fixture.lunar(["runs", "--store", fixture.storeURL, "--workflow", "nope"])
    #expect(none.status == 0)
    #expect(none.stdout == "no runs of workflow 'nope' in \(fixture.storeURL)\n")

    // --workflow narrows `last` to that workflow's last run.
    let deploy = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "--workflow", "deploy", "last"])
    #expect(deploy.status == 0, "\(deploy.stderr)")
    #expect(deploy.stdout.hasPrefix("run        1\nworkflow   deploy\n"), "\(deploy.stdout)")
    let mismatch = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "--workflow", "deploy", "2"])
    #expect(mismatch.status == 1)
    #expect(mismatch.stderr == "lunar: run 2 in \(fixture.storeURL) is of workflow 'flaky', not 'deploy'\n")
    let missing = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "--workflow", "nope", "last"])
    #expect(missing.status == 1)
    #expect(missing.stderr == "lunar: no runs of workflow 'nope' in \(fixture.storeURL)\n")
  }

  @Test func theLimitDefaultsToTwenty() async throws {
    let fixture = try Fixture()
    try fixture.folder.write("tiny.lua", """
      local workflow = require "lunar.workflow"
      return workflow "tiny" { workflow.step "a" { run = function() return 1 end } }
      """)
    for _ in 1...21 {
      let run = try await fixture.lunar(["run", "--store", fixture.storeURL, "tiny.lua"])
      #expect(run.status == 0, "\(run.stderr)")
    }
    let list = try await fixture.lunar(["runs", "--store", fixture.storeURL])
    let ids = list.stdout.split(separator: "\n").dropFirst().map { String($0.split(separator: " ")[0]) }
    #expect(ids == (2...21).reversed().map(String.init))
    let all = try await fixture.lunar(["runs", "--store", fixture.storeURL, "--limit", "100"])
    #expect(all.stdout.split(separator: "\n").count == 22)
  }

  @Test func badCommandLinesAreUsageErrors() async throws {
    let fixture = try Fixture()
    try await fixture.recordThreeRuns()
    let cases: [([String], String)] = [
      (["--limit", "0"], "--limit needs a positive number of runs, got '0'"),
      (["--limit", "abc"], "--limit needs a positive number of runs, got 'abc'"),
      (["--limit=-3"], "--limit needs a positive number of runs, got '-3'"),
      (["--limit"], "option '--limit' needs a value (N)"),
      (["show"], "runs show needs a RUN: a run id or last"),
      (["show", "abc"], "a run is 'last' or a run id (a positive number), got 'abc'"),
      (["show", "0"], "a run is 'last' or a run id (a positive number), got '0'"),
      (["show", "1", "2"], "runs show takes one RUN, got 2"),
      (["show", "--limit", "3", "1"], "--limit is for the list of runs, not for runs show"),
      (
        ["list"],
        "unknown word 'list': 'lunar runs' lists runs, 'lunar runs show RUN' shows one, 'lunar runs logs RUN' prints its logs"
      ),
      (["--bogus"], "unknown option '--bogus' for 'lunar runs'"),
    ]
    for (arguments, message) in cases {
      let outcome = try await fixture.lunar(["runs", "--store", fixture.storeURL] + arguments)
      #expect(outcome.status == 2, "\(arguments)")
      #expect(outcome.stderr == "lunar: \(message)\nTry 'lunar help runs'.\n", "\(arguments)")
      #expect(outcome.stdout.isEmpty)
    }
    let badURL = try await fixture.lunar(["runs", "--store", "runs.db"])
    #expect(badURL.status == 2)
    #expect(badURL.stderr == "lunar: --store: 'runs.db' is not a store URL: for a SQLite file write sqlite:runs.db\nTry 'lunar help runs'.\n")

    // A well-formed id that names no run is not a usage error.
    let unknown = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "99"])
    #expect(unknown.status == 1)
    #expect(unknown.stderr == "lunar: no run 99 in \(fixture.storeURL)\n")
    #expect(unknown.stdout.isEmpty)
  }

  @Test func aMissingStoreIsReportedAndNotCreated() async throws {
    let fixture = try Fixture()
    let state = try TemporaryFolder()
    let environment = ["XDG_STATE_HOME": state.url.path]
    let defaultStore = "sqlite:\(state.url.path)/lunar/lunar.db"
    let list = try await fixture.lunar(["runs"], environment: environment)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout == "no runs recorded yet in \(defaultStore)\n")
    let show = try await fixture.lunar(["runs", "show", "last"], environment: environment)
    #expect(show.status == 1)
    #expect(show.stderr == "lunar: no runs recorded yet in \(defaultStore)\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: state.url.path).isEmpty, "no folder made for the store")

    let chosen = try await fixture.lunar(["runs", "--store", fixture.storeURL])
    #expect(chosen.stdout == "no runs recorded yet in \(fixture.storeURL)\n")
    #expect(!FileManager.default.fileExists(atPath: fixture.store))
  }

  @Test func theStoreIsChosenAsLunarRunChoosesIt() async throws {
    let fixture = try Fixture()
    // The default store, under XDG_STATE_HOME, shared by the two commands.
    let state = try TemporaryFolder()
    let byDefault = ["XDG_STATE_HOME": state.url.path]
    #expect(try await fixture.lunar(["run", "deploy.lua"], environment: byDefault).status == 0)
    let listed = try await fixture.lunar(["runs"], environment: byDefault)
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(listed.stdout.split(separator: "\n").last?.split(separator: " ").prefix(3) == ["1", "deploy", "succeeded"], "\(listed.stdout)")
    // LUNAR_STORE, and --store over it.
    let environment = ["LUNAR_STORE": fixture.storeURL, "XDG_STATE_HOME": state.url.path]
    #expect(try await fixture.lunar(["run", "flaky.lua"], environment: environment).status == 1)
    let fromEnvironment = try await fixture.lunar(["runs", "show", "last"], environment: environment)
    #expect(fromEnvironment.stdout.hasPrefix("run        1\nworkflow   flaky\n"), "\(fromEnvironment.stdout)")
    let fromOption = try await fixture.lunar(
      ["runs", "show", "--store", "sqlite:\(state.url.path)/lunar/lunar.db", "last"], environment: environment)
    #expect(fromOption.stdout.hasPrefix("run        1\nworkflow   deploy\n"), "\(fromOption.stdout)")
  }

  @Test func aFileThatIsNotAStoreIsRefusedUntouched() async throws {
    let fixture = try Fixture()
    let notes = try fixture.folder.write("notes.txt", "my notes\n")
    for arguments in [["runs"], ["runs", "show", "last"]] {
      let outcome = try await fixture.lunar(arguments + ["--store", "sqlite:notes.txt"])
      #expect(outcome.status == 1, "\(arguments)")
      #expect(outcome.stderr == "lunar: \(notes) is not a Lunar store (it is not a SQLite database); Lunar leaves it untouched\n")
      #expect(outcome.stdout.isEmpty)
    }
    #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
    let files = try FileManager.default.contentsOfDirectory(atPath: fixture.folder.url.path).sorted()
    #expect(files == ["deploy.lua", "flaky.lua", "notes.txt"], "no WAL or journal file beside it")
  }

  @Test func namesThatAreNotTextPrintEscaped() async throws {
    let fixture = try Fixture()
    try fixture.folder.write("bytes.lua", #"""
      local workflow = require "lunar.workflow"
      return workflow "b\255in\nx" {
        workflow.step "s\0p" { run = function() return "\254" end },
        workflow.step "caf\u{E9}" { run = function() return 1 end },
      }
      """#)
    #expect(try await fixture.lunar(["run", "--store", fixture.storeURL, "bytes.lua"]).status == 0)
    let list = try await fixture.lunar(["runs", "--store", fixture.storeURL])
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout.split(separator: "\n").count == 2, "one line per run: \(list.stdout)")
    #expect(list.stdout.contains(#"  b\255in\nx  succeeded  "#), "\(list.stdout)")
    let show = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "last", "--outputs"])
    #expect(show.status == 0, "\(show.stderr)")
    #expect(show.stdout.contains("workflow   b\\255in\\nx\n"), "\(show.stdout)")
    #expect(show.stdout.contains("\ns\\0p  succeeded  "), "\(show.stdout)")
    #expect(show.stdout.contains("\n    output: \"\\254\"\n"), "\(show.stdout)")
    #expect(show.stdout.contains("\ncafé  succeeded  "), "\(show.stdout)")
  }

  @Test func aRunWhoseProcessDiedShowsAsInterrupted() async throws {
    let fixture = try Fixture()
    try fixture.folder.write("slow.lua", """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "slow" {
        step "first" { run = function() return "done" end },
        step "wait" { needs = { "first" }, run = function()
          io.stdout:write("waiting\\n"); io.stdout:flush()
          lunar.sleep(600)
        end },
      }
      """)
    let running = try LunarProcess.start(["run", "--store", fixture.storeURL, "slow.lua"], in: fixture.folder.url)
    try await running.waitForOutput("waiting\n")
    let pid = running.process.processIdentifier
    let live = try await fixture.lunar(["runs", "--store", fixture.storeURL])
    #expect(live.stdout.split(separator: "\n").last?.split(separator: " ").prefix(3) == ["1", "slow", "running"], "\(live.stdout)")
    let liveShow = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "last"])
    #expect(liveShow.stdout.contains("\nstatus     running (process \(pid) on "), "\(liveShow.stdout)")

    running.send(SIGKILL)
    let killed = try await running.wait()
    #expect(!killed.exitedNormally)
    let list = try await fixture.lunar(["runs", "--store", fixture.storeURL])
    let row = list.stdout.split(separator: "\n").last?.split(separator: " ").map(String.init) ?? []
    // id, workflow, status, date, time, duration, succeeded, failed, skipped, reused
    #expect(row.count == 10, "\(list.stdout)")
    // Its process on this host is gone: interrupted, without waiting for its lease to end.
    #expect(Array(row.prefix(3)) == ["1", "slow", "interrupted"])
    #expect(Array(row.suffix(5)) == ["-", "1", "0", "0", "0"], "no duration; the first step's output was committed")
    let show = try await fixture.lunar(["runs", "show", "--store", fixture.storeURL, "last"])
    #expect(show.stdout.contains("\nstatus     interrupted (process \(pid) ended without recording the run's end)\n"), "\(show.stdout)")
    #expect(show.stdout.contains("\nduration   -\n"))
    #expect(show.stdout.contains("\nfirst  succeeded         1"))
  }

  @Test func aStoreInAFolderTheReaderCannotWriteIsReadWithoutWritingAFile() async throws {
    let fixture = try Fixture()
    try await fixture.recordThreeRuns()
    let before = try FileManager.default.contentsOfDirectory(atPath: fixture.folder.url.path).sorted()
    let list = try await UnwritableFolderReader.run(["runs", "--store", fixture.storeURL], reading: fixture.folder.url)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout.split(separator: "\n").count == 4, "\(list.stdout)")
    let show = try await UnwritableFolderReader.run(["runs", "show", "1", "--store", fixture.storeURL], reading: fixture.folder.url)
    #expect(show.status == 0, "\(show.stderr)")
    #expect(show.stdout.contains("\nstatus     succeeded\n"), "\(show.stdout)")
    // No -wal or -shm file was left (or could have been made).
    #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.folder.url.path).sorted() == before)
  }

  @Test func aTimeOutOfRangeInTheStoreIsOneLineNotACrash() async throws {
    let fixture = try Fixture()
    let deploy = try await fixture.lunar(["run", "--store", fixture.storeURL, "deploy.lua"])
    #expect(deploy.status == 0, "\(deploy.stderr)")
    let commands = [["runs"], ["runs", "show", "last"], ["runs", "show", "last", "--format", "gantt"],
      ["runs", "show", "last", "--format", "chrome"]]
    // Written as sqlite3 would write them, one at a time.
    for (table, column) in [("run", "started_at"), ("run", "finished_at"), ("step", "started_at"), ("step", "finished_at")] {
      for value in [Int64.min, Int64.max] {
        let database = try SQLiteDatabase(path: fixture.store)
        let saved = try database.scalar("SELECT \(column) FROM \(table) LIMIT 1")
        try database.run("UPDATE \(table) SET \(column) = ?", [.integer(value)])
        let row = table == "run" ? "run 1" : "step \"big\" of run 1"
        // The list shows no steps' times.
        for arguments in commands where table == "run" || arguments != ["runs"] {
          let outcome = try await fixture.lunar(arguments + ["--store", fixture.storeURL])
          let said = "\(table).\(column) = \(value), \(arguments): \(outcome.stderr)"
          #expect(outcome.exitedNormally && outcome.status == 1, "\(said)")
          #expect(outcome.stderr.split(separator: "\n").count == 1, "\(said)")
          #expect(outcome.stderr.hasPrefix("lunar: store \(fixture.store): "), "\(said)")
          #expect(outcome.stderr.contains(" has a bad \(column): \(value) ("), "\(said)")
          if table == "run" { #expect(outcome.stderr.contains(": \(row) has"), "\(said)") }
        }
        try database.run("UPDATE \(table) SET \(column) = ?", [saved ?? .null])
      }
    }
    let restored = try await fixture.lunar(["runs", "show", "last", "--store", fixture.storeURL])
    #expect(restored.status == 0, "\(restored.stderr)")
  }

  @Test func helpIsGeneratedFromTheCommandsFlags() async throws {
    let help = try await LunarProcess.run(["runs", "--help"])
    #expect(help.status == 0)
    #expect(help.stdout.hasPrefix("usage: lunar runs [OPTIONS] [show RUN | logs RUN [STEP] | wait RUN | cancel RUN | signal RUN NAME [VALUE]]\n"))
    for flag in [
      "--store URL", "--workflow NAME", "--limit N", "--status STATUS", "--step NAME", "--outputs", "--attempt N", "--follow",
      "--timeout SECONDS", "--help",
    ] {
      #expect(help.stdout.contains(flag), "\(flag)")
    }
    #expect(try await LunarProcess.run(["help", "runs"]).stdout == help.stdout)
    #expect(try await LunarProcess.run(["help"]).stdout.contains("\n  runs "))
  }
}
