/// A failure reported by libpq or the server: one line of its own words,
/// and the SQLSTATE code when the server sent one.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The server's five-character SQLSTATE (`23503`, `42P01`); empty for a
  /// failure of the connection itself.
  public var state: String
  /// What went wrong, on one line (`relation "run" does not exist`).
  public var message: String

  /// An error with `state` and `message` (folded onto one line).
  public init(state: String = "", message: String) {
    self.state = state
    self.message = Self.oneLine(message)
  }

  /// `foreign_key_violation`: a row names a row that does not exist.
  static let foreignKeyViolation = "23503"

  public var description: String { message }

  /// libpq's messages end with a newline and put hints on lines of their
  /// own ("\n\tIs the server running on that host...?"); a lost connection
  /// is told twice (on sending and on reading), so a line is kept once.
  static func oneLine(_ text: String) -> String {
    var seen: Set<Substring> = []
    return text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }
      .filter { !$0.isEmpty && seen.insert($0).inserted }.joined(separator: " ")
  }
}

extension Substring {
  fileprivate func trimmingWhitespace() -> Substring {
    var text = self
    while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
    while let last = text.last, last == " " || last == "\t" { text.removeLast() }
    return text
  }
}
