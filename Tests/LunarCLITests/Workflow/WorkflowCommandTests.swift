import Foundation
import Testing
import TestSupport

@Suite struct WorkflowCommandTests {
  static let workflow = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    return workflow "demo" {
      step "a" { run = function() lunar.sleep(1); return 1 end },
      step "b" { run = function() lunar.sleep(2); return 2 end },
      step "sum" { needs = { "a", "b" }, run = function(ctx) return ctx.steps.a.output + ctx.steps.b.output end },
      step "broken" { needs = { "sum" }, run = function() error("boom", 0) end },
      step "after" { needs = { "broken" }, run = function() return 1 end },
    }
    """

  @Test func plainProgressAndTheSummaryThroughAPipe() async throws {
    let outcome = try await LunarProcess.run(["run", "--clock", "virtual", "-"], input: Self.workflow)
    #expect(outcome.status == 1)
    let lines = outcome.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines.prefix(9) == [
      "[demo] step a started", "[demo] step b started", "[demo] step a succeeded in 1.00s",
      "[demo] step b succeeded in 2.00s", "[demo] step sum started", "[demo] step sum succeeded in 0.00s",
      "[demo] step broken started", "[demo] step broken failed: boom", "[demo] step after skipped (needs broken)",
    ])
    #expect(outcome.stdout.contains("step    status     attempts   duration\n"))
    #expect(outcome.stdout.contains("b       succeeded         1      2.00s\n"))
    #expect(outcome.stdout.contains("after   skipped           0      0.00s\n"))
    #expect(outcome.stderr.hasPrefix("lunar: workflow demo failed: step broken failed"))
    #expect(!outcome.stdout.contains("\u{1B}["), "no terminal codes in a pipe")
  }

  /// Progress lines are flushed in batches, not one write each: a line is
  /// still out while the loop thread computes a step that never waits.
  @Test func aProgressLineIsOutWhileAStepComputes() async throws {
    let folder = try TemporaryFolder()
    let go = folder.url.appendingPathComponent("go").path
    let script = try folder.write("spin.lua", """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "spin" {
        step "spin" { run = function()
          -- Computes, never waiting, until the test has seen the line.
          while not io.open("\(go)") do end
          return "done"
        end },
      }
      """)
    let running = try LunarProcess.start(["run", "--no-store", script])
    try await running.waitForOutput("[spin] step spin started")
    try Data().write(to: URL(fileURLWithPath: go))
    let outcome = try await running.wait()
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.hasPrefix("[spin] step spin started\n[spin] step spin succeeded in "), "\(outcome.stdout)")
  }

  /// A process a step starts writes to the same output: the progress
  /// lines held for the next flush go out before it.
  @Test func aStepsProcessWritesAfterTheStepsStartedLine() async throws {
    let outcome = try await LunarProcess.run(["run", "--no-store", "-"], input: """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "sh" {
        step "one" { run = function() os.execute("echo from-execute") end },
        step "two" { needs = { "one" }, run = function()
          local child = io.popen("cat", "w")
          child:write("from-popen\\n")
          child:close()
        end },
      }
      """)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count > 5, "\(outcome.stdout)")
    guard lines.count > 5 else { return }
    #expect(Array(lines[0...1]) == ["[sh] step one started", "from-execute"], "\(outcome.stdout)")
    #expect(lines[2].hasPrefix("[sh] step one succeeded in "), "\(outcome.stdout)")
    #expect(Array(lines[3...4]) == ["[sh] step two started", "from-popen"], "\(outcome.stdout)")
    #expect(lines[5].hasPrefix("[sh] step two succeeded in "), "\(outcome.stdout)")
  }

  @Test func liveProgressOnATerminal() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("demo.lua", Self.workflow)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qec", "\(LunarProcess.binary) run --clock virtual \(script)", "/dev/null"]
    // Its runs go to a store of its own, never the user's.
    let state = try TemporaryFolder()
    process.environment = ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": state.url.path]) { $1 }
    let output = try TemporaryFile()
    process.standardOutput = output.handle
    process.standardInput = FileHandle.nullDevice
    try process.run()
    await ChildProcess.wait(for: process, timeout: 20)
    let text = try output.contents()
    #expect(text.contains("\u{1B}[2K"), "lines are redrawn in place")
    #expect(text.contains("⠋ a"), "a spinner beside each running step")
    #expect(text.contains("(0/5)"), "and the count of finished steps")
    #expect(text.contains("sum     succeeded         1      0.00s"))
  }

  @Test func aBadFieldIsAnErrorAtTheUsersLine() async throws {
    let folder = try TemporaryFolder()
    _ = try folder.write("x.lua", """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      local notify = step "notify" { run = print, continue_on_error = "yes" }
      return workflow "w" { notify }
      """)
    let outcome = try await LunarProcess.run(["run", "x.lua"], in: folder.url)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: x.lua:3: step \"notify\": 'continue_on_error' must be true or false, got string\n"))
    #expect(outcome.stdout.isEmpty, "nothing ran")
  }

  @Test func dryRunPrintsThePlan() async throws {
    let outcome = try await LunarProcess.run(["run", "--dry-run", "-"], input: Self.workflow)
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "workflow demo: 4 groups\n  1. a, b\n  2. sum\n  3. broken\n  4. after\n")
  }

  @Test func onlyAndFrom() async throws {
    let only = try await LunarProcess.run(["run", "--clock", "virtual", "--only", "sum", "-"], input: Self.workflow)
    #expect(only.status == 0)
    // The duration is wall-clock time: only its presence is checked.
    #expect(only.stdout.split(separator: "\n").last?.hasPrefix("workflow demo: succeeded in ") == true)
    #expect(!only.stdout.contains("broken"))
    let bad = try await LunarProcess.run(["run", "--only", "nope", "-"], input: Self.workflow)
    #expect(bad.status == 1)
    #expect(bad.stderr.hasPrefix("lunar: --only: no step \"nope\" in workflow \"demo\""))
    let both = try await LunarProcess.run(["run", "--only", "a", "--from", "b", "-"], input: Self.workflow)
    #expect(both.status == 2)
  }

  @Test func resumeFromAJournal() async throws {
    let folder = try TemporaryFolder()
    let counter = folder.url.appendingPathComponent("count").path
    let journal = folder.url.appendingPathComponent("journal.jsonl").path
    let script = try folder.write("resume.lua", """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "resume" {
        step "expensive" { run = function()
          local f = io.open("\(counter)", "a"); f:write("x"); f:close()
          return "data"
        end },
        step "flaky" { needs = { "expensive" }, run = function(ctx)
          if os.getenv("FAIL") == "1" then error("not today", 0) end
          return ctx.steps.expensive.output .. "!"
        end },
      }
      """)
    let first = try await LunarProcess.run(["run", "--journal", journal, script], environment: ["FAIL": "1"])
    #expect(first.status == 1)
    let second = try await LunarProcess.run(["run", "--journal", journal, script], environment: ["FAIL": "0"])
    #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
    #expect(second.stdout.contains("[resume] step expensive reused"))
    #expect(try String(contentsOfFile: counter, encoding: .utf8) == "x", "the succeeded step did not run again")
  }

  @Test func theDefaultStoreIsUnderXDGStateHome() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("w.lua", """
      local workflow = require "lunar.workflow"
      return workflow "w" { workflow.step "a" { run = function() return 1 end } }
      """)
    let state = try TemporaryFolder()
    let outcome = try await LunarProcess.run(["run", script], environment: ["XDG_STATE_HOME": state.url.path])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let store = state.url.appendingPathComponent("lunar/lunar.db").path
    #expect(FileManager.default.fileExists(atPath: store), "the run was recorded in $XDG_STATE_HOME/lunar/lunar.db")
    let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: store)).read(upToCount: 16)
    #expect(header == Data("SQLite format 3\0".utf8))
  }

  @Test func graphDrawsTheSteps() async throws {
    let outcome = try await LunarProcess.run(["graph", "-"], input: Self.workflow)
    #expect(outcome.status == 0)
    #expect(outcome.stdout.contains("flowchart LR\n"))
    #expect(outcome.stdout.contains("  sum --> broken\n"))
    let dot = try await LunarProcess.run(["graph", "--format", "dot", "-"], input: Self.workflow)
    #expect(dot.stdout.contains("  \"a\" -> \"sum\";\n"))
    let drawn = try Graphviz.draw(dot.stdout)
    #expect(drawn.edges.filter { $0.from == "a" }.map(\.to) == ["sum"])
  }

  @Test func graphShowsTheActionAStepUsesOnASecondLine() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      return workflow "report" {
        workflow.step "fetch" { uses = "launches.upcoming" },
        workflow.step "a-b" { needs = { "fetch" }, uses = 'say "hi"' },
      }
      """
    let dot = try await LunarProcess.run(["graph", "--format", "dot", "-"], input: script)
    #expect(dot.status == 0, "\(dot.stderr)")
    let drawn = try Graphviz.draw(dot.stdout)
    #expect(drawn.nodes["fetch"] == ["fetch", "launches.upcoming"], "\(dot.stdout)")
    let next = try #require(drawn.edges.first { $0.from == "fetch" }?.to)
    #expect(drawn.nodes[next] == ["a-b", "say \"hi\""], "\(dot.stdout)")
    let mermaid = try await LunarProcess.run(["graph", "-"], input: script)
    #expect(mermaid.stdout.contains("  fetch[\"fetch<br/>launches.upcoming\"]\n  n_a_b[\"a-b<br/>say #quot;hi#quot;\"]\n"))
  }

  @Test func definitionErrorsNameTheStep() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: """
      local workflow = require "lunar.workflow"
      return workflow "w" { workflow.step "notify" { needs = { "nxt" }, run = print } }
      """)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: stdin:2: step \"notify\": needs unknown step \"nxt\""))
  }
}

extension ExampleTests {
  @Test func workflowExamplesRun() async throws {
    let report = try await LunarProcess.run(["run", "launch_report.lua"], in: Self.examples, environment: ["LUNAR_LAUNCHES_LIVE": "0"])
    #expect(report.status == 0, "\(report.stderr)")
    #expect(report.stdout.contains("next: "))
    #expect(report.stdout.contains("workflow nightly-launch-report: succeeded"))
    let train = try await LunarProcess.run(["run", "release_train.lua"], in: Self.examples)
    #expect(train.status == 0, "\(train.stderr)")
    #expect(train.stdout.contains("released eu-1.2.0 and us-1.2.0\n"))
  }
}
