import Glibc
import LuaKit
import Lunar
import LunarStore

/// What `lunar runs show RUN --format gantt` prints: a Mermaid gantt chart
/// of the run's steps on the local wall clock, to the millisecond, one
/// section per way a step ended (`succeeded`, `failed`, `reused`, `skipped`).
///
/// A step that ran is a bar from its start to its end, tagged `done` when
/// it succeeded and `crit` when it failed (`active` while it has no end).
/// A step that did not run in this run is a milestone: a reused one
/// (tagged `done`) when its earlier output was taken, a skipped one (which
/// the store keeps without times) at the end of the run.
enum RunGantt {
  /// The sections, in the order they are written; empty ones are left out.
  static let sections: [StepStatus] = [.succeeded, .failed, .reused, .skipped]

  /// How dates are written, in Mermaid's (Day.js) notation.
  static let dateFormat = "YYYY-MM-DD HH:mm:ss.SSS"

  /// The chart for `run` and its recorded `steps`; a step still running
  /// (no end recorded) ends at `now` on the chart.
  static func text(_ run: RunRecord, steps: [StepRecord], now: StoreTimestamp = .now) -> String {
    let times = steps.flatMap { [$0.startedAt, $0.finishedAt].compactMap { $0 } }
    let runEnd = run.finishedAt ?? times.max() ?? run.startedAt
    let first = min(run.startedAt, times.min() ?? run.startedAt)
    let last = max(runEnd, times.max() ?? runEnd)
    var lines = [
      "---", "title: " + GraphText.mermaidTitle("\(RunText.name(run.workflow)), run \(run.id)"), "---", "gantt",
      "  dateFormat " + dateFormat, "  axisFormat " + axisFormat(spanning: first.seconds(until: last)), "  todayMarker off",
    ]
    guard !steps.isEmpty else { return (lines + ["  %% no steps recorded", ""]).joined(separator: "\n") }
    for status in sections {
      let bars = steps.filter { $0.status == status }.map { bar(for: $0, runEnd: runEnd, now: now) }
        .sorted { ($0.start, $0.position) < ($1.start, $1.position) }
      guard !bars.isEmpty else { continue }
      lines.append("  section " + status.rawValue)
      for bar in bars {
        lines.append("    \(bar.label) :" + (bar.tags + [localTime(bar.start), localTime(bar.end)]).joined(separator: ", "))
      }
    }
    return (lines + [""]).joined(separator: "\n")
  }

  /// One task line's parts.
  private struct Bar {
    var label: String
    var position: Int
    var tags: [String]
    var start: StoreTimestamp
    var end: StoreTimestamp
  }

  private static func bar(for step: StepRecord, runEnd: StoreTimestamp, now: StoreTimestamp) -> Bar {
    var tags: [String] =
      switch step.status {
      case .succeeded, .reused: ["done"]
      case .failed: ["crit"]
      case .skipped: []
      }
    let start = step.startedAt ?? step.finishedAt ?? runEnd
    var end = step.finishedAt ?? start
    if step.startedAt == nil {
      tags.append("milestone")
    } else if step.finishedAt == nil {
      tags = ["active"]
      end = max(start, now)
    }
    return Bar(label: label(RunText.name(step.name)), position: step.position, tags: tags, start: start, end: end)
  }

  /// Words that begin one of Mermaid's gantt statements (its lexer ignores
  /// case and tries them before a task's text).
  private static let keywords = [
    "gantt", "dateformat", "inclusiveenddates", "topaxis", "axisformat", "tickinterval", "includes", "excludes",
    "todaymarker", "weekday", "title", "accdescription", "accdescr", "acctitle", "section", "click", "href", "call",
  ]

  /// A step's name as a task's text: escaped as Mermaid labels are (so no
  /// `:`, `#`, `;` or line break is left), and with its first character as
  /// an entity code when the text would begin a statement or a date.
  static func label(_ name: String) -> String {
    let text = GraphText.mermaid(name)
    let lowered = text.lowercased()
    let beginsStatement = keywords.contains { lowered.hasPrefix($0) } || lowered.hasPrefix("%%")
      || text.prefix(10).wholeMatch(of: #/\d{4}-\d{2}-\d{2}/#) != nil
    guard beginsStatement, let head = text.unicodeScalars.first else { return text }
    return "#\(head.value);" + String(text.unicodeScalars.dropFirst())
  }

  /// Tick labels fine enough for the run's length.
  private static func axisFormat(spanning seconds: Double) -> String {
    if seconds < 10 { return "%H:%M:%S.%L" }
    if seconds < 86_400 { return "%H:%M:%S" }
    return "%Y-%m-%d %H:%M"
  }

  /// `time` in `dateFormat` on this machine's clock (the `TZ` zone).
  static func localTime(_ time: StoreTimestamp) -> String {
    let (seconds, micros) = time.microseconds.quotientAndRemainder(dividingBy: 1_000_000)
    let whole = micros < 0 ? seconds - 1 : seconds
    let milliseconds = (micros < 0 ? micros + 1_000_000 : micros) / 1_000
    tzset()
    var clock = time_t(whole)
    var parts = tm()
    guard localtime_r(&clock, &parts) != nil else { return "?" }
    var buffer = [CChar](repeating: 0, count: 64)
    let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
    let text = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let fraction = String(milliseconds)
    return text + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
  }
}
