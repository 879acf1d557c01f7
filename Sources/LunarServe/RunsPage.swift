import LuaKit
import LunarStore

/// The runs page: newest first, filtered by workflow and status.
enum RunsPage {
  /// How many runs one page lists.
  static let pageSize = 100

  /// The spans the time filter offers: `since=24h` lists the runs started
  /// in the last 24 hours.
  static let spans: [(argument: String, label: String, seconds: Int64)] = [
    ("1h", "the last hour", 3600), ("24h", "the last 24 hours", 86_400), ("7d", "the last 7 days", 604_800),
    ("30d", "the last 30 days", 2_592_000),
  ]

  /// What the page's query asks for: the filter's values as given, and
  /// the store's filter they make.
  struct Query {
    var workflow: String?
    var status: RunStatus?
    var since: String?
    var filter: RunFilter

    /// Why a query does not read: its message says which argument.
    struct Problem: Error {
      var message: String
    }

    /// The query of `arguments` (`workflow`, `status`, `since`, `before`),
    /// times counted back from `now`; empty ones are absent.
    init(_ arguments: [String: String], now: StoreTimestamp) throws(Problem) {
      func given(_ name: String) -> String? { arguments[name].flatMap { $0.isEmpty ? nil : $0 } }
      workflow = given("workflow")
      filter = RunFilter(workflow: workflow.map { LuaString($0) })
      if let text = given("status") {
        guard let known = RunStatus(rawValue: text) else { throw Problem(message: "No status is called “\(text)”.") }
        status = known
        filter.status = known
      }
      if let text = given("since") {
        guard let span = RunsPage.spans.first(where: { $0.argument == text }) else {
          throw Problem(message: "since is one of \(RunsPage.spans.map(\.argument).joined(separator: ", ")), not “\(text)”.")
        }
        since = text
        filter.startedSince = StoreTimestamp(microseconds: now.microseconds - span.seconds * 1_000_000)
      }
      if let text = given("before") {
        guard let id = Int64(text), id > 0 else { throw Problem(message: "before is a run id, not “\(text)”.") }
        filter.before = RunID(id)
      }
    }

    /// The query string of this query older than run `id`: the next page.
    func older(than id: RunID) -> String {
      var parts: [String] = []
      if let workflow { parts.append("workflow=" + Self.encode(workflow)) }
      if let status { parts.append("status=" + status.rawValue) }
      if let since { parts.append("since=" + since) }
      parts.append("before=\(id.rawValue)")
      return "?" + parts.joined(separator: "&")
    }

    /// `text` percent-encoded for a query: every byte but letters and digits.
    static func encode(_ text: String) -> String {
      var encoded = ""
      for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
          encoded.unicodeScalars.append(Unicode.Scalar(byte))
        default:
          encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
        }
      }
      return encoded
    }
  }

  /// The page for `runs` (already filtered) of `query`; `more` when older
  /// runs match beyond this page.
  static func html(_ runs: [RunSummary], query: Query, more: Bool, now: StoreTimestamp) -> String {
    let (workflow, status) = (query.workflow, query.status)
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
    let spans = ([("", "any time")] + spans.map { ($0.argument, $0.label) }).map { value, label in
      let selected = value == (query.since ?? "") ? " selected" : ""
      return "<option value=\"\(value)\"\(selected)>\(label)</option>"
    }.joined()
    let older =
      more && !runs.isEmpty
      ? "<nav class=\"pages\" aria-label=\"Pages\"><a href=\"/\(HTML.escape(query.older(than: runs[runs.count - 1].run.id)))\" rel=\"next\">Older runs</a></nav>"
      : ""
    let table =
      runs.isEmpty
      ? "<p>No runs match.</p>"
      : """
      <table>
      <caption class="muted">Newest first, \(pageSize) a page</caption>
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
        <label>Started <select name="since">\(spans)</select></label>
        <button type="submit">Filter</button>
        </form>
        \(table)
        \(older)
        """)
  }

  /// Who holds a run now: its process, while it is running.
  static func owner(_ run: RunRecord) -> String {
    run.status == .running || run.status == .parked ? "pid \(run.pid) on \(run.host)" : ""
  }
}
