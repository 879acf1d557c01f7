/// A Mermaid gantt chart read as Mermaid reads it. No Mermaid runs here (it
/// needs npm, which this machine cannot reach), so this applies the rules
/// of Mermaid's own grammar (`packages/mermaid/src/diagrams/gantt/parser/
/// gantt.jison`) that a chart's text meets:
///
/// - before parsing, every entity code `#name;` or `#123;` is set aside
///   (`mermaidAPI`'s `encodeEntities`), and put back as an HTML entity in
///   the drawing; lines matching `style.*:\S*#.*;` lose their last `;`;
/// - the lexer ignores case and takes the first of its rules that matches,
///   in their order: comments (`%%`, any character but `}` then `%`, `#`),
///   line breaks, blanks, `click`/`href`/`call`, the keywords (`gantt`,
///   `dateFormat` and the rest), a date `dddd-dd-dd`, `title`,
///   `accDescription`, `section` (up to `#`, `:`, `;`, a line break), a
///   task's text (`[^#:\n;]+`), its data (`:[^#\n;]+`);
/// - a statement is a keyword's line or a task's text followed at once by
///   its data, whose leading words `active`, `done`, `crit`, `milestone`
///   are tags and whose two last parts are its start and end.
public struct MermaidGantt {
  /// One task (a bar or a milestone).
  public struct Task: Equatable {
    /// Its text as the drawing shows it (trimmed, then entities decoded).
    public var text: String
    /// Its text as written.
    public var raw: String
    /// Its tags, in order.
    public var tags: [String]
    /// Its start and end, as written.
    public var start: String
    public var end: String
  }

  /// The title from the front matter, as written after `title: `.
  public private(set) var title: String?
  /// The `dateFormat` statement's value.
  public private(set) var dateFormat: String?
  /// The `axisFormat` statement's value.
  public private(set) var axisFormat: String?
  /// Each section's name and tasks, in order.
  public private(set) var sections: [(name: String, tasks: [Task])] = []
  /// The tokens as the lexer read them (kind and text), for a test to see.
  public private(set) var tokens: [(kind: String, text: String)] = []
  /// What the grammar would refuse, or what the chart does not mean to
  /// say (a comment, a statement it did not write): empty for a good chart.
  public private(set) var problems: [String] = []

  /// Every task, section after section.
  public var tasks: [Task] { sections.flatMap(\.tasks) }

  /// Reads `text`, a chart with its front matter.
  public init(_ text: String) {
    var body = Substring(text)
    if body.hasPrefix("---\n"), let close = body.dropFirst(4).firstRange(of: "\n---\n") {
      for line in body[body.index(body.startIndex, offsetBy: 4)..<close.lowerBound].split(separator: "\n") {
        if line.hasPrefix("title: ") { title = String(line.dropFirst(7)) }
      }
      body = body[close.upperBound...]
    }
    tokens = Self.lex(Self.encodeEntities(String(body)))
    parse()
  }

  // MARK: Mermaid's steps

  /// `encodeEntities`: entity codes become `ﬂ°°123¶ß` / `ﬂ°name¶ß`.
  static func encodeEntities(_ text: String) -> String {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    for index in lines.indices
    where lines[index].contains(#/style.*:\S*#.*;/#) || lines[index].contains(#/classDef.*:\S*#.*;/#) {
      // Mermaid drops the last character of the match (a `;`).
      if let match = lines[index].firstMatch(of: #/(?:style|classDef).*:\S*#.*;/#) {
        lines[index].replaceSubrange(match.range, with: match.output.dropLast())
      }
    }
    return lines.joined(separator: "\n").replacing(#/#(\w+);/#) { match in
      match.1.allSatisfy { $0.isASCII && $0.isNumber } ? "\u{FB02}\u{B0}\u{B0}\(match.1)\u{B6}\u{DF}" : "\u{FB02}\u{B0}\(match.1)\u{B6}\u{DF}"
    }
  }

