/// Several SVG documents, as Graphviz writes them, stacked top to bottom in
/// one document: each becomes a nested `<svg>` placed below the one before.
enum SVGStack {
  /// A document that is not as Graphviz writes it.
  struct Unreadable: Error, Sendable {
    let reason: String
  }

  /// The space between two pictures, in points.
  static let gap = 16.0

  /// One document holding `documents` (UTF-8 SVG), in order.
  static func stacking(_ documents: [[UInt8]]) throws(Unreadable) -> [UInt8] {
    var pictures: [String] = []
    var width = 0.0
    var height = 0.0
    for document in documents {
      let text = String(decoding: document, as: UTF8.self)
      // Graphviz's root element; what precedes it (the XML declaration,
      // its DOCTYPE and comments) belongs to the outer document only.
      guard let start = text.firstRange(of: "<svg "), let end = text[start.upperBound...].firstIndex(of: ">") else {
        throw Unreadable(reason: "a picture has no <svg> element")
      }
      let tag = text[start.lowerBound...end]
      guard let pictureWidth = points(attribute("width", of: tag)), let pictureHeight = points(attribute("height", of: tag))
      else {
        throw Unreadable(reason: "a picture's <svg> element has no width and height in points")
      }
      let viewBox = attribute("viewBox", of: tag).map { " viewBox=\"\($0)\"" } ?? ""
      if !pictures.isEmpty { height += gap }
      // Plain numbers: in the outer picture's user space one unit is a point.
      let placed = "<svg x=\"0\" y=\"\(number(height))\" width=\"\(number(pictureWidth))\" height=\"\(number(pictureHeight))\"\(viewBox)>"
      var body = String(text[text.index(after: end)...])
      while body.last?.isWhitespace == true { body.removeLast() }
      pictures.append(placed + body)
      width = max(width, pictureWidth)
      height += pictureHeight
    }
    let size = "width=\"\(number(width))pt\" height=\"\(number(height))pt\" viewBox=\"0 0 \(number(width)) \(number(height))\""
    let document =
      ["<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>",
       "<!-- Drawn by lunar graph through Graphviz's dot: \(pictures.count) pictures, top to bottom -->",
       "<svg \(size) xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">",
       // White as each picture's own background is, gaps included.
       "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>"]
      + pictures + ["</svg>", ""]
    return Array(document.joined(separator: "\n").utf8)
  }

  /// The value of `name="..."` in a start tag.
  private static func attribute(_ name: String, of tag: Substring) -> Substring? {
    var rest = tag
    while let found = rest.firstRange(of: name + "=\"") {
      let before = rest[..<found.lowerBound].last
      rest = rest[found.upperBound...]
      guard before?.isWhitespace == true, let close = rest.firstIndex(of: "\"") else { continue }
      return rest[..<close]
    }
    return nil
  }

  /// A length Graphviz writes (`406pt`, or plain points), in points.
  private static func points(_ length: Substring?) -> Double? {
    guard var length else { return nil }
    if length.hasSuffix("pt") { length = length.dropLast(2) }
    return Double(length)
  }

  /// `value` without a needless `.0`.
  private static func number(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
  }
}
