import Foundation
import Testing
import TestSupport

/// The command line read as getopt_long reads it, and as the bytes typed:
/// attached short values, `--`, flags whose value is missing or wrong, and
/// names that are not text.
@Suite struct ArgumentParsingTests {
  static let workflow = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    return workflow "demo" {
      step "a" { run = function() return 1 end },
      step "b" { needs = { "a" }, run = function() return 2 end },
    }
    """

  /// A folder with a spec, a workflow and a script the REPL runs first.
  func folder() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.write("a_spec.lua", "it('runs #unit', function() end)\nit('other', function() end)\n")
    try folder.write("b_check.lua", "it('checks', function() end)\n")
    try folder.write("wf.lua", Self.workflow)
    try folder.write("init.lua", "answer = 42\n")
    return folder
  }

  @Test(arguments: [
    (["test", "-j2", "."], ["test", "-j", "2", "."]),
    (["test", "-ojson", "."], ["test", "-o", "json", "."]),
    (["test", "-tunit", "."], ["test", "-t", "unit", "."]),
    (["test", "-p_check", "."], ["test", "-p", "_check", "."]),
    // Switches together, the last taking the rest of the word, as getopt.
    (["test", "-lj2", "."], ["test", "-l", "-j", "2", "."]),
    (["test", "-ltunit", "."], ["test", "-l", "-t", "unit", "."]),
    (["run", "-j2", "--dry-run", "wf.lua"], ["run", "-j", "2", "--dry-run", "wf.lua"]),
    (["graph", "-fdot", "wf.lua"], ["graph", "-f", "dot", "wf.lua"]),
    (["repl", "-iinit.lua"], ["repl", "-i", "init.lua"]),
  ])
  func aShortOptionTakesItsValueAttached(attached: [String], separate: [String]) async throws {
    let folder = try folder()
    let input = "print(answer)\n"
    let joined = try await LunarProcess.run(attached, input: input, in: folder.url)
    let apart = try await LunarProcess.run(separate, input: input, in: folder.url)
    #expect(joined.status == 0, "\(joined.stderr)")
    #expect(joined.status == apart.status)
    // Timings aside, the same output.
    func steady(_ text: String) -> String {
      text.split(separator: "\n").filter { !$0.hasSuffix(" seconds") && !$0.contains("time") }.joined(separator: "\n")
    }
    #expect(steady(joined.stdout) == steady(apart.stdout))
  }

  @Test(arguments: [
    (["test", "-jx", "."], "lunar: --jobs needs a positive number, got 'x'\nTry 'lunar help test'.\n"),
    (["test", "-lq", "."], "lunar: unknown option '-q' in '-lq' for 'lunar test'\nTry 'lunar help test'.\n"),
    (["test", "-j"], "lunar: option '-j' needs a value (N)\nTry 'lunar help test'.\n"),
    (["test", "--jobs"], "lunar: option '--jobs' needs a value (N)\nTry 'lunar help test'.\n"),
    // A flag's value that is not one says so, not that the file is missing.
    (["run", "--timeout", "f.lua"], "lunar: --timeout needs a positive number of seconds, got 'f.lua'\nTry 'lunar help run'.\n"),
    (["run", "--max-memory", "f.lua"], "lunar: --max-memory needs a number of bytes (e.g. 64M), got 'f.lua'\nTry 'lunar help run'.\n"),
    (["run", "--only", "f.lua"], "lunar: missing script file ('f.lua' was taken as the value of --only)\nTry 'lunar help run'.\n"),
  ])
  func aFlagWhoseValueIsMissingOrWrongIsNamed(arguments: [String], message: String) async throws {
    let folder = try folder()
    let outcome = try await LunarProcess.run(arguments, in: folder.url)
    #expect(outcome.status == 2)
    #expect(outcome.stderr == message)
  }

  @Test func afterTwoDashesEveryWordIsAnOperand() async throws {
    let folder = try folder()
    try folder.write("-x.lua", "print('ran', ...)\n")
    try folder.write("-x_spec.lua", "it('runs', function() end)\n")
    // As lua.c: `lua -- FILE` runs FILE.
    let top = try await LunarProcess.run(["--", "-x.lua", "a"], in: folder.url)
    #expect(top.stdout == "ran\ta\n", "\(top.stderr)")
    let run = try await LunarProcess.run(["run", "--", "-x.lua", "--", "b"], in: folder.url)
    #expect(run.stdout == "ran\t--\tb\n", "\(run.stderr)")
    let test = try await LunarProcess.run(["test", "--", "-x_spec.lua"], in: folder.url)
    #expect(test.stdout.hasSuffix("1 passed, 0 failed, 0 errors, 0 pending\n"), "\(test.stderr)")
    let check = try await LunarProcess.run(["check", "--", "-x.lua"], in: folder.url)
    #expect(check.status == 0, "\(check.stderr)")
    let store = "sqlite:" + folder.url.appendingPathComponent("q.db").path
    try folder.write("submit.lua", """
      local q = require("lunar.queue").new { name = "-x", durable = true }
      q:submit("noop", {})
      """)
    let submitted = try await LunarProcess.run(["run", "--store", store, "submit.lua"], in: folder.url)
    #expect(submitted.status == 0, "\(submitted.stderr)")
    let show = try await LunarProcess.run(["queue", "show", "--store", store, "--", "-x"], in: folder.url)
    #expect(show.status == 0, "\(show.stderr)")
    #expect(show.stdout.hasPrefix("queue           -x\n"), "\(show.stdout)")
    let help = try await LunarProcess.run(["help", "--", "test"])
    #expect(help.stdout.hasPrefix("usage: lunar test"))
  }

  @Test func stepAndWorkflowNamesAreMatchedByTheirBytes() async throws {
    let folder = try TemporaryFolder()
    try folder.write("wf.lua", #"""
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "w\255" {
        step "a" { run = function() return 1 end },
        step "b\255in" { needs = { "a" }, run = function() print("ran b") return 2 end },
        step "c" { run = function() print("ran c") return 3 end },
      }
      """#)
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let name = Array("b".utf8) + [0xFF] + Array("in".utf8)
    let only = try await LunarProcess.run(bytes: [Array("run".utf8), Array("--store".utf8), Array(store.utf8), Array("--only".utf8), name, Array("wf.lua".utf8)], in: folder.url)
    #expect(only.status == 0, "\(only.stderr)")
    #expect(only.stdout.contains("ran b\n") && !only.stdout.contains("ran c"), "\(only.stdout)")
    let from = try await LunarProcess.run(bytes: [Array("run".utf8), Array("--no-store".utf8), Array("--from".utf8), name, Array("wf.lua".utf8)], in: folder.url)
    #expect(from.status == 0, "\(from.stderr)")
    #expect(from.stdout.contains("ran b\n"), "\(from.stdout)")
    let missing = try await LunarProcess.run(bytes: [Array("run".utf8), Array("--no-store".utf8), Array("--only".utf8), Array("b".utf8) + [0xFE], Array("wf.lua".utf8)], in: folder.url)
    #expect(missing.status == 1)
    #expect(missing.stderr.hasPrefix(#"lunar: --only: no step "b\254" in workflow "w\255""#), "\(missing.stderr)")
    let runs = try await LunarProcess.run(bytes: [Array("runs".utf8), Array("--store".utf8), Array(store.utf8), Array("--workflow".utf8), Array("w".utf8) + [0xFF]], in: folder.url)
    #expect(runs.status == 0, "\(runs.stderr)")
    #expect(runs.stdout.contains(#"w\255"#) && runs.stdout.contains("succeeded"), "\(runs.stdout)")
    let other = try await LunarProcess.run(bytes: [Array("runs".utf8), Array("--store".utf8), Array(store.utf8), Array("--workflow".utf8), Array("w".utf8) + [0xFE]], in: folder.url)
    #expect(other.stdout.hasPrefix(#"no runs of workflow 'w\254' in "#), "\(other.stdout)")
  }

  @Test func aWorkerServesAQueueNamedByItsBytes() async throws {
    let folder = try TemporaryFolder()
    let done = folder.url.appendingPathComponent("done").path
    try folder.write("worker.lua", """
      lunar.action("note", function() local f = assert(io.open("\(done)", "w")) f:write("ran") f:close() end)
      """)
    try folder.write("submit.lua", #"""
      local q = require("lunar.queue").new { name = "b\255in", durable = true }
      q:submit("note", {})
      """#)
    let store = "sqlite:" + folder.url.appendingPathComponent("q.db").path
    let submitted = try await LunarProcess.run(["run", "--store", store, "submit.lua"], in: folder.url)
    #expect(submitted.status == 0, "\(submitted.stderr)")
    let worker = try LunarProcess.start(
      bytes: [Array("worker".utf8), Array("--store".utf8), Array(store.utf8), Array("--queues".utf8), Array("b".utf8) + [0xFF] + Array("in".utf8), Array("worker.lua".utf8)],
      in: folder.url)
    let deadline = Date().addingTimeInterval(60)
    while !FileManager.default.fileExists(atPath: done) && Date() < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    worker.send(SIGTERM)
    let outcome = try await worker.wait()
    #expect(FileManager.default.fileExists(atPath: done), "the worker never claimed the job: \(outcome.stderr)")
  }
}
