import LuaKit

/// A timeline as Chrome's trace event format draws it (ui.perfetto.dev and
/// chrome://tracing open it): slices, instants and flow arrows on named
/// tracks, times in nanoseconds from the start of its process. Slices of one
/// track that overlap without nesting are spread over lanes, each a track of
/// the file, so every track of the file nests.
public struct ChromeTimeline: Sendable {
  /// A named row: the main chunk, a workflow, a queue, a machine, a task.
  public struct Track: Hashable, Sendable {
    /// What a track shows; the file lists tracks in this order.
    public enum Kind: Int, Sendable, Comparable {
      case main, workflow, queue, machine, task

      public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }

      /// Whether a slice inside another's time is drawn inside it: a
      /// task's waits and actions are parts of it, but a workflow's steps
      /// run beside each other, so each lane holds one step at a time.
      var nests: Bool { self != .workflow }
    }

    /// What it shows.
    public let kind: Kind
    /// Its name as Lua's bytes (a queue's, a task's label): names that
    /// differ by a byte are two tracks.
    public let name: LuaString
    /// The task's id on a task track; 0 on the others.
    public let number: Int

    /// The track of `kind` named `name` (a task's: `number` is its id).
    public init(_ kind: Kind, _ name: LuaString, number: Int = 0) {
      self.kind = kind
      self.name = name
      self.number = number
    }

