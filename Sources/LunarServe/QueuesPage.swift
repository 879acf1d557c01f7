import LuaKit
import LunarStore

/// The queues page: each durable queue's head, what waits and for how long,
/// halted queues; then the workers: each one alive (or lost) and the jobs
/// it holds now.
enum QueuesPage {
  /// The page for `queues` and the `workers` the store lists; with
  /// `actions`, the session whose token a halted queue's Resume button carries.
  static func html(_ queues: [QueueSummary], workers: [WorkerPresence], now: StoreTimestamp, actions: SessionToken? = nil) -> String {
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
    let holding = WorkerHolding.of(queues)
    let listed = Dictionary(workers.map { ($0.worker.name, $0) }, uniquingKeysWith: { first, _ in first })
    // A worker holding a job but not listed is one of an older Lunar, or
    // one lost so long ago that the store forgot it.
    let names = Set(listed.keys).union(holding.keys).sorted()
    let workerRows = names.map { name in
      let presence = listed[name]
      let held = holding[name]
      return """
        <tr><th scope="row">\(HTML.escape(name))</th><td>\(presence.map { HTML.escape($0.serves) } ?? "")</td>\
        <td>\(presence.map { TimeText.moment($0.startedAt) } ?? "")</td><td>\(presence.map { heartbeatText($0, now: now) } ?? "")</td>\
        <td>\(held?.jobs ?? 0)</td><td>\(leaseText(held?.leaseEnds, now: now))</td></tr>
        """
    }.joined(separator: "\n")
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
      names.isEmpty
      ? "<p class=\"muted\">No worker is running.</p>"
      : """
      <table>
      <thead><tr><th scope="col">Worker (host:pid)</th><th scope="col">Serves</th><th scope="col">Started</th>\
      <th scope="col">Last heartbeat</th><th scope="col">Jobs held</th><th scope="col">Lease ends</th></tr></thead>
      <tbody>
      \(workerRows)
      </tbody>
      </table>
      """
    return Page.document(title: "Queues", content: "<h1>Queues</h1>\n\(queueTable)\n<h2>Workers</h2>\n\(workerTable)")
  }

  /// How long ago a worker last said it is alive; once its lease ended
  /// without a heartbeat, it is lost (it most likely died without stopping).
  private static func heartbeatText(_ presence: WorkerPresence, now: StoreTimestamp) -> String {
    let ago = "\(TimeText.duration(max(0, presence.seenAt.seconds(until: now)))) ago"
    return presence.isLost(at: now) ? "<span class=\"status failed\">\(ago): lost</span>" : ago
  }

  /// When the soonest of a worker's leases ends: a lease that ended says
  /// its worker stopped heartbeating (most likely it died), and the next
  /// claim takes its job over.
  private static func leaseText(_ end: StoreTimestamp?, now: StoreTimestamp) -> String {
    guard let end else { return "" }
    let left = now.seconds(until: end)
    return left >= 0
      ? "in \(TimeText.duration(left))"
      : "<span class=\"status failed\">ended \(TimeText.duration(-left)) ago: no heartbeat</span>"
  }

  /// The jobs a worker holds and the soonest of their leases' ends.
  private struct WorkerHolding {
    var jobs = 0
    var leaseEnds: StoreTimestamp?

    static func of(_ queues: [QueueSummary]) -> [String: WorkerHolding] {
      var holding: [String: WorkerHolding] = [:]
      for queue in queues {
        guard let worker = queue.runningWorker else { continue }
        var held = holding[worker.name] ?? WorkerHolding()
        held.jobs += 1
        if let end = queue.runningLeaseExpiresAt { held.leaseEnds = min(held.leaseEnds ?? end, end) }
        holding[worker.name] = held
      }
      return holding
    }
  }
}
