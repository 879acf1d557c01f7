import LuaKit

/// One event of a Chrome trace file, as the Trace Event Format defines it:
/// a complete slice (`X`), an instant (`i`), a flow's start or end (`s`,
/// `f`) or a metadata record (`M`) naming a process or a track.
struct ChromeTraceEvent: Sendable {
  /// The event's `ph`.
  enum Phase: String, Sendable {
    case complete = "X"
    case instant = "i"
    case flowStart = "s"
    case flowEnd = "f"
    case metadata = "M"
  }

  var phase: Phase
  var name: String
  var category: String?
  /// Nanoseconds; written as microseconds (`ts`).
  var time: Int64
  /// A complete event's length in nanoseconds; written as `dur`.
  var duration: Int64?
  var pid: Int
  var tid: Int
  /// A flow's id, the same on its start and its end.
  var id: Int?
  var args: [TraceEvent.Field] = []
  /// Where it goes among its process's events of the same time (see
  /// `ChromeTimeline.events`); not written.
  var place = (position: 0, rank: 0)

  /// A metadata record: `process_name`, `thread_name` and their sort indexes.
  static func metadata(_ name: String, pid: Int, tid: Int, value: LuaValue) -> ChromeTraceEvent {
    let key = name.hasSuffix("_name") ? "name" : "sort_index"
    return ChromeTraceEvent(phase: .metadata, name: name, time: 0, pid: pid, tid: tid, args: [.init(key, value)])
  }

  /// The event as one JSON object.
  var json: String {
    var out = #"{"ph":"\#(phase.rawValue)","name":"# + JSON.encode(.string(LuaString(name)))
    if let category { out += #","cat":"# + JSON.encode(.string(LuaString(category))) }
    out += #","ts":"# + Self.microseconds(time)
    if let duration { out += #","dur":"# + Self.microseconds(duration) }
    out += #","pid":\#(pid),"tid":\#(tid)"#
    if let id { out += #","id":\#(id)"# }
    switch phase {
    case .instant: out += #","s":"t""#
    case .flowEnd: out += #","bp":"e""#
    default: break
    }
    if !args.isEmpty {
      var table = LuaTable()
      for field in args { table[field.name] = field.value }
      var seen = Set<String>()
      let order = args.map(\.name).filter { seen.insert($0).inserted }
      out += #","args":"# + JSON.encode(.table(table), keyOrder: order)
    }
    return out + "}"
  }

  /// Nanoseconds as microseconds with three decimals (`1234.567`): exact,
  /// so a reader adding `dur` to `ts` meets the times the slices were cut at.
  static func microseconds(_ nanoseconds: Int64) -> String {
    let sign = nanoseconds < 0 ? "-" : ""
    let magnitude = nanoseconds.magnitude
    return sign + String(magnitude / 1000) + "." + String(magnitude % 1000).leftPadded(to: 3, with: "0")
  }
}
