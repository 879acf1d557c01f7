/// The languages Lunar draws graphs in (`lunar graph --format`).
public enum GraphFormat: String, Sendable, CaseIterable {
  /// Mermaid: `stateDiagram-v2` for machines, `flowchart` for workflows.
  case mermaid
  /// Graphviz's DOT.
  case dot
}
