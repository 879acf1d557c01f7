import LuaKit
import LunarStore

/// What a run's steps printed, as `lunar runs logs` shows it: each step
/// attempt under its heading, standard error marked apart, every byte as
/// text (bytes that are not UTF-8 shown as U+FFFD), at most `byteLimit`.
enum LogsPage {
  /// The most bytes one page shows; `lunar runs logs` prints the rest.
  static let byteLimit = 2 << 20

  /// The page of `chunks`, the logs of `run` (of `step` alone when given).
  static func html(_ run: RunRecord, step: LuaString?, chunks: [StepLogChunk]) -> String {
    var sections = ""
    var shown = 0
    var index = chunks.startIndex
    while index < chunks.endIndex, shown < byteLimit {
      let first = chunks[index]
      var text = ""
      while index < chunks.endIndex, chunks[index].step == first.step, chunks[index].attempt == first.attempt, shown < byteLimit {
        let chunk = chunks[index]
        let bytes = chunk.bytes.prefix(byteLimit - shown)
        shown += bytes.count
        let escaped = HTML.escape(String(decoding: bytes, as: UTF8.self))
        text += chunk.stream == .standardError ? "<span class=\"stderr\">\(escaped)</span>" : escaped
        index += 1
      }
      sections += """
        <h2>\(HTML.escape(first.step)) <span class="muted">attempt \(first.attempt)</span></h2>
        <pre class="log">\(text)</pre>

        """
    }
    if index < chunks.endIndex {
      sections += "<p class=\"muted\">Cut at \(byteLimit >> 20) MiB: <code>lunar runs logs \(run.id.rawValue)</code> prints the rest.</p>\n"
    }
    if chunks.isEmpty {
      sections = "<p>\(step == nil ? "No step of this run" : "This step") printed nothing that was kept.</p>\n"
    }
    let scope = step.map { " · \(HTML.escape($0))" } ?? ""
    return Page.document(
      title: "Logs of run \(run.id.rawValue)",
      content: """
        <h1>Logs <span class="muted">run <a href="/runs/\(run.id.rawValue)">\(run.id.rawValue)</a>\(scope)</span></h1>
        <p class="muted">Standard error is shown in red.</p>
        \(sections)
        """)
  }
}
