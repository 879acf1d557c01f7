import LuaKit
import Synchronization

/// One thing that happened in a run: a task spawned, a job finished, a state
/// changed. Every component reports through the same trace, in order.
public struct TraceEvent: Sendable, Equatable {
  /// Position in the run's sequence of events, from 1.
  public let sequence: Int
  /// Seconds on the runtime clock since the run started.
  public let time: Double
  /// What happened, as `component.event` (`task.spawned`).
  public let kind: String
  /// Details, in a stable order.
  public let fields: [Field]
  /// The task whose Lua code was running when it happened; nil for the
  /// main chunk and for the loop's own work (a machine handling a message,
  /// a Swift action's span). Timelines put the event on that task's track.
  public let task: Int?

  /// An event; the run's `Trace` makes them, a sink may be handed others.
  public init(sequence: Int, time: Double, kind: String, fields: [Field], task: Int? = nil) {
    self.sequence = sequence
    self.time = time
    self.kind = kind
    self.fields = fields
    self.task = task
  }

  /// One named detail of an event.
  public struct Field: Sendable, Equatable {
    public let name: String
    public let value: LuaValue
    public init(_ name: String, _ value: LuaValue) {
      self.name = name
      self.value = value
    }
  }

  /// The value of the field `name`, or nil.
  public subscript(name: String) -> LuaValue? {
    fields.first { $0.name == name }?.value
  }

  /// The bytes the event takes in Swift's memory (see `LuaValueSize`).
  public var estimatedSize: Int {
    var bytes = MemoryLayout<TraceEvent>.stride + LuaValueSize.string(byteCount: kind.utf8.count)
    for field in fields {
      bytes += MemoryLayout<Field>.stride + LuaValueSize.string(byteCount: field.name.utf8.count)
      bytes += field.value.estimatedSize
    }
    return bytes
  }

  /// `task.done id=1 at="x.lua:3"`: the kind and fields, one line.
  public var summary: String {
    ([kind] + fields.map { "\($0.name)=\($0.value.traceText)" }).joined(separator: " ")
  }
}

extension LuaValue {
  /// Strings bare when they are one word, quoted otherwise.
  fileprivate var traceText: String {
    if case .string(let s) = self, let text = s.string, !text.isEmpty,
      text.allSatisfy({ !$0.isWhitespace && $0 != "\"" && $0 != "=" })
    {
      return text
    }
    return description
  }
}

/// Receives trace events; called on the runtime's loop thread, in order.
public protocol TraceSink: Sendable {
  /// Takes one event.
  func receive(_ event: TraceEvent)
}

/// Something that writes a file as the run goes (a JSON-lines trace): the
/// runtime ends the run when that file cannot be written.
public protocol FileWritingSink: TraceSink {
  /// The file it writes.
  var output: FileOutput { get }
}

/// A sink that keeps what it receives: the runtime it is given to charges
/// that to its memory limit (`--max-memory`), as it charges the copies of
/// Lua values Swift holds.
public protocol BudgetedTraceSink: TraceSink {
  /// Counts what the sink keeps from now on against `budget`.
  func charge(to budget: LuaMemoryBudget)
}

/// Keeps every event in memory, for tests and for Lua's trace assertions.
/// With a memory budget, the events it keeps count against the limit until
/// cleared (an event over the limit is kept all the same: Lua's next
/// allocation fails instead).
public final class TraceRecorder: TraceSink {
  private struct Recorded {
    var events: [TraceEvent] = []
    var charges: [LuaMemoryCharge] = []
  }
  private let storage = Mutex(Recorded())
  private let budget: LuaMemoryBudget?

  /// An empty recorder; with `budget`, its events are charged to it.
  public init(budget: LuaMemoryBudget? = nil) {
    self.budget = budget?.isLimited == true ? budget : nil
  }

  public func receive(_ event: TraceEvent) {
    let charge = budget?.chargeAnyway(event.estimatedSize)
    storage.withLock { recorded in
      recorded.events.append(event)
      if let charge { recorded.charges.append(charge) }
    }
  }

  /// Every event received so far.
  public var events: [TraceEvent] { storage.withLock { $0.events } }

  /// Forgets every event.
  public func clear() { storage.withLock { $0 = Recorded() } }
}

/// Writes one line per event to a file descriptor:
/// `[   0.050] task.done id=1`.
public final class TextTraceSink: TraceSink {
  private let output: FileOutput

  /// A sink writing to `descriptor` (2 for standard error).
  public init(descriptor: Int32) { output = FileOutput(descriptor: descriptor) }

  public func receive(_ event: TraceEvent) {
    // Like Lua's own `print`, a trace line that standard error refuses is dropped.
    try? output.write(Self.formatTime(event.time) + " " + event.summary + "\n")
  }

