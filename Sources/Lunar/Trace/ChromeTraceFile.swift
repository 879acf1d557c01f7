import Synchronization

/// A Chrome trace file (`--trace-format chrome`): the timelines of one
/// command, each a process (the run, or each spec file of `lunar test`),
/// written whole when the command ends, as a JSON object with
/// `traceEvents` that ui.perfetto.dev and chrome://tracing open.
public final class ChromeTraceFile: Sendable {
  /// What the file begins with: the mark that it is Lunar's.
  static let opening = #"{"displayTimeUnit":"ms","otherData":{"writer":"lunar"},"traceEvents":["#

  /// What Lunar writes: a Chrome trace that begins with Lunar's mark (a
  /// trace another program wrote is never overwritten).
  public static let kind = FileOutput.Kind.starting(with: [opening], name: "a Lunar trace (Chrome JSON)")

  /// Where it is written.
  public let path: String
  private let processes = Mutex<[(sink: ChromeTraceSink, offset: Double)]>([])

  /// A file to write at `path`; a path Lunar may not write is refused now,
  /// before the run, rather than after it.
  public init(path: String) throws(FileOutput.OpenError) {
    try FileOutput.check(path, kind: Self.kind)
    self.path = path
  }

  /// A sink for one more process, `name`, whose times begin `offset`
  /// seconds into the file's timeline; its main track is `mainTrack`.
  public func process(named name: String, mainTrack: String = "main", offset: Double = 0) -> ChromeTraceSink {
    let sink = ChromeTraceSink(process: name, mainTrack: mainTrack)
    processes.withLock { $0.append((sink, offset)) }
    return sink
  }

  /// Writes every process's timeline as it stands (a new file renamed over
  /// the old, see `FileOutput`).
  public func write() throws(FileOutput.OpenError) {
    let timelines = processes.withLock { $0 }.map { ($0.sink.finished, ChromeTimeline.nanoseconds($0.offset)) }
    _ = try FileOutput(path: path, kind: Self.kind, contents: Array(Self.text(timelines).utf8))
  }

  /// The file's text for `timelines`, each with the nanoseconds its times
  /// are moved by; process ids count from 1 in that order.
  public static func text(_ timelines: [(timeline: ChromeTimeline, offset: Int64)]) -> String {
    var flowID = 1
    var events: [ChromeTraceEvent] = []
    for (index, entry) in timelines.enumerated() {
      events += entry.timeline.events(pid: index + 1, offset: entry.offset, flowID: &flowID)
    }
    // Metadata first; then by time, and at one time in the order things
    // happened (a reader stacks a track's slices in the file's order, and
    // binds a flow to the slice on top).
    let ordered = events.enumerated().sorted { a, b in
      let (x, y) = (a.element, b.element)
      if (x.phase == .metadata) != (y.phase == .metadata) { return x.phase == .metadata }
      if x.time != y.time { return x.time < y.time }
      if x.pid != y.pid { return x.pid < y.pid }
      if x.place != y.place { return x.place < y.place }
      return a.offset < b.offset
    }
    var out = opening + "\n"
    for (position, entry) in ordered.enumerated() {
      out += entry.element.json + (position + 1 < ordered.count ? ",\n" : "\n")
    }
    return out + "]}\n"
  }
}
