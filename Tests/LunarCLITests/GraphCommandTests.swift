import Foundation
import Testing

@Suite struct GraphCommandTests {
  static let script = """
    local machine = require 'lunar.machine'
    local list = machine.new {
      name = "list", initial = "initial",
      states = {
        initial = { on = { reload = { run = function() return "loading", { { "load" } } end, targets = { "loading" } } } },
        loading = { on = { loaded = "presenting" } },
        presenting = { on = { reload = "refreshing" } },
        refreshing = { on = { loaded = "presenting" } },
      },
    }
    list:send("reload")
    list:settle()
    assert(list.state == "initial", "machines are never run by lunar graph")
    """

  @Test func mermaidIsTheDefault() async throws {
    let outcome = try await LunarProcess.run(["graph", "-"], input: Self.script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == """
      ---
      title: list
      ---
      stateDiagram-v2
        [*] --> initial
        initial --> loading : reload
        loading --> presenting : loaded
        presenting --> refreshing : reload
        refreshing --> presenting : loaded

      """)
  }

  @Test func dotIsAvailable() async throws {
    let outcome = try await LunarProcess.run(["graph", "--format", "dot", "-"], input: Self.script)
    #expect(outcome.status == 0)
    #expect(outcome.stdout.hasPrefix("digraph \"list\" {\n"))
    #expect(outcome.stdout.contains("  \"__start\" -> \"initial\";\n"))
    #expect(outcome.stdout.contains("  \"refreshing\" -> \"presenting\" [label=\"loaded\"];\n"))
    #expect(outcome.stdout.hasSuffix("}\n"))
  }

  @Test func statesWhoseNamesAreNotTextAreDrawnApart() async throws {
    let script = #"""
      local machine = require 'lunar.machine'
      machine.new { name = 'bytes', initial = 'start', states = {
        start = { on = { m1 = 'b\0c', m2 = '\xfe', m3 = '\xff', m4 = '\xC3\xA9', m5 = 'e\xCC\x81' } },
        ['b\0c'] = {}, ['\xfe'] = {}, ['\xff'] = {}, ['\xC3\xA9'] = {}, ['e\xCC\x81'] = {},
      } }
      """#
    for (format, arrow) in [("mermaid", "  start --> "), ("dot", "  \"start\" -> ")] {
      let outcome = try await LunarProcess.run(["graph", "--format", format, "-"], input: script)
      #expect(outcome.status == 0, "\(outcome.stderr)")
      // Each transition's target, as bytes: canonically equal text is not one id.
      let targets = outcome.stdout.split(separator: "\n").filter { $0.hasPrefix(arrow) }.map { line in
        Array(line.dropFirst(arrow.count).prefix { $0 != " " }.utf8)
      }
      #expect(targets.count == 5 && Set(targets).count == 5, "\(outcome.stdout)")
    }
  }

  @Test func aWorkflowWhoseStepNamesAreNotUTF8IsDrawn() async throws {
    let outcome = try await LunarProcess.run(["graph", "-"], input: #"""
      local workflow = require 'lunar.workflow'
      local step = workflow.step
      return workflow 'w' { step '\xfe' { run = print }, step 'after' { needs = { '\xfe' }, run = print } }
      """#)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.hasPrefix("---\ntitle: w\n---\nflowchart LR\n"))
    #expect(outcome.stdout.contains("[\"\u{FFFD}\"]"), "the step's byte, shown here decoded leniently")
  }

  @Test func aFileWithoutMachinesIsAnError() async throws {
    let outcome = try await LunarProcess.run(["graph", "-"], input: "print('no machines')")
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: - defines no state machine or workflow\n")
  }

  @Test func badFormatsAreUsageErrors() async throws {
    let outcome = try await LunarProcess.run(["graph", "--format", "svg", "-"], input: Self.script)
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: unknown format 'svg' (mermaid, dot)\nTry 'lunar help graph'.\n")
  }
}
