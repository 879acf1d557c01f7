import LuaKit

/// Draws machines: states, the initial state and each known transition
/// labelled with its message, as Mermaid `stateDiagram-v2` or Graphviz.
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
    var lines = ["---", "title: \(machine.name)", "---", "stateDiagram-v2", "  [*] --> \(identifier(machine.initialName))"]
    for state in machine.states where identifier(state) != state {
      lines.append("  state \"\(state)\" as \(identifier(state))")
    }
    for state in machine.states where !machine.edges.contains(where: { $0.from == state || $0.to == state }) && state != machine.initialName {
      lines.append("  \(identifier(state))")
    }
    for edge in machine.edges {
      lines.append("  \(identifier(edge.from)) --> \(identifier(edge.to)) : \(edge.message)")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  static func dot(_ machine: any MachineBehavior) -> String {
    var lines = ["digraph \(quote(machine.name)) {", "  rankdir=LR;", "  \"__start\" [shape=point];"]
    for state in machine.states {
      lines.append("  \(quote(state)) [shape=box, style=rounded];")
    }
    lines.append("  \"__start\" -> \(quote(machine.initialName));")
    for edge in machine.edges {
      lines.append("  \(quote(edge.from)) -> \(quote(edge.to)) [label=\(quote(edge.message))];")
    }
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }

  /// A Mermaid-safe state id.
  static func identifier(_ name: String) -> String {
    let mapped = name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" }
    return String(mapped)
  }

  static func quote(_ text: String) -> String {
    "\"" + text.flatMap { $0 == "\"" ? ["\\", "\""] : ($0 == "\\" ? ["\\", "\\"] : [$0]) } + "\""
  }
}
