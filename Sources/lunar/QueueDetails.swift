import LuaKit
import LunarStore

/// What `lunar queue show NAME` prints: the queue at a glance, then its
/// newest jobs, newest first, each with its status, attempts, worker and
/// times, and under it its output or error (or, while it runs, its lease).
enum QueueDetails {
  private static let table = TextTable(
    headers: ["job", "action", "status", "attempts", "worker", "enqueued", "started", "finished", "duration"],
    rightAligned: [0, 3, 8])

  /// The text for the queue of `row` and its newest `jobs`; the lease of a
  /// running job is told against `now`.
  static func text(_ row: QueueTable.Row, jobs: [JobRecord], now: StoreTimestamp) -> String {
    let summary = row.summary
    var running = "-"
    if let place = row.running { running = QueueText.place(place) + " (worker \(QueueText.worker(summary.runningWorker)))" }
    var header: [(String, String)] = [
      ("queue", RunText.name(summary.name)),
      ("submitted", String(summary.submitted)),
      ("waiting", String(summary.waiting)),
      ("running", running),
      ("halted", row.haltedBy.map { "by " + QueueText.place($0) + " (lunar queue resume lets it go on)" } ?? "no"),
    ]
    if let since = summary.oldestWaitingSince {
      header.insert(("oldest waiting", QueueText.age(since: since, now: now)), at: 3)
    }
    let labelWidth = header.map(\.0.count).max() ?? 0
    var text = header.map { label, value in
      label + String(repeating: " ", count: labelWidth - label.count) + "  " + value + "\n"
    }.joined()
    text += "\n"
    let rows = jobs.map { job in
      [
        QueueText.place(job.sequence), RunText.name(job.action), job.status.rawValue, String(job.attempts),
        QueueText.worker(job.worker), RunText.localTime(job.enqueuedAt), job.startedAt.map(RunText.localTime) ?? "-",
        job.finishedAt.map(RunText.localTime) ?? "-", duration(of: job, now: now),
      ]
    }
    text += table.text(rows) { index in lines(under: jobs[index], now: now) }
    if summary.submitted > jobs.count {
      text += "\n(the newest \(jobs.count) of \(summary.submitted) jobs; --limit N shows more)\n"
    }
    return text
  }

  /// How long `job` ran, or has run so far; `-` if it never started.
  private static func duration(of job: JobRecord, now: StoreTimestamp) -> String {
    guard job.status != .cancelled else { return "-" }
    return RunText.duration(from: job.startedAt, to: job.status == .running ? now : job.finishedAt)
  }

  /// A running job's lease, or a finished job's output or error.
  private static func lines(under job: JobRecord, now: StoreTimestamp) -> String {
    let indent = 4
    guard job.status == .running, let lease = job.leaseExpiresAt else { return QueueText.result(of: job, indent: indent) }
    let margin = String(repeating: " ", count: indent)
    if lease < now {
      return margin + "lease: ended \(RunText.localTime(lease)); its worker is presumed lost and the next claim runs it again\n"
    }
    return margin + "lease: until \(RunText.localTime(lease))\n"
  }
}
