/// A Mermaid drawing read back line by line, as Lunar writes it (a
/// `stateDiagram-v2` or a `flowchart`): node ids, labels with their entity
/// codes (`#quot;`, `#58;`) decoded, and transitions.
public struct MermaidDrawing {
  /// Labels as written, before decoding, to check what is escaped.
  public private(set) var rawLabels: [String] = []
  /// Each declared node's label lines, by id (`state "L" as id`, `id["L"]`).
  public private(set) var nodes: [String: [String]] = [:]
  /// Nodes written alone on a line.
  public private(set) var lone: [String] = []
  /// The initial state (`[*] --> id`).
  public private(set) var initial: String?
  /// Each arrow: its ends and label (nil without one), in order.
  public private(set) var edges: [(from: String, to: String, label: String?)] = []
  /// Lines that are none of these.
  public private(set) var unknown: [String] = []

  /// Reads `text`, the diagram after its front matter.
  public init(_ text: String) {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let body = lines.drop { $0 != "stateDiagram-v2" && $0 != "flowchart LR" }
    for line in body.dropFirst() where !line.isEmpty {
      if let match = line.wholeMatch(of: #/  state "([^"]*)" as (\S+)/#) {
        nodes[String(match.2)] = [label(match.1)]
      } else if let match = line.wholeMatch(of: #/  (\S+)\["([^"]*)"\]/#) {
        let lines = match.2.split(separator: "<br/>", omittingEmptySubsequences: false)
        nodes[String(match.1)] = lines.map { label($0) }
      } else if let match = line.wholeMatch(of: #/  \[\*\] --> (\S+)/#) {
        initial = String(match.1)
      } else if let match = line.wholeMatch(of: #/  (\S+) --> (\S+) : (.*)/#) {
        edges.append((String(match.1), String(match.2), label(match.3)))
      } else if let match = line.wholeMatch(of: #/  (\S+) --> (\S+)/#) {
        edges.append((String(match.1), String(match.2), nil))
      } else if let match = line.wholeMatch(of: #/  (\S+)/#) {
        lone.append(String(match.1))
      } else {
        unknown.append(String(line))
      }
    }
  }

  /// Every id the drawing uses.
  public var ids: Set<String> {
    Set(nodes.keys).union(lone).union(edges.flatMap { [$0.from, $0.to] }).union(initial.map { [$0] } ?? [])
  }

  private mutating func label(_ raw: Substring) -> String {
    rawLabels.append(String(raw))
    return Self.decode(raw)
  }

  /// `raw` with Mermaid's entity codes (`#quot;`, `#35;`) decoded, as
  /// Mermaid renders it; anything else that looks like one is left.
  public static func decode(_ raw: Substring) -> String {
    var out = ""
    var rest = raw
    while let hash = rest.firstIndex(of: "#") {
      out += rest[..<hash]
      let tail = rest[rest.index(after: hash)...]
      if let match = tail.prefixMatch(of: #/quot;/#) {
        out += "\""
        rest = tail[match.range.upperBound...]
      } else if let match = tail.prefixMatch(of: #/(\d+);/#), let value = UInt32(match.1), let scalar = Unicode.Scalar(value) {
        out.unicodeScalars.append(scalar)
        rest = tail[match.range.upperBound...]
      } else {
        out += "#"
        rest = tail
      }
    }
    return out + rest
  }
}
