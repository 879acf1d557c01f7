import LuaKit
import LunarStore

/// One run's page: what it is, who holds it, and each step with its
/// attempts, input fingerprint, output and error.
enum RunPage {
  /// The page of `run` and its `steps`; with `actions`, the session whose
  /// token the action forms carry.
  static func html(_ run: RunRecord, steps: [StepRecord], now: StoreTimestamp, actions: SessionToken? = nil) -> String {
    var facts = [
      ("Workflow", HTML.escape(run.workflow)),
      ("Status", "<span class=\"status \(run.status.rawValue)\">\(run.status.rawValue)</span>"),
      ("File", HTML.escape(run.file)),
      ("Started", TimeText.moment(run.startedAt)),
    ]
    if let finished = run.finishedAt { facts.append(("Finished", TimeText.moment(finished))) }
    facts.append(("Duration", TimeText.span(run.startedAt, run.finishedAt, now: now)))
    facts.append(("Host", HTML.escape("pid \(run.pid) on \(run.host)")))
    if let resumed = run.resumedFrom { facts.append(("Resumes", "<a href=\"/runs/\(resumed.rawValue)\">run \(resumed.rawValue)</a>")) }
    if let stopped = run.stoppedBy { facts.append(("Stopped by", HTML.escape(stopped))) }
    if run.status == .running, !run.running.isEmpty { facts.append(("Running now", HTML.escape(run.running.map(\.lossyString).joined(separator: ", ")))) }
    if let wake = run.wakeAt { facts.append(("Wakes at", TimeText.moment(wake))) }
    let list = facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }.joined(separator: "\n")

    var rows = ""
    for step in steps.sorted(by: { $0.position < $1.position }) {
      let output = step.output.map { values in values.map(\.description).joined(separator: ", ") } ?? ""
      rows += """
        <tr><td>\(HTML.escape(step.name))</td>\
        <td class="status \(step.status.rawValue)">\(step.status.rawValue)</td>\
        <td>\(step.attempts)</td>\
        <td>\(step.startedAt.map(TimeText.moment) ?? "")</td>\
        <td>\(TimeText.span(step.startedAt, step.finishedAt, now: now))</td>\
        <td><code>\(step.fingerprint.map { String($0.hex.prefix(12)) } ?? "")</code></td>\
        <td><pre>\(HTML.escape(output))</pre></td>\
        <td><pre>\(step.error.map(HTML.escape) ?? "")</pre></td></tr>

        """
    }
    let waiting = run.plan.filter { name in !steps.contains { $0.name == name } }
    let pending =
      waiting.isEmpty
      ? "" : "<p class=\"muted\">Not run yet: \(HTML.escape(waiting.map(\.lossyString).joined(separator: ", ")))</p>"
    var forms = ""
    if let actions, [.running, .parked, .queued].contains(run.status) {
      forms = """
        <form class="actions" method="post" action="/runs/\(run.id.rawValue)/cancel">
        <input type="hidden" name="csrf" value="\(actions.value)">
        <button type="submit" id="cancel">Cancel run</button>
        </form>
        """
    }
    return Page.document(
      title: "Run \(run.id.rawValue)",
      content: """
        <h1>Run \(run.id.rawValue) <span class="muted">\(HTML.escape(run.workflow))</span></h1>
        <dl>
        \(list)
        </dl>
        \(forms)
        <h2>Steps</h2>
        <table>
        <thead><tr><th scope="col">Step</th><th scope="col">Status</th><th scope="col">Attempts</th>\
        <th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Input</th>\
        <th scope="col">Output</th><th scope="col">Error</th></tr></thead>
        <tbody>
        \(rows)</tbody>
        </table>
        \(pending)
        """)
  }
}
