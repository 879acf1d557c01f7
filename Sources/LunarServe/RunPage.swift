import LuaKit
import LunarStore

/// One run's page: what it is, who holds it, what it waits for, its step
/// graph, a timeline of its steps, and each step with what it needs, its
/// attempts, input fingerprint, output, error and a link to its logs.
enum RunPage {
  /// The page of `run`, its `steps` and the `waits` of its sleep and wait
  /// steps, with `graph` drawn; with `actions`, the session whose token the
  /// action forms carry.
  static func html(
    _ run: RunRecord, steps: [StepRecord], waits: [StepWait] = [], graph: RunGraph.Drawing? = nil, now: StoreTimestamp,
    actions: SessionToken? = nil
  ) -> String {
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
    let open = [.running, .parked, .queued].contains(run.status)
    let done = Set(steps.map(\.name))
    let waiting = waits.filter { !done.contains($0.name) }
    if open, !waiting.isEmpty {
      let text = waiting.map { wait in
        let (microseconds, overflow) = wait.deadlineMilliseconds.multipliedReportingOverflow(by: 1000)
        return "\(HTML.escape(wait.name)) until \(overflow ? "a time out of range" : TimeText.moment(StoreTimestamp(microseconds: microseconds)))"
      }
      facts.append(("Waiting", text.joined(separator: "<br>")))
    }
    let list = facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }.joined(separator: "\n")

    let needs = Self.needs(run.plan)
    // A fan-out's children under their step (a declared step may be named `x[1]` too).
    let parents = Set(steps.filter { StepRecord.childIndex(of: $0.name) == nil }.map(\.position))
    var rows = ""
    for step in StepRecord.inItemOrder(steps) {
      let output = step.output.map { values in values.map(\.description).joined(separator: ", ") } ?? ""
      let child = StepRecord.childIndex(of: step.name) != nil && parents.contains(step.position)
      rows += """
        <tr id="\(rowID(step.name))"\(child ? " class=\"child\"" : "")><th scope="row">\(HTML.escape(step.name))</th>\
        <td>\(HTML.escape((needs[step.name] ?? []).map(\.lossyString).joined(separator: ", ")))</td>\
        <td class="status \(step.status.rawValue)">\(step.status.rawValue)</td>\
        <td>\(step.attempts)</td>\
        <td>\(step.startedAt.map(TimeText.moment) ?? "")</td>\
        <td>\(TimeText.span(step.startedAt, step.finishedAt, now: now))</td>\
        <td><code>\(step.fingerprint.map { String($0.hex.prefix(12)) } ?? "")</code></td>\
        <td><pre>\(HTML.escape(output))</pre></td>\
        <td><pre>\(step.error.map(HTML.escape) ?? "")</pre></td>\
        <td><a href="/runs/\(run.id.rawValue)/logs?step=\(HexName.encode(step.name))">logs</a></td></tr>

        """
    }
    let notRun = run.plan.filter { !done.contains($0) }
    let pending =
      notRun.isEmpty
      ? "" : "<p class=\"muted\">Not run yet: \(HTML.escape(notRun.map(\.lossyString).joined(separator: ", ")))</p>"
    var forms = ""
    if let actions, open {
      forms =
        Page.actionForm("/runs/\(run.id.rawValue)/cancel", session: actions, label: "Cancel run", id: "cancel") + "\n"
        + signalForm(run.id, session: actions)
    } else if let actions {
      if [.failed, .cancelled, .interrupted].contains(run.status) {
        forms = Page.actionForm("/runs/\(run.id.rawValue)/resume", session: actions, label: "Resume run", id: "resume") + "\n"
      }
      let names = run.plan.isEmpty ? steps.sorted { $0.position < $1.position }.map(\.name) : Array(run.plan)
      if !names.isEmpty { forms += rerunForm(run.id, steps: names, session: actions) }
    }
    let (bars, leftOut) = StepTimeline.bars(steps, now: now)
    let timeline = bars.isEmpty ? "" : "<h2>Timeline</h2>\n" + StepTimeline.svg(bars, leftOut: leftOut)
    var drawn = ""
    switch graph {
    case .svg(let svg): drawn = "<h2>Graph</h2>\n<figure class=\"run-graph\" aria-label=\"The run's steps and what each needs\">\(svg)</figure>"
    case .unavailable(let reason): drawn = "<h2>Graph</h2>\n<p class=\"muted\">\(HTML.escape(reason))</p>"
    case nil: break
    }
    return Page.document(
      title: "Run \(run.id.rawValue)",
      content: """
        <h1>Run \(run.id.rawValue) <span class="muted">\(HTML.escape(run.workflow))</span></h1>
        <dl>
        \(list)
        </dl>
        \(forms)
        \(drawn)
        \(timeline)
        <h2>Steps</h2>
        <table>
        <thead><tr><th scope="col">Step</th><th scope="col">Needs</th><th scope="col">Status</th><th scope="col">Attempts</th>\
        <th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Input</th>\
        <th scope="col">Output</th><th scope="col">Error</th><th scope="col">Logs</th></tr></thead>
        <tbody>
        \(rows)</tbody>
        </table>
        \(pending)
        <p><a href="/runs/\(run.id.rawValue)/logs">All logs of this run</a></p>
        """)
  }

  /// The id of a step's row, which its node in the graph links to.
  static func rowID(_ step: LuaString) -> String { "step-" + HexName.encode(step) }

  /// What each planned step needs, by name (none if not recorded).
  private static func needs(_ plan: RunPlan) -> [LuaString: [LuaString]] {
    guard let needs = plan.needs else { return [:] }
    return Dictionary(plan.indices.map { (plan[$0], needs[$0].map { plan[$0] }) }, uniquingKeysWith: { first, _ in first })
  }

  /// The form that submits a rerun of the run from one of its `steps`, as
  /// `lunar submit --resume RUN --force STEP` does: that step and what
  /// needs it run again, the rest is reused where unchanged.
  private static func rerunForm(_ run: RunID, steps: [LuaString], session: SessionToken) -> String {
    let options = steps.map { "<option value=\"\(HexName.encode($0))\">\(HTML.escape($0))</option>" }.joined()
    return """
      <form class="rerun" method="post" action="/runs/\(run.rawValue)/rerun">\
      <input type="hidden" name="csrf" value="\(session.value)">
      <label>Rerun from step <select name="step">\(options)</select></label>
      <button type="submit" id="rerun">Rerun</button></form>
      """
  }

  /// The form that sends the run a signal, as `lunar runs signal` does: a
  /// name and a JSON value.
  private static func signalForm(_ run: RunID, session: SessionToken) -> String {
    """
      <form class="signal" method="post" action="/runs/\(run.rawValue)/signal">\
      <input type="hidden" name="csrf" value="\(session.value)">
      <label>Signal <input name="signal" required></label>
      <label>Value (JSON; empty sends true) <input name="value"></label>
      <button type="submit" id="send-signal">Send signal</button></form>
      """
  }
}
