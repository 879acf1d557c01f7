import Foundation
import LunarStore
import Testing
import TestSupport

/// The files Lunar reads and writes for the user: a file that is not a
/// regular file is refused with one line, a full disk ends the run, a file
/// that is not Lunar's is never overwritten and Lunar's own are replaced,
/// never truncated in place.
@Suite struct FileCommandTests {
  static let workflow = """
    local workflow = require "lunar.workflow"
    return workflow "w" { workflow.step "a" { run = function() return 1 end } }
    """

  /// An action run three times, each under `pcall`, then a last line.
  static let actions = """
    lunar.action("a", {}, function() return 1 end)
    for i = 1, 3 do pcall(lunar.run, "a") end
    print("after")
    """

  /// A folder holding `workflow.lua` and `actions.lua` (scripts go in
  /// files: a run refused before it reads standard input would leave a
  /// writer to a closed pipe).
  static func scripts() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.write("workflow.lua", workflow)
    try folder.write("actions.lua", actions)
    return folder
  }

  /// A FIFO in `folder` that nobody writes to.
  static func fifo(in folder: TemporaryFolder) throws -> String {
    let path = folder.url.appendingPathComponent("fifo").path
    #expect(mkfifo(path, 0o600) == 0)
    return path
  }

  @Test func journalsToReadMustBeRegularFiles() async throws {
    let folder = try Self.scripts()
    let cases = [
      ("/dev/zero", "a character device"), ("/dev/full", "a character device"), (try Self.fifo(in: folder), "a FIFO"),
      (folder.url.path, "a folder"),
    ]
    for (path, kind) in cases {
      let replay = try await LunarProcess.run(["run", "--replay", path, "actions.lua"], in: folder.url)
      #expect(replay.status == 1)
      #expect(replay.stderr == "lunar: cannot read \(path): not a regular file (\(kind))\n")
      #expect(replay.stdout.isEmpty)
      // A journal is a run store: what is not one is refused, untouched.
      let resume = try await LunarProcess.run(["run", "--journal", path, "workflow.lua"], in: folder.url)
      #expect(resume.status == 1)
      let what = kind == "a folder" ? "is a folder" : "is not a regular file"
      #expect(resume.stderr == "lunar: \(path) \(what), not a Lunar store; Lunar leaves it untouched\n")
    }
  }

  @Test func aFileThatCannotBeWrittenEndsTheRun() async throws {
    let folder = try Self.scripts()
    let record = try await LunarProcess.run(["run", "--record", "/dev/full", "actions.lua"], in: folder.url)
    #expect(record.status == 1)
    #expect(record.stderr == "lunar: cannot write /dev/full: No space left on device\n")
    #expect(!record.stdout.contains("after"), "the run ended at the first failed write")
    for flag in ["--trace-file", "--analytics"] {
      let trace = try await LunarProcess.run(["run", flag, "/dev/full", "actions.lua"], in: folder.url)
      #expect(trace.status == 1)
      #expect(trace.stderr == "lunar: cannot write /dev/full: No space left on device\n")
      #expect(!trace.stdout.contains("after"))
    }
  }

  @Test func aTestReportThatCannotBeWrittenIsAFailure() async throws {
    let folder = try TemporaryFolder()
    try folder.write("a_spec.lua", "it('works', function() end)")
    let outcome = try await LunarProcess.run(["test", "--output-file", "/dev/full", "."], in: folder.url)
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: cannot write /dev/full: No space left on device\n")
  }

  @Test func aFileThatIsNotLunarsIsNeverOverwritten() async throws {
    let folder = try Self.scripts()
    let notes = try folder.write("notes.txt", "my notes\n")
    let runs: [([String], String)] = [
      (["run", "--record", notes, "actions.lua"], "a Lunar journal"),
      (["run", "--trace-file", notes, "actions.lua"], "a Lunar trace (JSON lines)"),
      (["run", "--analytics", notes, "actions.lua"], "a Lunar trace (JSON lines)"),
      (["test", "--output-file", notes, "-o", "junit", "."], "a JUnit report"),
      (["test", "--output-file", notes, "-o", "json", "."], "a Lunar JSON report"),
    ]
    try folder.write("a_spec.lua", "it('works', function() end)")
    let journal = try await LunarProcess.run(["run", "--journal", notes, "workflow.lua"], in: folder.url)
    #expect(journal.status == 1)
    #expect(journal.stderr == "lunar: \(notes) is not a Lunar store (it is not a SQLite database); Lunar leaves it untouched\n")
    #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
    for (arguments, kind) in runs {
      let outcome = try await LunarProcess.run(arguments, in: folder.url)
      #expect(outcome.status != 0)
      #expect(
        outcome.stderr
          == "lunar: cannot open \(notes): it exists and is not \(kind); Lunar never overwrites it (remove it or choose another file)\n")
      #expect(!outcome.stdout.contains("after"), "refused before the run")
      #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
    }
  }

  @Test func lunarsOwnFilesAreReplacedNotTruncatedInPlace() async throws {
    let folder = try Self.scripts()
    let journal = folder.url.appendingPathComponent("run.journal").path
    let recording = try await LunarProcess.run(["run", "--record", journal, "actions.lua"], in: folder.url)
    #expect(recording.status == 0, "\(recording.stderr)")
    let recorded = try Data(contentsOf: URL(fileURLWithPath: journal))
    #expect(recorded.starts(with: [0x89] + Array("LUNAR-JOURNAL".utf8)))
    // A hard link still sees the first recording after the second: the
    // file was replaced, not truncated and rewritten.
    let first = folder.url.appendingPathComponent("first.journal").path
    #expect(link(journal, first) == 0)
    try folder.write("other.lua", "lunar.action('bee', {}, function() end) lunar.run('bee')")
    let second = try await LunarProcess.run(["run", "--record", journal, "other.lua"], in: folder.url)
    #expect(second.status == 0, "\(second.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == recorded)
    let rerecorded = try Data(contentsOf: URL(fileURLWithPath: journal))
    #expect(rerecorded.starts(with: [0x89] + Array("LUNAR-JOURNAL".utf8)))
    #expect(rerecorded.firstRange(of: Data("bee".utf8)) != nil)
    let report = folder.url.appendingPathComponent("report.xml").path
    try folder.write("a_spec.lua", "it('works', function() end)")
    for _ in 1...2 {
      let outcome = try await LunarProcess.run(["test", "-o", "junit", "--output-file", report, "."], in: folder.url)
      #expect(outcome.status == 0, "\(outcome.stderr)")
    }
    #expect(try String(contentsOfFile: report, encoding: .utf8).contains("tests='1'"))
    // A resume journal is a run store: both runs are in it, the second
    // reusing the first's step.
    let resume = folder.url.appendingPathComponent("resume.db").path
    var outputs: [String] = []
    for _ in 1...2 {
      let outcome = try await LunarProcess.run(["run", "--journal", resume, "workflow.lua"], in: folder.url)
      #expect(outcome.status == 0, "\(outcome.stderr)")
      outputs.append(outcome.stdout)
    }
    #expect(outputs[1].contains("step a reused"), "\(outputs[1])")
    let store = try SQLiteRunStore(path: resume)
    #expect(try store.runs(workflow: nil, limit: 10).count == 2)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.contains(".lunar-") }
    #expect(leftovers.isEmpty, "no temporary file is left behind")
  }

  @Test func aBustedFileMustBeARegularFile() async throws {
    let folder = try TemporaryFolder()
    try folder.write("a_spec.lua", "it('works', function() end)")
    let path = folder.url.appendingPathComponent(".busted").path
    #expect(mkfifo(path, 0o600) == 0)
    let outcome = try await LunarProcess.run(["test", "."], in: folder.url)
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: .busted: cannot read .busted: not a regular file (a FIFO)\n")
  }
}
