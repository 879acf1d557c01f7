import LuaKit
import Testing

@testable import Lunar

/// Drawings of machines whose state names print alike or are not text.
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
  }
}
