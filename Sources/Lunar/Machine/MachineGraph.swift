import LuaKit

/// Draws machines: states, the initial state and each known transition
/// labelled with its message, as Mermaid `stateDiagram-v2` or Graphviz.
///
/// States are Lua names (bytes): each gets its own id in the drawing even
/// when two names print alike, and a name that is not plain text (invalid
/// UTF-8, control characters) is drawn escaped as in Lua source.
public enum MachineGraph {
  /// The output languages.
  public enum Format: String, Sendable, CaseIterable {
    case mermaid, dot
  }

  /// The diagrams of `machines`, one after another.
  public static func render(_ machines: [any MachineBehavior], as format: Format) -> String {
    machines.map { format == .mermaid ? mermaid($0) : dot($0) }.joined(separator: "\n")
  }

  static func mermaid(_ machine: any MachineBehavior) -> String {
    let labels = machine.states.map(label)
    let ids = uniqueIdentifiers(labels.map(identifier))
    let known = Dictionary(zip(machine.states, ids)) { first, _ in first }
    // A name outside `states` (from a behavior written elsewhere) is drawn all the same.
    func id(_ state: LuaString) -> String { known[state] ?? identifier(label(state)) }
    var lines = ["---", "title: \(label(machine.name))", "---", "stateDiagram-v2", "  [*] --> \(id(machine.initialName))"]
    for (label, id) in zip(labels, ids) where LuaString(id) != LuaString(label) {
      lines.append("  state \"\(label)\" as \(id)")
    }
    for state in machine.states
    where !machine.edges.contains(where: { $0.from == state || $0.to == state }) && state != machine.initialName {
      lines.append("  \(id(state))")
    }
    for edge in machine.edges {
      lines.append("  \(id(edge.from)) --> \(id(edge.to)) : \(label(edge.message))")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  static func dot(_ machine: any MachineBehavior) -> String {
    let labels = machine.states.map(label)
    let ids = uniqueIdentifiers(labels)
    let known = Dictionary(zip(machine.states, ids)) { first, _ in first }
    func id(_ state: LuaString) -> String { quote(known[state] ?? label(state)) }
    var lines = ["digraph \(quote(label(machine.name))) {", "  rankdir=LR;", "  \"__start\" [shape=point];"]
    for (state, (label, unique)) in zip(machine.states, zip(labels, ids)) {
      let named = LuaString(unique) == LuaString(label) ? "" : ", label=\(quote(label))"
      lines.append("  \(id(state)) [shape=box, style=rounded\(named)];")
    }
    lines.append("  \"__start\" -> \(id(machine.initialName));")
    for edge in machine.edges {
      lines.append("  \(id(edge.from)) -> \(id(edge.to)) [label=\(quote(label(edge.message)))];")
    }
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }

  /// How a name is shown: its text, or (if it is not valid UTF-8 or holds
  /// control characters) its bytes escaped as in a Lua literal.
  static func label(_ name: LuaString) -> String {
    if let text = name.string, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
      return text
    }
    return String(name.quoted.dropFirst().dropLast())
  }

  /// A Mermaid-safe state id.
  static func identifier(_ name: String) -> String {
    let mapped = name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" }
    return String(mapped)
  }

  /// `candidates` with `_2`, `_3`... added where one repeats an earlier one
  /// (byte for byte), so that distinct states never share an id.
  static func uniqueIdentifiers(_ candidates: [String]) -> [String] {
    var taken = Set(candidates.map { LuaString($0) })
    var seen: Set<LuaString> = []
    return candidates.map { candidate in
      if seen.insert(LuaString(candidate)).inserted { return candidate }
      var suffix = 2
      while taken.contains(LuaString("\(candidate)_\(suffix)")) { suffix += 1 }
      let unique = "\(candidate)_\(suffix)"
      taken.insert(LuaString(unique))
      return unique
    }
  }

  static func quote(_ text: String) -> String {
    "\"" + text.flatMap { $0 == "\"" ? ["\\", "\""] : ($0 == "\\" ? ["\\", "\\"] : [$0]) } + "\""
  }
}
