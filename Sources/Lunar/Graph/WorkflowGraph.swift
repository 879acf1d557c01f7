import LuaKit

/// Draws a workflow's steps and what each needs, as a Mermaid flowchart or
/// a Graphviz digraph. Step names are Lua names (bytes): each gets its own
/// id whatever its name (see `GraphIdentifiers`), and is shown with the
/// action it uses, escaped for the language.
public struct WorkflowGraph: Sendable {
  /// A step as the drawing needs it.
  public struct Step: Sendable {
    /// The step's name.
    public var name: LuaString
    /// The action it uses, if it names one (`uses`).
    public var uses: LuaString?
    /// The steps it needs, by name.
    public var needs: [LuaString]

    /// A step from its parts.
    public init(name: LuaString, uses: LuaString? = nil, needs: [LuaString] = []) {
      self.name = name
      self.uses = uses
      self.needs = needs
    }
  }

  /// The workflow's name.
  public var name: LuaString
  /// Its steps, in the order they were declared.
  public var steps: [Step]

  /// A drawing of the workflow `name` made of `steps`.
  public init(name: LuaString, steps: [Step]) {
    self.name = name
    self.steps = steps
  }

  /// The drawing in `format`.
  public func render(as format: GraphFormat) -> String {
    format == .mermaid ? mermaid() : dot()
  }

  private func mermaid() -> String {
    var ids = GraphIdentifiers(steps.map(\.name))
    var lines = ["---", "title: \(GraphText.mermaidTitle(GraphText.display(name)))", "---", "flowchart LR"]
    for step in steps {
      let label = [step.name, step.uses].compactMap { $0 }.map { GraphText.mermaid(GraphText.display($0)) }
      lines.append("  \(ids.id(for: step.name))[\"\(label.joined(separator: "<br/>"))\"]")
    }
    for step in steps {
      for need in step.needs { lines.append("  \(ids.id(for: need)) --> \(ids.id(for: step.name))") }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  private func dot() -> String {
    var ids = GraphIdentifiers(steps.map(\.name))
    func node(_ step: LuaString) -> String { GraphText.dotIdentifier(ids.id(for: step)) }
    var lines = ["digraph \(GraphText.dot(GraphText.display(name))) {", "  rankdir=LR;"]
    for step in steps {
      let label = [step.name, step.uses].compactMap { $0 }.map(GraphText.display).joined(separator: "\n")
      lines.append("  \(node(step.name)) [shape=box, label=\(GraphText.dot(label))];")
    }
    for step in steps {
      for need in step.needs { lines.append("  \(node(need)) -> \(node(step.name));") }
    }
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }
}