    /// The name shown: `main`, `workflow release`, `queue calc`,
    /// `task 5 calc#1`, `task 6` (a task without a label of its own).
    var title: String {
      switch kind {
      case .main: name.lossyString
      case .workflow: "workflow " + name.lossyString
      case .queue: "queue " + name.lossyString
      case .machine: "machine " + name.lossyString
      case .task: name.lossyString == "task \(number)" ? name.lossyString : "task \(number) " + name.lossyString
      }
    }
  }

  /// A span of time on a track.
  public struct Slice: Sendable {
    /// Where it is drawn.
    public var track: Track
    /// What it is called in the file.
    public var name: String
    /// Chrome's `cat`: `task`, `job`, `message`, `command`, `action`, `step`...
    public var category: String
    /// Nanoseconds from the process's start.
    public var start: Int64
    /// Where it ends; nil while it is open.
    public var end: Int64?
    /// Its fields, written as the event's `args`.
    public var args: [TraceEvent.Field]
  }

  /// A moment inside a slice, where an arrow starts (a submit, a send).
  public struct Moment: Sendable {
    /// The slice it is in.
    public let slice: Int
    /// When.
    public let time: Int64
    /// How many slices had opened by then: a reader meets it after those
    /// that opened at its time before it, and before those that opened after.
    let opened: Int
  }

  /// A mark on a track (a log line, an analytics event).
  struct Instant: Sendable {
    var track: Track
    var name: String
    var category: String
    var time: Int64
    var opened: Int
    var args: [TraceEvent.Field]
  }

  /// An arrow from a moment to the start of slice `to`.
  struct Flow: Sendable {
    var name: String
    var from: Moment
    var to: Int
  }

  /// The process's name (`lunar run release.lua`, a spec file).
  public let name: String
  /// Every slice, in the order they were opened.
  public private(set) var slices: [Slice] = []
  private var instants: [Instant] = []
  private var flows: [Flow] = []
  /// When each track first appeared: tracks of a kind are listed so.
  private var firstSeen: [Track: Int] = [:]

  /// An empty timeline for the process `name`.
  public init(name: String) { self.name = name }

  /// Opens a slice on `track` at `time`; returns its index.
  @discardableResult
  public mutating func open(
    _ track: Track, _ name: String, category: String, at time: Int64, args: [TraceEvent.Field] = []
  ) -> Int {
    see(track)
    slices.append(Slice(track: track, name: name, category: category, start: time, end: nil, args: args))
    return slices.count - 1
  }

  /// Adds a slice from `start` to `end` (or `start`, if earlier).
  @discardableResult
  public mutating func add(
    _ track: Track, _ name: String, category: String, from start: Int64, to end: Int64, args: [TraceEvent.Field] = []
  ) -> Int {
    let index = open(track, name, category: category, at: start, args: args)
    close(index, at: end)
    return index
  }

  /// Ends the open slice `index` at `time` (at its start, if earlier) and
  /// adds `args` to its fields; a slice already ended is left as it is.
  public mutating func close(_ index: Int, at time: Int64, args: [TraceEvent.Field] = []) {
    guard slices[index].end == nil else { return }
    slices[index].end = max(time, slices[index].start)
    addArgs(index, args)
  }

  /// Adds `args` to slice `index`'s fields (a field given again replaces it).
  public mutating func addArgs(_ index: Int, _ args: [TraceEvent.Field]) {
    for field in args {
      slices[index].args.removeAll { $0.name == field.name }
      slices[index].args.append(field)
    }
  }

  /// Names slice `index` `name`.
  public mutating func rename(_ index: Int, to name: String) { slices[index].name = name }

  /// True while slice `index` has no end.
  public func isOpen(_ index: Int) -> Bool { slices[index].end == nil }

  /// Adds a moment on `track`.
  public mutating func addInstant(
    _ track: Track, _ name: String, category: String, at time: Int64, args: [TraceEvent.Field] = []
  ) {
    see(track)
    instants.append(Instant(track: track, name: name, category: category, time: time, opened: slices.count, args: args))
  }

  /// The moment `time`, now, inside slice `slice`.
  public func moment(in slice: Int, at time: Int64) -> Moment {
    Moment(slice: slice, time: time, opened: slices.count)
  }

  /// Adds an arrow from `moment` (a submit, a send) to the start of slice
  /// `to` (the job, the message's handling).
  public mutating func addFlow(_ name: String, from moment: Moment, to: Int) {
    flows.append(Flow(name: name, from: moment, to: to))
  }

  /// Ends every open slice at `time`; each but those of the main track is
  /// marked `unfinished` (the run ended first).
  public mutating func closeAll(at time: Int64) {
    for index in slices.indices where slices[index].end == nil {
      close(index, at: time, args: slices[index].track.kind == .main ? [] : [.init("unfinished", .boolean(true))])
    }
  }

  /// Seconds as the timeline's nanoseconds, held within ±2^62 so that any
  /// two times subtract without overflow (virtual time may leap ahead).
  public static func nanoseconds(_ seconds: Double) -> Int64 {
    let limit = 4.6e18
    let value = (seconds * 1e9).rounded()
    guard !value.isNaN else { return 0 }
    return Int64(max(-limit, min(limit, value)))
  }

  // MARK: Events

  /// The timeline's events as process `pid`, its times moved `offset`
  /// nanoseconds; flows are numbered from `flowID` on (it is advanced).
  func events(pid: Int, offset: Int64, flowID: inout Int) -> [ChromeTraceEvent] {
    let tracks = firstSeen.keys.sorted { ($0.kind, firstSeen[$0]!) < ($1.kind, firstSeen[$1]!) }
    var lanesOf: [Track: [Int]] = [:]
    var laneOfSlice = [Int](repeating: 0, count: slices.count)
    for (index, slice) in slices.enumerated() { lanesOf[slice.track, default: []].append(index) }
    var laneCount: [Track: Int] = [:]
    for (track, indices) in lanesOf {
      laneCount[track] = assignLanes(indices, nesting: track.kind.nests, into: &laneOfSlice)
    }
    var events: [ChromeTraceEvent] = [.metadata("process_name", pid: pid, tid: 0, value: .string(LuaString(name)))]
    events.append(.metadata("process_sort_index", pid: pid, tid: 0, value: .integer(Int64(pid))))
    var firstTid: [Track: Int] = [:]
    var tid = 1
    for track in tracks {
      firstTid[track] = tid
      let lanes = max(1, laneCount[track] ?? 0)
      for lane in 0..<lanes {
        let title = lane == 0 ? track.title : "\(track.title) (\(lane + 1))"
        events.append(.metadata("thread_name", pid: pid, tid: tid, value: .string(LuaString(title))))
        events.append(.metadata("thread_sort_index", pid: pid, tid: tid, value: .integer(Int64(tid))))
        tid += 1
      }
    }
    func tidOf(_ slice: Int) -> Int { firstTid[slices[slice].track]! + laneOfSlice[slice] }
    // Each event's place among those of its time: a slice where it opened,
    // a mark or an arrow's start after the slices opened before it, and an
    // arrow's end right after its slice (on top of the track's stack).
    for (index, slice) in slices.enumerated() {
      let end = slice.end ?? slice.start
      var event = ChromeTraceEvent(
        phase: .complete, name: slice.name, category: slice.category, time: offset + slice.start,
        duration: end - slice.start, pid: pid, tid: tidOf(index), args: slice.args)
      event.place = (index, 1)
      events.append(event)
    }
    for instant in instants {
      var event = ChromeTraceEvent(
        phase: .instant, name: instant.name, category: instant.category, time: offset + instant.time, pid: pid,
        tid: firstTid[instant.track]!, args: instant.args)
      event.place = (instant.opened, 0)
      events.append(event)
    }
    for flow in flows {
      var start = ChromeTraceEvent(
        phase: .flowStart, name: flow.name, category: "flow", time: offset + flow.from.time, pid: pid,
        tid: tidOf(flow.from.slice), id: flowID)
      start.place = (flow.from.opened, 0)
      var end = ChromeTraceEvent(
        phase: .flowEnd, name: flow.name, category: "flow", time: offset + slices[flow.to].start, pid: pid,
        tid: tidOf(flow.to), id: flowID)
      end.place = (flow.to, 2)
      events += [start, end]
      flowID += 1
    }
    return events
  }

  /// Gives each of a track's slices `indices` a lane, the first where it
  /// fits: after the lane's slices, or (with `nesting`) inside the lane's
  /// innermost slice still open at its start; returns how many lanes it took.
  private func assignLanes(_ indices: [Int], nesting: Bool, into laneOfSlice: inout [Int]) -> Int {
    func end(_ index: Int) -> Int64 { slices[index].end ?? slices[index].start }
    // By start, and at one start in the order they opened (a slice opens
    // before those inside it, and after one that ended at once): the order
    // the file lists them in, which is how a reader stacks them.
    let ordered = indices.sorted { a, b in
      slices[a].start != slices[b].start ? slices[a].start < slices[b].start : a < b
    }
    // Each lane's open slices' ends, outermost first.
    var lanes: [[Int64]] = []
    for index in ordered {
      let start = slices[index].start
      let finish = end(index)
      var placed = false
      for lane in lanes.indices {
        // A slice that ended by this start is behind every later one too.
        while let last = lanes[lane].last, last <= start { lanes[lane].removeLast() }
        if let last = lanes[lane].last, finish > last || !nesting { continue }
        lanes[lane].append(finish)
        laneOfSlice[index] = lane
        placed = true
        break
      }
      if !placed {
        lanes.append([finish])
        laneOfSlice[index] = lanes.count - 1
      }
    }
    return lanes.count
  }

  private mutating func see(_ track: Track) {
    if firstSeen[track] == nil { firstSeen[track] = firstSeen.count }
  }
}
