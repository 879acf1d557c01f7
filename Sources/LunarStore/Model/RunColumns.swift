/// The `run` table's columns in the order both SQL stores read them, so a
/// run read by `readRun` and a submitted run read by `readSubmitted` agree
/// on every position.
enum RunColumns {
  /// The columns a `RunRecord` is read from, in its order.
  static let record = [
    "id", "workflow", "file", "arguments", "status", "started_at", "finished_at", "resumed_from", "host", "pid", "owner",
    "owned_since", "lease_expires_at", "cancel_request", "stopped_by", "plan", "running", "wake_at", "plan_needs",
    "force",
  ]

  /// The columns a submitted run adds after `record`'s.
  static let submission = ["file_fingerprint", "submit_key", "schedule", "takeovers"]

  /// The position of the first of `submission`'s columns.
  static let firstSubmissionColumn = record.count

  /// `record`'s columns, each prefixed with `table`.
  static func record(of table: String) -> String {
    record.map { table + "." + $0 }.joined(separator: ", ")
  }

  /// `record`'s then `submission`'s columns, unqualified (for RETURNING).
  static let submitted = (record + submission).joined(separator: ", ")
}
