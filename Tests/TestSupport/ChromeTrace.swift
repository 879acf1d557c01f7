import Foundation

/// A Chrome trace file read back and checked against the Trace Event
/// Format's rules, as ui.perfetto.dev and chrome://tracing need them: every
/// event has `ph`, `pid`, `tid` and `ts` (metadata may give 0); a complete
/// event has a `dur` of zero or more; the slices of one track nest (none
/// overlaps another in part), `B`/`E` pairs included; each flow start has
/// one end with its id, no later than it, and each binds to a slice that
/// holds its time (the slice on top of its track's stack, as Perfetto binds
/// it); metadata names every process and every track used.
public struct ChromeTrace {
  /// A slice: a complete event, or a `B`/`E` pair.
  public struct Slice {
    public var name: String
    public var category: String?
    public var pid: Int
    public var tid: Int
    /// Nanoseconds (`ts` is in microseconds, with three decimals at most).
    public var start: Int64
    public var end: Int64
    public var args: [String: Any]
  }

  /// A flow event (`s` or `f`).
  public struct FlowPoint {
    public var phase: String
    public var id: String
    public var name: String
    public var pid: Int
    public var tid: Int
    public var time: Int64
    /// The slice it binds to (its index in `slices`), if any.
    public var slice: Int?
  }

  /// What breaks the format's rules; empty for a good file.
  public private(set) var problems: [String] = []
  /// Every slice, in the file's order.
  public private(set) var slices: [Slice] = []
  /// Every flow event, in the file's order.
  public private(set) var flowPoints: [FlowPoint] = []
  /// Instants, with their track.
  public private(set) var instants: [(name: String, pid: Int, tid: Int, args: [String: Any])] = []
  /// Each process's name, by pid.
  public private(set) var processNames: [Int: String] = [:]
  /// Each track's name, by pid and tid.
  public private(set) var trackNames: [TrackID: String] = [:]
  /// The top-level object's `displayTimeUnit`.
  public private(set) var displayTimeUnit: String?

  /// A track: a thread of a process.
  public struct TrackID: Hashable {
    public var pid: Int
    public var tid: Int
  }

