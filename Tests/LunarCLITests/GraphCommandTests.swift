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

  @Test func mermaidIsTheDefault() throws {
    let outcome = try LunarProcess.run(["graph", "-"], input: Self.script)
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

  @Test func dotIsAvailable() throws {
    let outcome = try LunarProcess.run(["graph", "--format", "dot", "-"], input: Self.script)
    #expect(outcome.status == 0)
    #expect(outcome.stdout.hasPrefix("digraph \"list\" {\n"))
    #expect(outcome.stdout.contains("  \"__start\" -> \"initial\";\n"))
    #expect(outcome.stdout.contains("  \"refreshing\" -> \"presenting\" [label=\"loaded\"];\n"))
    #expect(outcome.stdout.hasSuffix("}\n"))
  }

  @Test func aFileWithoutMachinesIsAnError() throws {
    let outcome = try LunarProcess.run(["graph", "-"], input: "print('no machines')")
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: - defines no state machine or workflow\n")
  }

  @Test func badFormatsAreUsageErrors() throws {
    let outcome = try LunarProcess.run(["graph", "--format", "svg", "-"], input: Self.script)
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: unknown format 'svg' (mermaid, dot)\nTry 'lunar help graph'.\n")
  }
}
