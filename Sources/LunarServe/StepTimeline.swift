import LunarStore

/// A run's steps on a time axis, as inline SVG: one bar per step from its
/// start to its end (now for one still running), in lanes where steps
/// overlap, coloured by status through the site's stylesheet (an inline
/// style would break the Content-Security-Policy).
enum StepTimeline {
  /// At most this many lanes are drawn; the steps table lists every step.
  static let laneLimit = 40

  /// One bar: a step's place on the axis.
  struct Bar: Equatable {
    var name: String
    var status: String
    var start: StoreTimestamp
    var end: StoreTimestamp
    var lane: Int
  }

  /// The bars of the recorded `steps` that have a start, each in the first
  /// lane free at its start (one without an end ends at `now`), and how
  /// many were left out past `laneLimit` lanes.
  static func bars(_ steps: [StepRecord], now: StoreTimestamp) -> (bars: [Bar], leftOut: Int) {
    var timed: [(name: String, status: String, start: StoreTimestamp, end: StoreTimestamp)] = steps.compactMap { step in
      guard let start = step.startedAt else { return nil }
      let end = step.finishedAt ?? now
      return (step.name.lossyString, step.status.rawValue, start, end.microseconds < start.microseconds ? start : end)
    }
    timed.sort { ($0.start.microseconds, $0.end.microseconds) < ($1.start.microseconds, $1.end.microseconds) }
    var laneEnds: [StoreTimestamp] = []
    var bars: [Bar] = []
    var leftOut = 0
    for step in timed {
      let lane = laneEnds.firstIndex { $0.microseconds <= step.start.microseconds } ?? laneEnds.count
      guard lane < laneLimit else {
        leftOut += 1
        continue
      }
      if lane == laneEnds.count { laneEnds.append(step.end) } else { laneEnds[lane] = step.end }
      bars.append(Bar(name: step.name, status: step.status, start: step.start, end: step.end, lane: lane))
    }
    return (bars, leftOut)
  }

  /// The SVG of `bars`, or nothing when there are none.
  static func svg(_ bars: [Bar], leftOut out: Int) -> String {
    guard let first = bars.map(\.start.microseconds).min(), let last = bars.map(\.end.microseconds).max() else { return "" }
    let width = 1000.0
    let laneHeight = 20
    let lanes = (bars.map(\.lane).max() ?? 0) + 1
    let height = lanes * laneHeight + 24
    let span = Double(max(last - first, 1))
    var shapes = ""
    for bar in bars {
      let x = Double(bar.start.microseconds - first) / span * width
      let w = max(Double(bar.end.microseconds - bar.start.microseconds) / span * width, 2)
      let seconds = TimeText.duration(Double(bar.end.microseconds - bar.start.microseconds) / 1_000_000)
      shapes += """
        <rect class="\(bar.status)" x="\(format(x))" y="\(bar.lane * laneHeight)" width="\(format(max(w - 1, 1)))" \
        height="\(laneHeight - 4)" rx="2"><title>\(HTML.escape(bar.name)): \(bar.status), \(seconds)</title></rect>

        """
      // A bar wide enough for its name is labelled (about 7 units a character).
      if Double(bar.name.count * 7 + 8) < w {
        shapes += """
          <text class="label" x="\(format(x + 4))" y="\(bar.lane * laneHeight + laneHeight - 8)" aria-hidden="true">\
          \(HTML.escape(bar.name))</text>

          """
      }
    }
    let total = TimeText.duration(span / 1_000_000)
    let axis = lanes * laneHeight + 2
    let note = out > 0 ? "<p class=\"muted\">\(out) overlapping steps are not drawn; the table lists every step.</p>" : ""
    return """
      <svg class="timeline" viewBox="0 0 \(Int(width)) \(height)" role="img" \
      aria-label="Timeline: \(bars.count) steps over \(total)">
      \(shapes)<line x1="0" y1="\(axis)" x2="\(Int(width))" y2="\(axis)"/>
      <text x="0" y="\(axis + 16)">0s</text><text x="\(Int(width))" y="\(axis + 16)" text-anchor="end">\(total)</text>
      </svg>
      \(note)
      """
  }

  private static func format(_ value: Double) -> String {
    String(Double((value * 10).rounded()) / 10)
  }
}
