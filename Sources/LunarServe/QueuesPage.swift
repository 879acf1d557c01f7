import LuaKit
import LunarStore

/// The queues page: each durable queue's head, what waits and for how long,
/// halted queues; then the workers holding jobs now.
enum QueuesPage {
  /// The page for `queues`; with `actions`, the session whose token a
  /// halted queue's Resume button carries.
  static func html(_ queues: [QueueSummary], now: StoreTimestamp, actions: SessionToken? = nil) -> String {
    var rows = ""
    for queue in queues.sorted(by: { $0.name.bytes.lexicographicallyPrecedes($1.name.bytes) }) {
      var state =
        queue.haltedBy.map { "<span class=\"status failed\">halted by job \($0.rawValue)</span>" }
        ?? (queue.running != nil ? "<span class=\"status running\">running</span>" : "<span class=\"muted\">idle</span>")
      if queue.haltedBy != nil, let actions {
        state +=
          " "
          + Page.actionForm(
            "/queues/resume", session: actions, fields: [("queue", HexName.encode(queue.name))], label: "Resume",
            spoken: "Resume queue \(queue.name.lossyString)")
      }
      rows += """
        <tr><td>\(HTML.escape(queue.name))</td><td>\(state)</td><td>\(queue.waiting)</td>\
        <td>\(queue.oldestWaitingSince.map { TimeText.duration($0.seconds(until: now)) } ?? "")</td>\
        <td>\(queue.running.map { "job \($0.rawValue)" } ?? "")</td>\
        <td>\(queue.runningWorker.map { HTML.escape($0.name) } ?? "")</td><td>\(queue.submitted)</td></tr>

        """
    }
    var holding: [String: Int] = [:]
    for queue in queues { if let worker = queue.runningWorker { holding[worker.name, default: 0] += 1 } }
    let workers = holding.keys.sorted().map { "<tr><td>\(HTML.escape($0))</td><td>\(holding[$0]!)</td></tr>" }.joined(separator: "\n")
    let queueTable =
      queues.isEmpty
      ? "<p>No durable queues in this store.</p>"
      : """
      <table>
      <thead><tr><th scope="col">Queue</th><th scope="col">State</th><th scope="col">Waiting</th>\
      <th scope="col">Oldest waiting</th><th scope="col">Head</th><th scope="col">Worker</th><th scope="col">Submitted</th></tr></thead>
      <tbody>
      \(rows)</tbody>
      </table>
      """
    let workerTable =
      holding.isEmpty
      ? "<p class=\"muted\">No worker holds a job now.</p>"
      : """
      <table>
      <thead><tr><th scope="col">Worker (host:pid)</th><th scope="col">Jobs held</th></tr></thead>
      <tbody>
      \(workers)
      </tbody>
      </table>
      """
    return Page.document(title: "Queues", content: "<h1>Queues</h1>\n\(queueTable)\n<h2>Workers</h2>\n\(workerTable)")
  }
}
