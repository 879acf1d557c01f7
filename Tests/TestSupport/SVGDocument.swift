import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// An SVG file read by Foundation's XML parser, as any XML reader would
/// read it: its root element, how many of each element it holds, and the
/// text of its `<title>` and `<text>` elements (entities decoded).
public struct SVGDocument {
  /// The XML parser refused the file.
  public struct Malformed: Error, CustomStringConvertible {
    public let description: String
  }

  /// The root element's name.
  public let root: String
  /// How many elements of each name, the root included.
  public let counts: [String: Int]
  /// Each `<title>` element's text, in document order.
  public let titles: [String]
  /// Each `<text>` element's text, in document order.
  public let texts: [String]

  /// Parses `data`; throws if it is not well-formed XML.
  public init(_ data: Data) throws {
    let reader = Reader()
    let parser = XMLParser(data: data)
    parser.delegate = reader
    guard parser.parse(), let root = reader.root else {
      throw Malformed(description: "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "no root element")")
    }
    self.root = root
    counts = reader.counts
    titles = reader.titles
    texts = reader.texts
  }

  private final class Reader: NSObject, XMLParserDelegate {
    var root: String?
    var counts: [String: Int] = [:]
    var titles: [String] = []
    var texts: [String] = []
    private var open: [String] = []
    private var text = ""

    func parser(
      _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
      attributes: [String: String] = [:]
    ) {
      if root == nil { root = name }
      counts[name, default: 0] += 1
      open.append(name)
      text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
      if name == "title" { titles.append(text) }
      if name == "text" { texts.append(text) }
      open.removeLast()
      text = ""
    }
  }
}
