import LuaKit
import LunarStore

/// The runs page: newest first, filtered by workflow and status.
enum RunsPage {
  /// How many runs one page lists.
  static let pageSize = 100

  /// The page for `runs` (already filtered), with the filter's values.
  static func html(_ runs: [RunSummary], workflow: String?, status: RunStatus?, now: StoreTimestamp) -> String {
    var rows = ""
    for summary in runs {
      let run = summary.run
      let steps = [
        (summary.succeeded, "succeeded"), (summary.failed, "failed"), (summary.reused, "reused"),
        (summary.skipped, "skipped"),
      ].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
      rows += """
        <tr><td><a href="/runs/\(run.id.rawValue)">\(run.id.rawValue)</a></td>\
        <td>\(HTML.escape(run.workflow))</td>\
        <td class="status \(run.status.rawValue)">\(run.status.rawValue)</td>\
        <td>\(TimeText.moment(run.startedAt))</td>\
        <td>\(TimeText.span(run.startedAt, run.finishedAt, now: now))</td>\
        <td>\(HTML.escape(steps))</td>\
        <td>\(HTML.escape(owner(run)))</td></tr>

        """
    }
    let options = ([""] + RunStatus.allCases.map(\.rawValue)).map { value in
      let selected = value == (status?.rawValue ?? "") ? " selected" : ""
      return "<option value=\"\(value)\"\(selected)>\(value.isEmpty ? "any" : value)</option>"
    }.joined()
    let table =
      runs.isEmpty
      ? "<p>No runs match.</p>"
      : """
      <table>
      <caption class="muted">Newest first, at most \(pageSize)</caption>
      <thead><tr><th scope="col">Run</th><th scope="col">Workflow</th><th scope="col">Status</th>\
      <th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Steps</th><th scope="col">Owner</th></tr></thead>
      <tbody>
      \(rows)</tbody>
      </table>
      """
    return Page.document(
      title: "Runs",
      content: """
        <h1>Runs</h1>
        <form class="filters" method="get" action="/">
        <label>Workflow <input name="workflow" value="\(HTML.escape(workflow ?? ""))"></label>
        <label>Status <select name="status">\(options)</select></label>
        <button type="submit">Filter</button>
        </form>
        \(table)
        """)
  }

  /// Who holds a run now: its process, while it is running.
  static func owner(_ run: RunRecord) -> String {
    run.status == .running || run.status == .parked ? "pid \(run.pid) on \(run.host)" : ""
  }
}
