import LuaKit

/// Draws a workflow's steps and what each needs, as a Mermaid flowchart or
/// a Graphviz digraph. Step names are Lua names (bytes): each gets its own
/// id whatever its name (see `GraphIdentifiers`), and is shown with the
/// action it uses, escaped for the language. A step that fans out (`map`)
/// is drawn as a stack, its children being known only when it runs.
public struct WorkflowGraph: Sendable {
  /// A step as the drawing needs it.
  public struct Step: Sendable {
    /// The step's name.
    public var name: LuaString
    /// The action it uses, if it names one (`uses`).
    public var uses: LuaString?
    /// The steps it needs, by name.
    public var needs: [LuaString]
    /// It fans out into one child per item (`map`).
    public var fansOut: Bool
    /// CSS classes of its node in Graphviz's SVG (a run's page colours
    /// steps by status); ASCII words.
    public var classes: [String]
    /// Where its node links to in SVG (a run's page: the step's row).
    public var link: String?
    /// The link's title (what a pointer's hover and a screen reader say);
    /// its label if nil.
    public var tooltip: String?

    /// A step from its parts.
    public init(
      name: LuaString, uses: LuaString? = nil, needs: [LuaString] = [], fansOut: Bool = false, classes: [String] = [],
      link: String? = nil, tooltip: String? = nil
    ) {
      self.name = name
      self.uses = uses
      self.needs = needs
      self.fansOut = fansOut
      self.classes = classes
      self.link = link
      self.tooltip = tooltip
    }

    /// The lines of its label: its name, `[each item]` if it fans out, the action it uses.
    var label: [String] {
      [GraphText.display(name) + (fansOut ? "[each item]" : "")] + (uses.map { [GraphText.display($0)] } ?? [])
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
      let label = step.label.map(GraphText.mermaid).joined(separator: "<br/>")
      // A subroutine box (double sides) for a step that fans out.
      let (open, close) = step.fansOut ? ("[[", "]]") : ("[", "]")
      lines.append("  \(ids.id(for: step.name))\(open)\"\(label)\"\(close)")
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
      let label = step.label.joined(separator: "\n")
      var attributes = ["shape=\(step.fansOut ? "box3d" : "box")", "label=\(GraphText.dot(label))"]
      if !step.classes.isEmpty { attributes.append("class=\(GraphText.dot(step.classes.joined(separator: " ")))") }
      if let link = step.link { attributes += ["URL=\(GraphText.dot(link))", "tooltip=\(GraphText.dot(step.tooltip ?? label))"] }
      lines.append("  \(node(step.name)) [\(attributes.joined(separator: ", "))];")
    }
    for step in steps {
      for need in step.needs { lines.append("  \(node(need)) -> \(node(step.name));") }
    }
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }
}
