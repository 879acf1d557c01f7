/// Why a cron expression was refused: the field, the text in it, and what
/// is wrong (`cron: minute field '61': 61 is out of range 0-59`).
public struct CronError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The field at fault (`minute`, `day of week`), or nil for the whole expression.
  public var field: String?
  /// The text that is wrong, as written.
  public var text: String
  /// What is wrong with it.
  public var reason: String

  /// A refusal of `text` in `field` for `reason`.
  public init(field: String?, text: String, reason: String) {
    self.field = field
    self.text = text
    self.reason = reason
  }

  public var description: String {
    if let field { return "cron: \(field) field '\(text)': \(reason)" }
    return "cron: '\(text)': \(reason)"
  }
}