  /// `[   0.050]`: seconds with milliseconds, for any time the clock may
  /// report (virtual time can be moved up to `RuntimeClock.horizon`).
  static func formatTime(_ t: Double) -> String {
    let text: String
    // Past 2^53 ms a Double holds no milliseconds to show, and past
    // Int.max ms the conversion below would trap.
    if t.isFinite && abs(t) * 1000 < 9_007_199_254_740_992 {
      let milliseconds = Int((abs(t) * 1000).rounded())
      let sign = t < 0 && milliseconds > 0 ? "-" : ""
      text = "\(sign)\(milliseconds / 1000).\(String(milliseconds % 1000).leftPadded(to: 3, with: "0"))"
    } else {
      text = LuaValue.number(t).description
    }
    return "[" + text.leftPadded(to: 8, with: " ") + "]"
  }
}

/// Writes one JSON object per line per event. A write that fails ends the
/// run (see `FileWritingSink`).
public final class JSONLinesTraceSink: FileWritingSink {
  public let output: FileOutput
  private let prefixes: [String]

  /// What the sink writes: JSON lines that begin with the sequence number.
  public static let kind = FileOutput.Kind.starting(with: [#"{"sequence":"#], name: "a Lunar trace (JSON lines)")

  /// A sink writing a new file at `path` (see `FileOutput` for what it
  /// replaces); with `prefixes`, only events whose kind starts with one of
  /// them.
  public init(path: String, prefixes: [String] = []) throws(FileOutput.OpenError) {
    output = try FileOutput(path: path, kind: Self.kind)
    self.prefixes = prefixes
  }

  public func receive(_ event: TraceEvent) {
    if !prefixes.isEmpty && !prefixes.contains(where: { event.kind.hasPrefix($0) }) { return }
    var object = LuaTable()
    object["sequence"] = .integer(Int64(event.sequence))
    object["time"] = .number(event.time)
    object["kind"] = .string(LuaString(event.kind))
    for field in event.fields { object[field.name] = field.value }
    // A failure is reported through `output.whenWriteFails`, which ends the run.
    try? output.write(JSON.encode(.table(object), keyOrder: ["sequence", "time", "kind"] + event.fields.map(\.name)) + "\n")
  }
}

/// The run's trace: numbers events and hands them to every sink. Lives on
/// the loop thread.
public final class Trace {
  private var sinks: [any TraceSink] {
    didSet {
      let was = listened
      listened = !sinks.isEmpty
      if listened != was { onListeningChanged?(listened) }
    }
  }
  /// Told whether someone listens, each time that changes.
  var onListeningChanged: ((Bool) -> Void)?
  // `isEnabled`, asked at nearly every step of the loop, reads this plain
  // flag rather than `sinks`: the compiler proves its accesses exclusive,
  // so the question costs no run-time exclusivity check.
  private var listened: Bool
  /// The number of the last event (a reused runtime numbers each script's
  /// events as a new runtime would, see `RuntimeCore.restorePristine`).
  var sequence = 0
  private let clock: RuntimeClock
  /// The id of the task computing now (set by the scheduler); asked only
  /// when an event is made, so a run nobody traces never calls it.
  var runningTask: () -> Int? = { nil }

  init(sinks: [any TraceSink], clock: RuntimeClock) {
    self.sinks = sinks
    listened = !sinks.isEmpty
    self.clock = clock
  }

  /// False when no sink listens; callers skip building events then.
  public var isEnabled: Bool { listened }

  /// Adds a sink for the rest of the run.
  public func add(_ sink: any TraceSink) { sinks.append(sink) }

  /// Removes every sink that is the same object as `sink`.
  public func remove(_ sink: any TraceSink & AnyObject) {
    sinks.removeAll { ($0 as AnyObject) === sink }
  }

  /// Records an event of `kind` with `fields`.
  public func emit(_ kind: String, _ fields: [TraceEvent.Field] = []) {
    guard isEnabled else { return }
    let event = makeEvent(kind, fields)
    for sink in sinks { sink.receive(event) }
  }

  /// Records an event of `kind` with `fields` for `sink` alone, numbered
  /// in the run's sequence: a runner's own marks (a spec's tests), which
  /// the run's other sinks, `lunar.trace` among them, never see.
  public func emit(_ kind: String, _ fields: [TraceEvent.Field], to sink: any TraceSink) {
    sink.receive(makeEvent(kind, fields))
  }

  private func makeEvent(_ kind: String, _ fields: [TraceEvent.Field]) -> TraceEvent {
    sequence += 1
    return TraceEvent(sequence: sequence, time: clock.elapsed, kind: kind, fields: fields, task: runningTask())
  }
}

extension String {
  /// The string with `character` in front up to `width` characters.
  func leftPadded(to width: Int, with character: Character) -> String {
    count >= width ? self : String(repeating: character, count: width - count) + self
  }
}
