import Foundation

/// Debian's Graphviz (`dot`, installed by `scripts/bootstrap`): every DOT
/// drawing a test makes is given to it, and what it drew is read back from
/// its SVG.
public enum Graphviz {
  /// `dot` refused a drawing, or said something about it.
  public struct Refusal: Error, CustomStringConvertible {
    /// Its exit status.
    public let status: Int32
    /// What it wrote to standard error.
    public let message: String
    /// The drawing it was given.
    public let source: String
    public var description: String { "dot -Tsvg ended with \(status): \(message)\n\(source)" }
  }

  /// `dot` itself is missing.
  public struct Missing: Error, CustomStringConvertible {
    public var description: String { "Graphviz's dot is not installed: run scripts/bootstrap" }
  }

  /// What `dot -Tsvg` draws from `source`; throws if it fails or writes
  /// anything to standard error (a warning counts: a drawing must be read
  /// as it was written).
  public static func draw(_ source: String) throws -> GraphvizDrawing {
    guard let dot = ["/usr/bin/dot", "/usr/local/bin/dot"].first(where: FileManager.default.isExecutableFile) else {
      throw Missing()
    }
    let folder = try TemporaryFolder()
    let input = try folder.write("drawing.dot", source)
    let output = folder.url.appendingPathComponent("drawing.svg")
    let errors = folder.url.appendingPathComponent("errors.txt")
    guard FileManager.default.createFile(atPath: errors.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: dot)
    process.arguments = ["-Tsvg", "-o", output.path, input]
    process.standardError = try FileHandle(forWritingTo: errors)
    try process.run()
    process.waitUntilExit()
    let message = String(decoding: try Data(contentsOf: errors), as: UTF8.self)
    guard process.terminationStatus == 0, message.isEmpty else {
      throw Refusal(status: process.terminationStatus, message: message, source: source)
    }
    return GraphvizDrawing(svg: String(decoding: try Data(contentsOf: output), as: UTF8.self))
  }
}

/// The nodes and edges of an SVG that `dot` drew: each with its id (from
/// the `<title>` Graphviz gives it) and the lines of its label.
public struct GraphvizDrawing {
  /// The SVG itself.
  public let svg: String
  /// Each node's label lines, by node id.
  public private(set) var nodes: [String: [String]] = [:]
  /// Each edge: its ends and label lines, in the SVG's order.
  public private(set) var edges: [(from: String, to: String, label: [String])] = []

  init(svg: String) {
    self.svg = svg
    let group = #/<g id="(?:node|edge)\d+" class="(node|edge)">\s*<title>(.*?)</title>(.*?)</g>/#.dotMatchesNewlines()
    for match in svg.matches(of: group) {
      let title = Self.text(match.2)
      let label = match.3.matches(of: #/<text[^>]*>(.*?)</text>/#.dotMatchesNewlines()).map { Self.text($0.1) }
      if match.1 == "node" {
        nodes[title] = label
      } else if let arrow = title.range(of: "->") {
        edges.append((String(title[..<arrow.lowerBound]), String(title[arrow.upperBound...]), label))
      }
    }
  }

  /// SVG text as the reader sees it: entities decoded, a no-break space
  /// (which Graphviz writes for some spaces) read as a space.
  static func text(_ xml: Substring) -> String {
    var out = ""
    var rest = xml[...]
    while let amp = rest.firstIndex(of: "&") {
      out += rest[..<amp]
      guard let semicolon = rest[amp...].firstIndex(of: ";") else { break }
      let entity = rest[rest.index(after: amp)..<semicolon]
      switch entity {
      case "amp": out += "&"
      case "lt": out += "<"
      case "gt": out += ">"
      case "quot": out += "\""
      case "apos": out += "'"
      default:
        let number = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : UInt32(entity.dropFirst(), radix: 10)
        guard entity.hasPrefix("#"), let number, let scalar = Unicode.Scalar(number) else {
          out += rest[amp...semicolon]
          rest = rest[rest.index(after: semicolon)...]
          continue
        }
        out.unicodeScalars.append(scalar)
      }
      rest = rest[rest.index(after: semicolon)...]
    }
    out += rest
    return out.replacingOccurrences(of: "\u{A0}", with: " ")
  }
}
