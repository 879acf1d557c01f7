import LuaKit

/// The node ids of one drawing, one per name, told apart by the names'
/// bytes: unique, and safe in Mermaid and DOT whatever the name.
///
/// A plain name (an ASCII letter, then letters, digits and `_`, at most 64
/// of them, and no keyword of Mermaid's lexers) is its own id, so common
/// drawings read as their source. Any other name gets `n_` and an ASCII
/// slug of it (`a-b` and `a b` become `n_a_b`), with `_2`, `_3`... when
/// that is taken; the drawing shows such a name in a label. Nothing made
/// this way starts with `_` (DOT's `__start` node is free) or with a
/// keyword.
struct GraphIdentifiers {
  private var ids: [LuaString: String] = [:]
  private var taken: Set<LuaString> = []

  /// Ids for `names`: plain names first, so that each keeps its own.
  init(_ names: [LuaString]) {
    for name in names where Self.isPlain(name) { _ = id(for: name) }
    for name in names { _ = id(for: name) }
  }

  /// The id of `name`, made on first use.
  mutating func id(for name: LuaString) -> String {
    if let id = ids[name] { return id }
    var id = Self.isPlain(name) ? String(decoding: name.bytes, as: UTF8.self) : Self.slug(name)
    if taken.contains(LuaString(id)) {
      let base = Self.slug(name)
      var suffix = 2
      while taken.contains(LuaString("\(base)_\(suffix)")) { suffix += 1 }
      id = "\(base)_\(suffix)"
    }
    taken.insert(LuaString(id))
    ids[name] = id
    return id
  }

  /// True if `name`'s id can be the name itself.
  static func isPlain(_ name: LuaString) -> Bool {
    guard name.bytes.count <= 64, let first = name.bytes.first, isLetter(first),
      name.bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") })
    else { return false }
    let lowered = String(decoding: name.bytes, as: UTF8.self).lowercased()
    return !reservedWords.contains(lowered) && !reservedPrefixes.contains { lowered.hasPrefix($0) }
  }

  /// Words Mermaid's lexers take as keywords when they stand alone (the
  /// state diagram's in any case; an id is followed by a space or a line
  /// end, which some of these rules need).
  private static let reservedWords: Set<String> = [
    "end", "state", "statediagram", "note", "scale", "direction", "hide", "as", "call", "click", "href",
  ]

  /// Keywords Mermaid's lexers match at the start of a longer word (no
  /// word boundary in their rules), so an id must not begin with them.
  private static let reservedPrefixes = [
    "default", "style", "linkstyle", "interpolate", "classdef", "class", "graph", "flowchart", "subgraph",
    "acctitle", "accdescr",
  ]

  /// `n_` and the name's ASCII letters and digits, every other run of
  /// bytes one `_`, at most 32 characters of it.
  private static func slug(_ name: LuaString) -> String {
    var slug = ""
    var gap = false
    for byte in name.bytes where slug.utf8.count < 32 {
      if isLetter(byte) || isDigit(byte) {
        if gap && !slug.isEmpty { slug += "_" }
        slug.unicodeScalars.append(Unicode.Scalar(byte))
        gap = false
      } else {
        gap = true
      }
    }
    return slug.isEmpty ? "n" : "n_" + slug
  }

  private static func isLetter(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
  }

  private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
