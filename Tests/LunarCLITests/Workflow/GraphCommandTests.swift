import Foundation
import Testing
import TestSupport

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

  @Test func aStepThatFansOutIsDrawnAsAStack() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      return workflow "fan" {
        workflow.step "regions" { map = function() return { "eu" } end, run = print },
        workflow.step "report" { needs = "regions", run = print },
      }
      """
    let mermaid = try await LunarProcess.run(["graph", "-"], input: script)
    #expect(mermaid.status == 0, "\(mermaid.stderr)")
    #expect(mermaid.stdout.contains("[[\"regions#91;each item#93;\"]]"), "\(mermaid.stdout)")
    #expect(mermaid.stdout.contains("[\"report\"]"), "\(mermaid.stdout)")
    let dot = try await LunarProcess.run(["graph", "--format", "dot", "-"], input: script)
    #expect(dot.stdout.contains("[shape=box3d, label=\"regions[each item]\"]"), "\(dot.stdout)")
    #expect(dot.stdout.contains("[shape=box, label=\"report\"]"), "\(dot.stdout)")
  }

  @Test func nothingTheScriptWritesReachesTheDiagram() async throws {
    // print and io.write were silenced, io.stdout:write and child processes
    // were not: an SVG with a stray line before it is not well-formed.
    let script = "io.stdout:write('stray\\n') io.stdout:flush() io.write('w\\n') print('p') os.execute('echo child')\n"
      + Self.script
    let outcome = try await LunarProcess.run(["graph", "--format", "svg", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(!outcome.stdout.contains("stray") && !outcome.stdout.contains("child"))
    #expect(outcome.stdout.hasPrefix("<?xml") || outcome.stdout.hasPrefix("<svg"), "\(outcome.stdout.prefix(80))")
    _ = try SVGDocument(Data(outcome.stdout.utf8))
  }

  @Test func dotIsAvailable() async throws {
    let outcome = try await LunarProcess.run(["graph", "--format", "dot", "-"], input: Self.script)
    #expect(outcome.status == 0)
    #expect(outcome.stdout.hasPrefix("digraph \"list\" {\n"))
    #expect(outcome.stdout.contains("  \"__start\" -> \"initial\";\n"))
    #expect(outcome.stdout.contains("  \"refreshing\" -> \"presenting\" [label=\"loaded\"];\n"))
    #expect(outcome.stdout.hasSuffix("}\n"))
    let drawn = try Graphviz.draw(outcome.stdout)
    #expect(drawn.edges.map { "\($0.from) \($0.label) \($0.to)" }.sorted() == [
      "__start [] initial", "initial [\"reload\"] loading", "loading [\"loaded\"] presenting",
      "presenting [\"reload\"] refreshing", "refreshing [\"loaded\"] presenting",
    ])
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
      if format == "dot" { #expect(Set(try Graphviz.draw(outcome.stdout).edges.map(\.to)).count == 6) }
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
    #expect(outcome.stdout.contains("  n[\"\\254\"]\n"), "the step's byte, shown escaped")
  }

  @Test func aFileThatDefinesMachinesAndReturnsAWorkflowIsDrawnWhole() async throws {
    let examples = ExampleTests.examples
    let mermaid = try await LunarProcess.run(["graph", "release_train.lua"], in: examples)
    #expect(mermaid.status == 0, "\(mermaid.stderr)")
    #expect(mermaid.stdout == """
      ---
      title: release-train
      ---
      flowchart LR
        build_eu["build_eu"]
        build_us["build_us"]
        approve["approve"]
        ship["ship"]
        announce["announce"]
        build_eu --> approve
        build_us --> approve
        approve --> ship
        ship --> announce

      ---
      title: release
      ---
      stateDiagram-v2
        [*] --> draft
        live
        approved --> shipping : ship
        draft --> approved : approve

      """)
    let dot = try await LunarProcess.run(["graph", "--format", "dot", "release_train.lua"], in: examples)
    #expect(dot.status == 0, "\(dot.stderr)")
    let drawings = dot.stdout.components(separatedBy: "\n\n")
    #expect(drawings.count == 2)
    #expect(drawings[0].hasPrefix("digraph \"release-train\" {\n") && drawings[1].hasPrefix("digraph \"release\" {\n"))
    let workflow = try Graphviz.draw(drawings[0])
    #expect(workflow.edges.map { "\($0.from) -> \($0.to)" } == [
      "build_eu -> approve", "build_us -> approve", "approve -> ship", "ship -> announce",
    ])
    let machine = try Graphviz.draw(drawings[1])
    #expect(machine.edges.map { "\($0.from) \($0.label) \($0.to)" }.sorted() == [
      "__start [] draft", "approved [\"ship\"] shipping", "draft [\"approve\"] approved",
    ])
  }

  @Test func aStringTheFileReturnsIsNotADrawing() async throws {
    let withMachine = try await LunarProcess.run(["graph", "-"], input: Self.script + "\nreturn 'not a drawing'")
    #expect(withMachine.status == 0, "\(withMachine.stderr)")
    #expect(withMachine.stdout.hasPrefix("---\ntitle: list\n---\nstateDiagram-v2\n"), "\(withMachine.stdout)")
    let alone = try await LunarProcess.run(["graph", "-"], input: "return 'not a drawing'")
    #expect(alone.status == 1)
    #expect(alone.stdout.isEmpty && alone.stderr == "lunar: - defines no state machine or workflow\n")
  }

  @Test func aFileWithoutMachinesIsAnError() async throws {
    let outcome = try await LunarProcess.run(["graph", "-"], input: "print('no machines')")
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: - defines no state machine or workflow\n")
  }

  @Test func badFormatsAreUsageErrors() async throws {
    let outcome = try await LunarProcess.run(["graph", "--format", "png", "-"], input: Self.script)
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: unknown format 'png' (mermaid, dot, svg)\nTry 'lunar help graph'.\n")
  }
}
