import Foundation
import Testing
import TestSupport

/// `lunar test --shard I/N` on a suite of 12 files: the shards split the
/// files, balanced by file size or by recorded `--durations`.
@Suite struct ShardCommandTests {
  /// Twelve files; file N has N tests (so sizes differ), the first test of
  /// every fourth file fails and every fifth file has a pending test.
  func suite() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    for number in 1...12 {
      let file = Self.file(number)
      var lines = ["describe('\(file)', function()"]
      for test in 1...number {
        let body = number % 4 == 0 && test == 1 ? "assert.are.equal(1, 2)" : "assert.is_true(true)"
        lines.append("  it('test \(test)', function() \(body) end)")
      }
      if number % 5 == 0 { lines.append("  it('waits', function() pending('later') end)") }
      lines.append("end)")
      _ = try folder.write("spec/\(file)_spec.lua", lines.joined(separator: "\n") + "\n")
    }
    return folder
  }

  static func file(_ number: Int) -> String { number < 10 ? "f0\(number)" : "f\(number)" }

  /// What one run did: its tests by outcome (full names), from `-o json`.
  struct Run {
    var outcomes: [String: [String]] = [:]
    var stdout: String
    var stderr: String
    var status: Int32

    /// The files whose tests ran (`f07` from `f07 test 3`).
    var files: Set<String> { Set(outcomes.values.joined().map { String($0.prefix(3)) }) }
    var names: [String] { outcomes.values.joined().sorted() }
  }

  func run(_ arguments: [String], in folder: TemporaryFolder) async throws -> Run {
    let outcome = try await LunarProcess.run(["test", "--jobs", "2", "-o", "json"] + arguments + ["spec"], in: folder.url, timeout: 60)
    var run = Run(stdout: outcome.stdout, stderr: outcome.stderr, status: outcome.status)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
    for key in ["successes", "failures", "errors", "pendings"] {
      run.outcomes[key] = (document[key] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }
    return run
  }

  @Test func threeShardsRunEveryTestOnce() async throws {
    let folder = try suite()
    let whole = try await run([], in: folder)
    #expect(whole.names.count == 78 + 2)
    var seen: [String] = []
    var tallies: [String: Int] = [:]
    for index in 1...3 {
      let shard = try await run(["--shard", "\(index)/3"], in: folder)
      #expect(!shard.files.isEmpty, "shard \(index) runs files")
      seen += shard.names
      for (key, names) in shard.outcomes { tallies[key, default: 0] += names.count }
      #expect(shard.status == (shard.outcomes["failures"]?.isEmpty == false ? 1 : 0))
      // The same shard twice is the same files: the plan is deterministic.
      #expect(try await run(["--shard", "\(index)/3"], in: folder).files == shard.files)
    }
    #expect(seen.sorted() == whole.names, "together the shards ran every test, none twice")
    #expect(tallies == whole.outcomes.mapValues(\.count))
  }

  @Test func thePlainReportSaysWhatTheShardRuns() async throws {
    let folder = try suite()
    let outcome = try await LunarProcess.run(["test", "--shard", "2/3", "spec"], in: folder.url, timeout: 60)
    #expect(outcome.stdout.hasPrefix("shard 2/3: 4 of 12 spec files, balanced by file size\n"), "\(outcome.stdout)")
  }

  @Test func aWholeRunRecordsDurationsAndShardsBalanceByThem() async throws {
    let folder = try suite()
    let path = folder.url.appendingPathComponent("durations.json")
    _ = try await run(["--durations", "durations.json"], in: folder)
    let recorded = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: [String: Double]])
    #expect(Set(recorded["lunar-test-durations"]?.keys ?? [:].keys) == Set((1...12).map { "spec/\(Self.file($0))_spec.lua" }))

    // A recording in which f03 took far longer than the rest: it gets a
    // shard of its own, which by size (f03 is small) it does not.
    for index in 1...3 {
      let bySize = try await run(["--shard", "\(index)/3"], in: folder)
      if bySize.files.contains("f03") { #expect(bySize.files.count > 1) }
    }
    let seconds = (1...12).map { "\"spec/\(Self.file($0))_spec.lua\":\($0 == 3 ? 100 : 1)" }
    let durations = #"{"lunar-test-durations":{"# + seconds.joined(separator: ",") + "}}\n"
    try durations.write(to: path, atomically: true, encoding: .utf8)
    var seen: [String] = []
    for index in 1...3 {
      let shard = try await run(["--shard", "\(index)/3", "--durations", "durations.json"], in: folder)
      seen += shard.names
      if shard.files.contains("f03") { #expect(shard.files == ["f03"]) } else { #expect(shard.files.count == 5 || shard.files.count == 6) }
    }
    #expect(seen.count == 80 && Set(seen).count == 80)
    // Shards only read the recording: each must see the one the others saw.
    #expect(try String(contentsOf: path, encoding: .utf8) == durations)
  }

  @Test func bustedConfigNamesTheDurationsFile() async throws {
    let folder = try suite()
    _ = try folder.write(".busted", "return { default = { durations = 'spec/durations.json' } }\n")
    let outcome = try await LunarProcess.run(["test", "--jobs", "2", "spec"], in: folder.url, timeout: 60)
    #expect(outcome.stdout.hasSuffix("75 passed, 3 failed, 0 errors, 2 pending\n"), "\(outcome.stdout)")
    let text = try String(contentsOf: folder.url.appendingPathComponent("spec/durations.json"), encoding: .utf8)
    #expect(text.hasPrefix(#"{"lunar-test-durations":{"# + "\n\"spec/f01_spec.lua\":"))
  }

  @Test func aShardWithoutFilesSaysSoAndSucceeds() async throws {
    let folder = try TemporaryFolder()
    _ = try folder.write("spec/a_spec.lua", "it('a', function() end)\n")
    _ = try folder.write("spec/b_spec.lua", "it('b', function() end)\n")
    let outcome = try await LunarProcess.run(["test", "--shard", "3/3", "spec"], in: folder.url)
    #expect(outcome.status == 0)
    #expect(outcome.stderr == "lunar: shard 3/3 has no spec files (2 files for 3 shards)\n")
    #expect(outcome.stdout.hasSuffix("0 passed, 0 failed, 0 errors, 0 pending\n"))
  }

  @Test(arguments: ["0/3", "4/3", "1/0", "a/b", "1/3/4", "3", "/3", "-1/3", "+1/3", "99999999999999999999/99999999999999999999", "1/10001"])
  func aBadShardIsAUsageError(shard: String) async throws {
    let folder = try suite()
    let outcome = try await LunarProcess.run(["test", "--shard", shard, "spec"], in: folder.url)
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: --shard needs I/N, whole numbers with 1 <= I <= N <= 10000, got '\(shard)'\nTry 'lunar help test'.\n")
    #expect(outcome.stdout == "")
  }

  @Test func aDurationsFileThatIsNotOneIsRefusedAndKept() async throws {
    let folder = try suite()
    let notes = try folder.write("notes.txt", "my notes\n")
    for arguments in [["--durations", "notes.txt"], ["--durations", "notes.txt", "--shard", "1/2"]] {
      let outcome = try await LunarProcess.run(["test"] + arguments + ["spec"], in: folder.url)
      #expect(outcome.status == 2)
      #expect(outcome.stderr.hasPrefix("lunar: --durations notes.txt: not a durations file"), "\(outcome.stderr)")
      #expect(outcome.stdout == "")
    }
    #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
  }
}