  /// The lexer's rules, in its order (`%options case-insensitive`).
  private static var rules: [(kind: String, pattern: Regex<Substring>)] {
    [
    ("directive", #/%%\{/#), ("accTitle", #/accTitle\s*:\s*/#), ("accDescr", #/accDescr\s*[:{]\s*/#),
    ("comment", #/%%[^\n]*/#), ("comment", #/[^}]%%*[^\n]*/#), ("comment", #/%%*[^\n]*\n*/#),
    ("NL", #/\n+/#), ("blank", #/\s+/#), ("comment", #/#[^\n]*/#),
    ("href", #/href\s+"/#), ("call", #/call\s+/#), ("click", #/click\s+/#),
    ("gantt", #/gantt/#), ("dateFormat", #/dateFormat\s[^#\n;]+/#), ("inclusiveEndDates", #/inclusiveEndDates/#),
    ("topAxis", #/topAxis/#), ("axisFormat", #/axisFormat\s[^#\n;]+/#), ("tickInterval", #/tickInterval\s[^#\n;]+/#),
    ("includes", #/includes\s[^#\n;]+/#), ("excludes", #/excludes\s[^#\n;]+/#),
    ("todayMarker", #/todayMarker\s[^\n;]+/#), ("weekday", #/weekday\s[^#\n;]+/#),
    ("date", #/\d\d\d\d-\d\d-\d\d/#), ("title", #/title\s[^#\n;]+/#),
    ("accDescription", #/accDescription\s[^#\n;]+/#), ("section", #/section\s[^#:\n;]+/#),
    ("taskTxt", #/[^#:\n;]+/#), ("taskData", #/:[^#\n;]+/#), (":", #/:/#), ("INVALID", #/./#),
    ].map { ($0.0, $0.1.ignoresCase().dotMatchesNewlines(false)) }
  }

  static func lex(_ text: String) -> [(kind: String, text: String)] {
    var tokens: [(kind: String, text: String)] = []
    let rules = rules
    var rest = Substring(text)
    while !rest.isEmpty {
      guard let (kind, match) = rules.lazy.compactMap({ rule in rest.prefixMatch(of: rule.pattern).map { (rule.kind, $0.output) } }).first,
        !match.isEmpty
      else {
        tokens.append(("INVALID", String(rest.prefix(1))))
        rest = rest.dropFirst()
        continue
      }
      if kind != "blank" { tokens.append((kind, String(match))) }
      rest = rest[match.endIndex...]
    }
    return tokens
  }

  private mutating func parse() {
    var index = 0
    guard tokens.first?.kind == "gantt" else {
      problems.append("the chart does not begin with gantt: \(tokens.first.map { "\($0)" } ?? "nothing")")
      return
    }
    index = 1
    while index < tokens.count {
      let token = tokens[index]
      index += 1
      switch token.kind {
      case "NL": continue
      case "dateFormat": dateFormat = String(token.text.dropFirst(11))
      case "axisFormat": axisFormat = String(token.text.dropFirst(11))
      case "todayMarker": continue
      case "section": sections.append((String(token.text.dropFirst(8)), []))
      case "taskTxt":
        guard index < tokens.count, tokens[index].kind == "taskData" else {
          problems.append("task text \(token.text.debugDescription) is not followed by its data")
          continue
        }
        let data = tokens[index].text
        index += 1
        guard !sections.isEmpty else {
          problems.append("task \(token.text.debugDescription) is in no section")
          continue
        }
        sections[sections.count - 1].tasks.append(Self.task(token.text, data: data))
      default:
        problems.append("unexpected \(token.kind) \(token.text.debugDescription)")
      }
    }
  }

  /// `addTask`: the data's leading tags, then (for two parts) start and end.
  private static func task(_ text: String, data: String) -> Task {
    var parts = data.dropFirst().split(separator: ",", omittingEmptySubsequences: false).map {
      String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
    var tags: [String] = []
    while let first = parts.first, ["active", "done", "crit", "milestone"].contains(first.lowercased()) {
      tags.append(first)
      parts.removeFirst()
    }
    let start = parts.count == 2 ? parts[0] : ""
    let end = parts.count == 2 ? parts[1] : parts.joined(separator: ",")
    // The spaces around the text as written are not the name's; spaces
    // written as entity codes are.
    let trimmed = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    return Task(text: decodeEntities(trimmed), raw: text, tags: tags, start: start, end: end)
  }

  /// What the drawing shows for `text`: the set-aside entities decoded.
  static func decodeEntities(_ text: String) -> String {
    text.replacing(#/\u{FB02}\u{B0}(\u{B0}?)(\w+)\u{B6}\u{DF}/#) { match -> String in
      if !match.1.isEmpty, let value = UInt32(match.2), let scalar = Unicode.Scalar(value) { return String(scalar) }
      switch match.2 {
      case "quot": return "\""
      case "amp": return "&"
      case "lt": return "<"
      case "gt": return ">"
      case "apos": return "'"
      default: return "&\(match.2);"
      }
    }
  }
}
