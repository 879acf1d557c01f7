import LunarStore

/// The list `lunar queue ls` prints: one row per queue, by name, with how
/// many jobs it was given and how many wait, the job running and its worker,
/// the job that halted it, and how long its oldest waiting job has waited.
enum QueueTable {
  private static let table = TextTable(
    headers: ["queue", "submitted", "waiting", "running", "worker", "halted", "oldest waiting"],
    rightAligned: [1, 2, 3, 6])

  /// A queue and the places of its running and halting jobs (the summary
  /// names them by their ids in the store).
  struct Row {
    /// The queue.
    var summary: QueueSummary
    /// The place of its running job, if one runs.
    var running: Int64?
    /// The place of the failed job that halted it, if it is halted.
    var haltedBy: Int64?
  }

  /// The table of `rows`, in their order, each line ending in a newline;
  /// ages are counted to `now`.
  static func text(_ rows: [Row], now: StoreTimestamp) -> String {
    table.text(
      rows.map { row in
        let summary = row.summary
        return [
          RunText.name(summary.name), String(summary.submitted), String(summary.waiting),
          row.running.map(QueueText.place) ?? "-", summary.running == nil ? "-" : QueueText.worker(summary.runningWorker),
          row.haltedBy.map { "by " + QueueText.place($0) } ?? "-",
          summary.oldestWaitingSince.map { QueueText.age(since: $0, now: now) } ?? "-",
        ]
      })
  }
}
