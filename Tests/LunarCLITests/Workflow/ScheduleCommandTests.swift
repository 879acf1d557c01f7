import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `lunar submit`, `lunar runs wait` and `lunar schedule` on a real store,
/// and their refusals of bad input.
@Suite struct ScheduleCommandTests {
  /// A folder with a workflow file and a store URL in it.
  struct Place {
    let folder: TemporaryFolder
    var store: String { "sqlite:" + folder.url.appendingPathComponent("store.db").path }
    var path: String { folder.url.appendingPathComponent("store.db").path }

    init() throws {
      folder = try TemporaryFolder()
      try Data("return 1\n".utf8).write(to: folder.url.appendingPathComponent("flow.lua"))
    }

    func lunar(_ arguments: [String]) async throws -> LunarProcess.Outcome {
      // --store before FILE: what follows FILE is the workflow's.
      try await LunarProcess.run([arguments[0], "--store", store] + arguments.dropFirst(), in: folder.url)
    }
  }

  @Test func submitPrintsTheQueuedRunAndAKeyQueuesOnce() async throws {
    let place = try Place()
    let first = try await place.lunar(["submit", "--key", "k1", "flow.lua", "a", "b"])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout == "1\n")
    let again = try await place.lunar(["submit", "--key", "k1", "flow.lua", "a", "b"])
    #expect(again.status == 0 && again.stdout == "1\n" && again.stderr.contains("was submitted before: run 1 (queued)"))
    let other = try await place.lunar(["submit", "flow.lua"])
    #expect(other.stdout == "2\n")
    let store = try SQLiteRunStore(path: place.path)
    let run = try #require(try store.submittedRun(RunID(1)))
    #expect(run.run.status == .queued && run.run.arguments == ["a", "b"] && run.run.file == "flow.lua")
    #expect(run.fileFingerprint == Fingerprint(ofContent: Array("return 1\n".utf8)))
  }

  @Test func runsWaitExitsWithTheRunsStatus() async throws {
    let place = try Place()
    _ = try await place.lunar(["submit", "flow.lua"])
    _ = try await place.lunar(["submit", "flow.lua"])
    let store = try SQLiteRunStore(path: place.path)
    try store.finishRun(RunID(1), status: .succeeded, at: .now)
    try store.finishRun(RunID(2), status: .failed, at: .now)
    let succeeded = try await place.lunar(["runs", "wait", "1"])
    #expect(succeeded.status == 0 && succeeded.stdout == "succeeded\n")
    let failed = try await place.lunar(["runs", "wait", "2"])
    #expect(failed.status == 1 && failed.stdout == "failed\n")
    _ = try await place.lunar(["submit", "flow.lua"])
    let waiting = try await place.lunar(["runs", "wait", "3", "--timeout", "0.3"])
    #expect(waiting.status == 1 && waiting.stderr.contains("run 3 is still queued after 0.3 seconds"))
    let unknown = try await place.lunar(["runs", "wait", "9"])
    #expect(unknown.status == 1 && unknown.stderr.contains("no run 9"))
    let bad = try await place.lunar(["runs", "wait", "1", "--timeout", "soon"])
    #expect(bad.status == 2 && bad.stderr.contains("--timeout needs a positive number of seconds"))
  }

  @Test func scheduleAddListShowPauseResumeTriggerRemove() async throws {
    let place = try Place()
    let add = try await place.lunar(
      ["schedule", "add", "nightly", "--cron", "30 2 * * *", "--timezone", "Europe/London", "--overlap", "queue-one",
       "--catchup", "1h30m", "flow.lua", "x"])
    #expect(add.status == 0 && add.stdout.hasPrefix("schedule 'nightly' added (next tick "), "\(add.stderr)")
    let list = try await place.lunar(["schedule", "ls"])
    #expect(list.stdout.contains("nightly") && list.stdout.contains("30 2 * * *") && list.stdout.contains("queue-one"))
    let show = try await place.lunar(["schedule", "show", "nightly"])
    #expect(show.stdout.contains("catchup:   5400.0 s") && show.stdout.contains("next tick: "))
    #expect(try await place.lunar(["schedule", "pause", "nightly"]).stdout == "schedule 'nightly' paused\n")
    #expect(try await place.lunar(["schedule", "show", "nightly"]).stdout.contains("state:     paused"))
    #expect(try await place.lunar(["schedule", "resume", "nightly"]).stdout == "schedule 'nightly' resumed\n")
    let trigger = try await place.lunar(["schedule", "trigger", "nightly"])
    #expect(trigger.status == 0 && trigger.stdout == "1\n")
    let store = try SQLiteRunStore(path: place.path)
    #expect(try store.submittedRun(RunID(1))?.schedule == LuaString("nightly"))
    let duplicate = try await place.lunar(["schedule", "add", "nightly", "--cron", "@daily", "flow.lua"])
    #expect(duplicate.status == 1 && duplicate.stderr.contains("a schedule named \"nightly\" exists already"))
    #expect(try await place.lunar(["schedule", "rm", "nightly"]).status == 0)
    let gone = try await place.lunar(["schedule", "show", "nightly"])
    #expect(gone.status == 1 && gone.stderr.contains("no schedule 'nightly'"))
  }

  /// A schedule named by bytes that are not text is kept and found by them.
  @Test func aScheduleNameOfBytes() async throws {
    let place = try Place()
    let name: [UInt8] = Array("b".utf8) + [0xFF] + Array("in".utf8)
    let words: [[UInt8]] = [Array("schedule".utf8), Array("add".utf8), name] + ["--cron", "@hourly", "flow.lua", "--store", place.store].map { Array($0.utf8) }
    let add = try await LunarProcess.run(bytes: words, in: place.folder.url)
    #expect(add.status == 0, "\(add.stderr)")
    let store = try SQLiteRunStore(path: place.path)
    #expect(try store.schedule(named: LuaString(bytes: name)) != nil)
    let show = try await LunarProcess.run(
      bytes: [Array("schedule".utf8), Array("show".utf8), name, Array("--store".utf8), Array(place.store.utf8)], in: place.folder.url)
    #expect(show.status == 0 && show.stdout.hasPrefix("schedule b\\255in"))
  }

  @Test func badInputIsRefused() async throws {
    let place = try Place()
    func refusal(_ arguments: [String]) async throws -> (Int32, String) {
      let outcome = try await place.lunar(arguments)
      return (outcome.status, outcome.stderr.split(separator: "\n").first.map(String.init) ?? "")
    }
    let add = ["schedule", "add", "s"]
    #expect(try await refusal(add + ["--cron", "61 * * * *", "flow.lua"]) == (2, "lunar: --cron: cron: minute field '61': 61 is out of range 0-59"))
    #expect(try await refusal(add + ["--cron", "* * *", "flow.lua"]).1.contains("has 3 fields"))
    #expect(try await refusal(add + ["--cron", "@daily", "--timezone", "Mars/Olympus", "flow.lua"]) == (2, "lunar: --timezone needs an IANA time zone name (Europe/London, America/New_York, UTC), got 'Mars/Olympus'"))
    #expect(try await refusal(add + ["--cron", "@daily", "--catchup", "soon", "flow.lua"]).0 == 2)
    #expect(try await refusal(add + ["--cron", "@daily", "--overlap", "sometimes", "flow.lua"]) == (2, "lunar: --overlap is 'skip', 'queue-one' or 'allow', got 'sometimes'"))
    #expect(try await refusal(add + ["flow.lua"]) == (2, "lunar: schedule add needs --cron EXPR"))
    let noFile = try await refusal(add + ["--cron", "@daily"])
    #expect(noFile.0 == 2 && noFile.1.hasPrefix("lunar: schedule add needs a NAME and a workflow FILE"))
    #expect(try await refusal(["schedule", "show"]) == (2, "lunar: schedule show needs a schedule NAME"))
    #expect(try await refusal(["schedule", "frobnicate"]).0 == 2)
    #expect(try await refusal(["schedule", "ls", "--cron", "@daily"]).0 == 2)
    #expect(try await refusal(["schedule", "pause", "nope"]) == (1, "lunar: no schedules in \(place.store): there is no store there yet"))
    _ = try await place.lunar(["submit", "flow.lua"])
    #expect(try await refusal(["schedule", "pause", "nope"]) == (1, "lunar: no schedule 'nope' in \(place.store)"))
    #expect(try await refusal(["schedule", "trigger", "nope"]) == (1, "lunar: no schedule 'nope' in \(place.store)"))
    let noWorkflow = try await refusal(["submit"])
    #expect(noWorkflow.0 == 2 && noWorkflow.1.hasPrefix("lunar: missing workflow FILE"))
    #expect(try await refusal(["submit", "missing.lua"]).0 == 1)
    #expect(try await refusal(["submit", "--key", "", "flow.lua"]) == (2, "lunar: --key needs a non-empty key"))
  }
}
