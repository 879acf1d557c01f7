import Foundation
import Testing
import TestSupport

/// `lunar run`'s workflow flags and where they go: flags after FILE belong
/// to the script (as under `lua5.4`), workflow flags need a workflow.
@Suite struct WorkflowFlagTests {
  /// A workflow whose steps say when they really run; prints its arguments.
  static let release = """
    print("args: " .. table.concat(arg, " "))
    local workflow = require "lunar.workflow"
    return workflow "release" {
      workflow.step "build" { run = function() print("BUILT") end },
      workflow.step "ship" { needs = { "build" }, run = function() print("SHIPPED") end },
    }
    """

  func run(_ arguments: [String], file name: String = "release.lua", contents: String = release) async throws -> LunarProcess.Outcome {
    let folder = try TemporaryFolder()
    try folder.write(name, contents)
    return try await LunarProcess.run(arguments, in: folder.url)
  }

  @Test func aRunFlagAfterAWorkflowFileIsRefusedBeforeAnyStepRuns() async throws {
    let outcome = try await run(["run", "release.lua", "--dry-run"])
    #expect(outcome.status == 2)
    #expect(outcome.stdout == "args: --dry-run\n", "the main chunk ran with the flag as its argument, no step did")
    #expect(outcome.stderr == """
      lunar: '--dry-run' after FILE goes to the script; put lunar's flags before FILE (lunar run --dry-run release.lua)

      """)
    let dry = try await run(["run", "--dry-run", "release.lua"])
    #expect(dry.status == 0, "\(dry.stderr)")
    #expect(!dry.stdout.contains("BUILT"))
    // After `--`, the script may take any word.
    let passed = try await run(["run", "release.lua", "--", "--dry-run"])
    #expect(passed.status == 0, "\(passed.stderr)")
    #expect(passed.stdout.hasPrefix("args: -- --dry-run\n"))
    #expect(passed.stdout.contains("SHIPPED\n"))
  }

  @Test func theHintKeepsTheOtherFlagsAndArguments() async throws {
    let cases: [([String], String)] = [
      (["run", "--clock", "virtual", "release.lua", "prod", "--only", "ship"],
       "'--only' after FILE goes to the script; put lunar's flags before FILE (lunar run --clock virtual --only ship release.lua prod)"),
      (["release.lua", "--jobs=2"],
       "'--jobs' after FILE goes to the script; put lunar's flags before FILE (lunar run --jobs=2 release.lua)"),
      (["run", "release.lua", "-j", "3", "--trace"],
       "'-j' after FILE goes to the script; put lunar's flags before FILE (lunar run -j 3 release.lua --trace)"),
    ]
    for (arguments, message) in cases {
      let outcome = try await run(arguments)
      #expect(outcome.status == 2, "\(arguments)")
      #expect(outcome.stderr == "lunar: \(message)\n")
      #expect(!outcome.stdout.contains("BUILT"))
    }
  }

  @Test func workflowFlagsOnAFileThatReturnsNoWorkflowAreUsageErrors() async throws {
    // After FILE they are the script's, as under lua5.4.
    let plain = try await run(["run", "hello.lua", "--dry-run", "--only", "x"], file: "hello.lua", contents: "print(...)")
    #expect(plain.status == 0, "\(plain.stderr)")
    #expect(plain.stdout == "--dry-run\t--only\tx\n")
    for flags in [["--dry-run"], ["--only", "build"], ["--from", "build"], ["--jobs", "2"]] {
      let outcome = try await run(["run"] + flags + ["hello.lua"], file: "hello.lua", contents: "print('hello')")
      #expect(outcome.status == 2, "\(flags)")
      #expect(outcome.stderr == "lunar: '\(flags[0])' is for a file that returns a workflow; hello.lua ran and returned none\n")
    }
    let returnsATable = try await run(["run", "--dry-run", "t.lua"], file: "t.lua", contents: "require 'lunar.workflow'; return { 1 }")
    #expect(returnsATable.status == 2)
    #expect(returnsATable.stderr == "lunar: '--dry-run' is for a file that returns a workflow; t.lua ran and returned none\n")
  }
}