  /// Reads and checks the file's `data`.
  public init(_ data: Data) {
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      problems.append("not a JSON object")
      return
    }
    displayTimeUnit = object["displayTimeUnit"] as? String
    guard let events = object["traceEvents"] as? [[String: Any]] else {
      problems.append("no traceEvents array of objects")
      return
    }
    var used = Set<TrackID>()
    // A reader (Perfetto's) sorts the events by time, keeping the file's
    // order at one time, and stacks each track's slices as they come: a
    // flow binds to the slice on top of its track's stack.
    let ordered = events.enumerated().sorted { a, b in
      let (x, y) = (Self.nanoseconds(a.element["ts"]) ?? 0, Self.nanoseconds(b.element["ts"]) ?? 0)
      return x != y ? x < y : a.offset < b.offset
    }
    var stacks: [TrackID: [Int]] = [:]
    var pending = Set<Int>()
    for (index, event) in ordered {
      let at = "event \(index) (\(event["name"] ?? "?"))"
      guard let phase = event["ph"] as? String else {
        problems.append("\(at): no ph")
        continue
      }
      guard let pid = Self.integer(event["pid"]), let tid = Self.integer(event["tid"]) else {
        problems.append("\(at): pid and tid must be integers")
        continue
      }
      let name = event["name"] as? String ?? ""
      let args = event["args"] as? [String: Any] ?? [:]
      let track = TrackID(pid: pid, tid: tid)
      if phase == "M" {
        if event["ts"] != nil && Self.nanoseconds(event["ts"]) == nil { problems.append("\(at): ts must be a number") }
        switch name {
        case "process_name": processNames[pid] = args["name"] as? String
        case "thread_name": trackNames[track] = args["name"] as? String
        default: break
        }
        continue
      }
      guard let time = Self.nanoseconds(event["ts"]) else {
        problems.append("\(at): no numeric ts")
        continue
      }
      used.insert(track)
      let category = event["cat"] as? String
      /// Pops the slices that ended before a slice of `duration` (nil while
      /// pending) begins at `time`; a slice and an instant that end where
      /// another begins are behind it, two instants at one time stack.
      func popEnded(beforeSliceOf duration: Int64?) {
        while let top = stacks[track]?.last, !pending.contains(top) {
          let slice = slices[top]
          let bothInstants = slice.end == slice.start && duration == 0
          guard slice.end < time || (slice.end == time && !bothInstants) else { break }
          stacks[track]!.removeLast()
        }
      }
      switch phase {
      case "X":
        guard let duration = Self.nanoseconds(event["dur"]), duration >= 0 else {
          problems.append("\(at): a complete event needs a dur of zero or more")
          continue
        }
        popEnded(beforeSliceOf: duration)
        slices.append(Slice(name: name, category: category, pid: pid, tid: tid, start: time, end: time + duration, args: args))
        stacks[track, default: []].append(slices.count - 1)
      case "B":
        popEnded(beforeSliceOf: nil)
        slices.append(Slice(name: name, category: category, pid: pid, tid: tid, start: time, end: time, args: args))
        pending.insert(slices.count - 1)
        stacks[track, default: []].append(slices.count - 1)
      case "E":
        popEnded(beforeSliceOf: nil)
        guard let begun = stacks[track]?.last(where: { pending.contains($0) }) else {
          problems.append("\(at): E without a B on its track")
          continue
        }
        if time < slices[begun].start { problems.append("\(at): E before its B") }
        slices[begun].end = max(time, slices[begun].start)
        slices[begun].args.merge(args) { _, new in new }
        pending.remove(begun)
        if stacks[track]?.last == begun { stacks[track]!.removeLast() }
      case "s", "f", "t":
        guard let id = event["id"].map({ "\($0)" }) else {
          problems.append("\(at): a flow event needs an id")
          continue
        }
        if phase == "f" && event["bp"] as? String != "e" { problems.append("\(at): a flow end should bind to its enclosing slice (bp e)") }
        let top = stacks[track]?.last
        flowPoints.append(FlowPoint(phase: phase, id: id, name: name, pid: pid, tid: tid, time: time, slice: top))
        let holds = top.map { pending.contains($0) || (slices[$0].start <= time && time <= slices[$0].end) } ?? false
        if !holds { problems.append("\(at): flow \(phase) id \(id) at \(time) binds to no slice holding its time") }
      case "i", "I":
        instants.append((name, pid, tid, args))
      default:
        problems.append("\(at): unknown ph '\(phase)'")
      }
    }
    let open = Dictionary(grouping: pending) { TrackID(pid: slices[$0].pid, tid: slices[$0].tid) }
    for (track, left) in open where !left.isEmpty {
      problems.append("track \(track.pid)/\(track.tid): \(left.count) B events never ended")
    }
    checkNesting()
    checkFlows()
    for track in used where trackNames[track] == nil {
      problems.append("track \(track.pid)/\(track.tid) is used but no thread_name names it")
    }
    for pid in Set(used.map(\.pid)) where processNames[pid] == nil {
      problems.append("process \(pid) is used but no process_name names it")
    }
  }

  /// The name of the track a slice or flow point is on.
  public func trackName(pid: Int, tid: Int) -> String? { trackNames[TrackID(pid: pid, tid: tid)] }

  /// The slices on the tracks whose names start with `prefix` (a track
  /// split into lanes is `queue calc`, `queue calc (2)`...), by start, and
  /// at one start in the file's order.
  public func slices(onTracksStartingWith prefix: String, pid: Int? = nil) -> [Slice] {
    slices.enumerated().filter { _, slice in
      (pid == nil || slice.pid == pid) && (trackName(pid: slice.pid, tid: slice.tid)?.hasPrefix(prefix) ?? false)
    }.sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
  }

  /// The flows, each as its start and its end.
  public var flows: [(start: FlowPoint, end: FlowPoint)] {
    let ends = Dictionary(flowPoints.filter { $0.phase == "f" }.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    return flowPoints.filter { $0.phase == "s" }.compactMap { start in ends[start.id].map { (start, $0) } }
  }

  /// The slice a flow point binds to: the one on top of its track's stack.
  public func slice(boundTo point: FlowPoint) -> Slice? { point.slice.map { slices[$0] } }

  private mutating func checkNesting() {
    let byTrack = Dictionary(grouping: slices.indices) { TrackID(pid: slices[$0].pid, tid: slices[$0].tid) }
    for (track, indices) in byTrack {
      let ordered = indices.sorted { a, b in
        let (x, y) = (slices[a], slices[b])
        return x.start != y.start ? x.start < y.start : x.end > y.end
      }
      var stack: [Slice] = []
      for index in ordered {
        let slice = slices[index]
        while let last = stack.last, last.end <= slice.start { stack.removeLast() }
        if let last = stack.last, slice.end > last.end {
          problems.append(
            "track \(trackNames[track] ?? "\(track.pid)/\(track.tid)"): '\(slice.name)' [\(slice.start), \(slice.end)] overlaps '\(last.name)' [\(last.start), \(last.end)] without nesting"
          )
          continue
        }
        stack.append(slice)
      }
    }
  }

  private mutating func checkFlows() {
    var starts: [String: FlowPoint] = [:]
    var ends: [String: FlowPoint] = [:]
    for point in flowPoints {
      switch point.phase {
      case "s":
        if starts[point.id] != nil { problems.append("flow id \(point.id) starts twice") }
        starts[point.id] = point
      case "f":
        if ends[point.id] != nil { problems.append("flow id \(point.id) ends twice") }
        ends[point.id] = point
      default: break
      }
    }
    for (id, start) in starts {
      guard let end = ends[id] else {
        problems.append("flow id \(id) starts and never ends")
        continue
      }
      if end.time < start.time { problems.append("flow id \(id) ends before it starts") }
    }
    for id in ends.keys where starts[id] == nil { problems.append("flow id \(id) ends without a start") }
  }

  private static func integer(_ value: Any?) -> Int? {
    guard let number = value as? NSNumber else { return nil }
    return Int(exactly: number.doubleValue)
  }

  /// Microseconds as whole nanoseconds.
  private static func nanoseconds(_ value: Any?) -> Int64? {
    guard let number = value as? NSNumber else { return nil }
    let ns = (number.doubleValue * 1000).rounded()
    return ns.isFinite ? Int64(ns) : nil
  }
}
