/// Names that drawings have to keep apart and show as they are: alike once
/// slugged (`a-b`, `a_b`, `a b`), keywords of Mermaid and DOT, quotes,
/// backslashes, the characters Mermaid's lexers stop at, spaces at the
/// ends, non-ASCII text (composed and decomposed é), NUL and invalid UTF-8.
public enum HostileNames {
  /// Each name's bytes, and how a drawing shows it (text, or its bytes
  /// escaped as in a Lua literal when it is not plain text).
  public static let all: [(bytes: [UInt8], display: String)] = [
    ("a-b", "a-b"), ("a_b", "a_b"), ("a b", "a b"), ("n_a_b", "n_a_b"), ("n_a_b_2", "n_a_b_2"),
    ("end", "end"), ("End", "End"), ("state", "state"), ("default", "default"), ("defaultState", "defaultState"),
    ("classic", "classic"), ("graph", "graph"), ("node", "node"), ("subgraph", "subgraph"), ("__start", "__start"),
    ("[*]", "[*]"), ("q\"uote", "q\"uote"), ("\"", "\""), ("x:y;z", "x:y;z"), ("50%%", "50%%"), ("#quot;", "#quot;"),
    ("<b>bold</b>", "<b>bold</b>"), ("x&amp;y", "x&amp;y"), ("back\\slash", "back\\slash"), ("trailing\\", "trailing\\"),
    ("direction TB", "direction TB"), (" lead", " lead"), ("trail ", "trail "), ("x [[fork]]", "x [[fork]]"),
    ("{brace}", "{brace}"), ("`tick`", "`tick`"), ("Straße", "Straße"), ("日本語", "日本語"), ("\u{2028}sep", "\u{2028}sep"),
    ("\u{FB02}\u{B0}quot\u{B6}\u{DF}", "\u{FB02}\u{B0}quot\u{B6}\u{DF}"),
  ].map { (Array($0.0.utf8), $0.1) } + [
    ([0xC3, 0xA9], "\u{E9}"), ([0x65, 0xCC, 0x81], "e\u{301}"),
    ([0x62, 0x00, 0x63], "b\\0c"), ([0xFE], "\\254"), (Array("line\nbreak".utf8), "line\\nbreak"),
    (Array("tab\there".utf8), "tab\\there"),
  ]

  /// `bytes` as a Lua string literal.
  public static func lua(_ bytes: [UInt8]) -> String {
    "\"" + bytes.map { "\\\($0)" }.joined() + "\""
  }
}
