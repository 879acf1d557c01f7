import LuaKit
import Testing
import TestSupport

@testable import Lunar

/// Drawings of machines and workflows whose names print alike, are keywords
/// or are not text: every name gets its own safe id and is shown as it is,
/// in Mermaid (read back with its entity codes decoded) and in DOT (read
/// back from what Graphviz drew).
@Suite struct MachineGraphTests {
  /// Four states, each reached from `start` by its own message `m1`...`m4`.
  static let script = #"""
    local machine = require 'lunar.machine'
    local m = machine.new { name = 'alike', initial = 'start', states = {
      start = { on = { m1 = '\xfe', m2 = '\xff', m3 = 'a-b', m4 = 'a_b' } },
      ['\xfe'] = {}, ['\xff'] = {}, ['a-b'] = {}, a_b = {},
    } }
    return machine.graph(m), machine.graph(m, 'dot')
    """#

  /// The target of each `start` transition, by message, read from the lines
  /// `pattern` matches (captures: target, message).
  func targets(in drawing: String, _ pattern: Regex<(Substring, Substring, Substring)>) -> [String: String] {
    var targets: [String: String] = [:]
    for line in drawing.split(separator: "\n") {
      if let match = line.wholeMatch(of: pattern) { targets[String(match.2)] = String(match.1) }
    }
    return targets
  }

  @Test func statesThatPrintAlikeGetTheirOwnIds() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run(Self.script)
    let mermaid = try #require(results.first?.stringValue)
    let dot = try #require(results.last?.stringValue)

    let mermaidTargets = targets(in: mermaid, try Regex(#"  start --> (\S+) : (m\d)"#))
    #expect(mermaidTargets.keys.sorted() == ["m1", "m2", "m3", "m4"])
    #expect(Set(mermaidTargets.values).count == 4, "\(mermaid)")
    #expect(mermaid.contains("  state \"\\254\" as \(mermaidTargets["m1"]!)\n"))
    #expect(mermaid.contains("  state \"a-b\" as \(mermaidTargets["m3"]!)\n"))

    let dotTargets = targets(in: dot, try Regex(#"  "start" -> ("[^"]*") \[label="(m\d)"\];"#))
    #expect(dotTargets.keys.sorted() == ["m1", "m2", "m3", "m4"])
    #expect(Set(dotTargets.values).count == 4, "\(dot)")
    let drawn = try Graphviz.draw(dot)
    #expect(Set(drawn.edges.filter { $0.from == "start" }.map(\.to)).count == 4)
  }

  /// A machine whose states are the hostile names, each reached from
  /// `start` by a message of the same name, and whose own name is hostile.
  static let hostileMachine: String = {
    let names = HostileNames.all.map { HostileNames.lua($0.bytes) }
    return """
      local machine = require 'lunar.machine'
      local names = { \(names.joined(separator: ", ")) }
      local states, on = {}, {}
      for _, name in ipairs(names) do states[name] = {}; on[name] = name end
      states.start = { on = on }
      local m = machine.new { name = 'he said "hi": #1;', initial = 'start', states = states }
      return machine.graph(m), machine.graph(m, 'dot')
      """
  }()

  @Test func everyStateGetsASafeIdOfItsOwnAndAnEscapedLabelInMermaid() async throws {
    let lua = try TestRuntime()
    let text = try #require(try await lua.run(Self.hostileMachine).first?.stringValue)
    #expect(text.hasPrefix("---\ntitle: \"he said \\\"hi\\\": \\x231;\"\n---\nstateDiagram-v2\n"), "\(text)")
    let drawing = MermaidDrawing(text)
    #expect(drawing.unknown.isEmpty, "\(drawing.unknown)")
    for id in drawing.ids { #expect(Self.isSafeMermaidId(id), "\(id)") }
    for raw in drawing.rawLabels { #expect(Self.isEscapedForMermaid(raw), "\(raw)") }
    let start = try #require(drawing.initial)
    var reached: Set<String> = []
    for (name, display) in HostileNames.all {
      let arrows = drawing.edges.filter { $0.from == start && $0.label.map(self.bytes) == self.bytes(display) }
      #expect(arrows.count == 1, "\(display): \(arrows)")
      guard let target = arrows.first?.to else { continue }
      reached.insert(target)
      // A state is its own id when its name is, and is declared with its label otherwise.
      let declared = drawing.nodes[target]?.map(self.bytes)
      #expect(declared == [self.bytes(display)] || (declared == nil && Array(target.utf8) == name), "\(display) as \(target)")
    }
    #expect(reached.count == HostileNames.all.count && !reached.contains(start))
  }

  @Test func everyStateGetsAnIdOfItsOwnAndItsLabelInGraphviz() async throws {
    let lua = try TestRuntime()
    let dot = try #require(try await lua.run(Self.hostileMachine).last?.stringValue)
    let drawn = try Graphviz.draw(dot)
    let start = try #require(drawn.edges.first { $0.from == "__start" }?.to)
    #expect(drawn.nodes[start] == ["start"])
    var reached: Set<String> = []
    for (_, display) in HostileNames.all {
      let arrows = drawn.edges.filter { $0.from == start && $0.label.map(bytes) == [bytes(display)] }
      #expect(arrows.count == 1, "\(display): \(arrows)")
      guard let target = arrows.first?.to else { continue }
      reached.insert(target)
      #expect(drawn.nodes[target]?.map(bytes) == [bytes(display)], "\(display) as \(target)")
    }
    #expect(reached.count == HostileNames.all.count && drawn.nodes.count == HostileNames.all.count + 2)
  }

  @Test func namesLongerThanAGraphvizStringAreDrawnWhole() async throws {
    let lua = try TestRuntime()
    // Each is over the 16384 bytes Graphviz reads in one quoted string once escaped.
    let results = try await lua.run(#"""
      local machine = require 'lunar.machine'
      local quotes, accents, plain = ('"'):rep(9000), ('\xC3\xA9'):rep(9000), ('x'):rep(17000)
      local m = machine.new { name = plain, initial = 'start', states = {
        start = { on = { [quotes] = quotes, [accents] = accents, [plain] = plain } },
        [quotes] = {}, [accents] = {}, [plain] = {},
      } }
      return machine.graph(m, 'dot')
      """#)
    let dot = try #require(results.first?.stringValue)
    let drawn = try Graphviz.draw(dot)
    let labels = drawn.edges.filter { $0.from == "start" }.map { edge in [edge.label, drawn.nodes[edge.to] ?? []] }
    let expected = [
      String(repeating: "\"", count: 9000), String(repeating: "\u{E9}", count: 9000), String(repeating: "x", count: 17000),
    ]
    #expect(Set(labels.map { $0.map { $0.map(bytes) } }) == Set(expected.map { [[bytes($0)], [bytes($0)]] }))
  }

  /// A workflow whose steps are the hostile names (but the empty one, which
  /// a step cannot have), each using an action named like it and needing
  /// `first`.
  static let hostileWorkflow: String = {
    let names = HostileNames.all.map { HostileNames.lua($0.bytes) }
    return """
      local workflow = require 'lunar.workflow'
      local step = workflow.step
      local steps = { step 'first' { run = print } }
      for _, name in ipairs { \(names.joined(separator: ", ")) } do
        steps[#steps + 1] = step(name) { uses = name, needs = { 'first' } }
      end
      local wf = workflow 'w: "1"' (steps)
      return workflow.graph(wf), workflow.graph(wf, 'dot')
      """
  }()

  /// Each step's label: its name, then the action it uses (named alike), as bytes.
  static let twoLineLabels = Set(HostileNames.all.map { Array(repeating: Array($0.display.utf8), count: 2) })

  @Test func everyStepGetsASafeIdOfItsOwnAndEscapedLabelsInMermaid() async throws {
    let lua = try TestRuntime()
    let text = try #require(try await lua.run(Self.hostileWorkflow).first?.stringValue)
    #expect(text.hasPrefix("---\ntitle: \"w: \\\"1\\\"\"\n---\nflowchart LR\n"), "\(text)")
    let drawing = MermaidDrawing(text)
    #expect(drawing.unknown.isEmpty, "\(drawing.unknown)")
    for id in drawing.ids { #expect(Self.isSafeMermaidId(id), "\(id)") }
    for raw in drawing.rawLabels { #expect(Self.isEscapedForMermaid(raw), "\(raw)") }
    let first = try #require(drawing.nodes.first { $0.value == ["first"] }?.key)
    let targets = drawing.edges.filter { $0.from == first }.map(\.to)
    #expect(Set(targets).count == HostileNames.all.count && !targets.contains(first))
    #expect(Set(targets.compactMap { drawing.nodes[$0]?.map(bytes) }) == Self.twoLineLabels)
  }

  @Test func everyStepGetsAnIdOfItsOwnAndItsTwoLineLabelInGraphviz() async throws {
    let lua = try TestRuntime()
    let dot = try #require(try await lua.run(Self.hostileWorkflow).last?.stringValue)
    let drawn = try Graphviz.draw(dot)
    let first = try #require(drawn.nodes.first { $0.value == ["first"] }?.key)
    let targets = drawn.edges.filter { $0.from == first }.map(\.to)
    #expect(Set(targets).count == HostileNames.all.count && drawn.nodes.count == HostileNames.all.count + 1)
    #expect(Set(targets.compactMap { drawn.nodes[$0]?.map(bytes) }) == Self.twoLineLabels)
  }

  /// A label's bytes: Swift's `==` on strings would take composed and
  /// decomposed é for one label.
  func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

  /// An ASCII letter, then letters, digits and `_`, and no keyword of
  /// Mermaid's lexers, alone or at its start where they match there.
  static func isSafeMermaidId(_ id: String) -> Bool {
    let lowered = id.lowercased()
    let words = ["end", "state", "statediagram", "note", "scale", "direction", "hide", "as", "call", "click", "href"]
    let prefixes = [
      "default", "style", "linkstyle", "interpolate", "classdef", "class", "graph", "flowchart", "subgraph", "acctitle",
      "accdescr",
    ]
    return id.wholeMatch(of: #/[A-Za-z][A-Za-z0-9_]*/#) != nil && !words.contains(lowered)
      && !prefixes.contains { lowered.hasPrefix($0) }
  }

  /// No character Mermaid reads as syntax, no space at either end or
  /// after `direction`, nothing invisible: only entity codes stand for them.
  static func isEscapedForMermaid(_ raw: String) -> Bool {
    let special = "\"%&:;<>`[]{}"
    let invisible = raw.unicodeScalars.contains {
      $0.value < 0x20 || (0x7F...0xA0).contains($0.value) || [0x2028, 0x2029].contains($0.value)
    }
    let withoutEntities = raw.replacing(#/#(quot|\d+);/#, with: "")
    return !invisible && !raw.hasPrefix(" ") && !raw.hasSuffix(" ") && !raw.lowercased().contains("direction ")
      && !withoutEntities.contains { special.contains($0) || $0 == "#" }
  }
}
