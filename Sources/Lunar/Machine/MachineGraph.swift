import LuaKit

/// Draws machines: states, the initial state and each known transition
/// labelled with its message, as Mermaid `stateDiagram-v2` or Graphviz.
///
/// States are Lua names (bytes): each gets its own id in the drawing
/// whatever its name (see `GraphIdentifiers`), and every name is shown as
/// `GraphText.display` gives it, escaped for the language.
public enum MachineGraph {
  /// The output languages.
  public typealias Format = GraphFormat

  /// The diagrams of `machines`, one after another.
  public static func render(_ machines: [any MachineBehavior], as format: Format) -> String {
    machines.map { format == .mermaid ? mermaid($0) : dot($0) }.joined(separator: "\n")
  }

  static func mermaid(_ machine: any MachineBehavior) -> String {
    var ids = GraphIdentifiers(machine.states)
    var lines = [
      "---", "title: \(GraphText.mermaidTitle(GraphText.display(machine.name)))", "---", "stateDiagram-v2",
      "  [*] --> \(ids.id(for: machine.initialName))",
    ]
    for state in machine.states where !GraphIdentifiers.isPlain(state) {
      lines.append("  state \"\(GraphText.mermaid(GraphText.display(state)))\" as \(ids.id(for: state))")
    }
    for state in machine.states
    where !machine.edges.contains(where: { $0.from == state || $0.to == state }) && state != machine.initialName {
      lines.append("  \(ids.id(for: state))")
    }
    for edge in machine.edges {
      // A name outside `states` (from a behavior written elsewhere) is drawn all the same.
      let arrow = "  \(ids.id(for: edge.from)) --> \(ids.id(for: edge.to))"
      lines.append(arrow + " : " + GraphText.mermaid(GraphText.display(edge.message)))
    }
    return lines.joined(separator: "\n") + "\n"
  }

  static func dot(_ machine: any MachineBehavior) -> String {
    var ids = GraphIdentifiers(machine.states)
    func node(_ state: LuaString) -> String { GraphText.dotIdentifier(ids.id(for: state)) }
    var lines = ["digraph \(GraphText.dot(GraphText.display(machine.name))) {", "  rankdir=LR;", "  \"__start\" [shape=point];"]
    for state in machine.states {
      let label = GraphIdentifiers.isPlain(state) ? "" : ", label=\(GraphText.dot(GraphText.display(state)))"
      lines.append("  \(node(state)) [shape=box, style=rounded\(label)];")
    }
    lines.append("  \"__start\" -> \(node(machine.initialName));")
    for edge in machine.edges {
      lines.append("  \(node(edge.from)) -> \(node(edge.to)) [label=\(GraphText.dot(GraphText.display(edge.message)))];")
    }
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }
}
