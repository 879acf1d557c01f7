import LuaKit

/// Reads a run's trace events into a timeline, one event at a time: which
/// event opens or ends which slice, on which track. Tasks, queue jobs,
/// machine messages and their commands, action spans, workflow steps and a
/// spec's tests become slices; a submit and a send become arrows to the job
/// and the message's handling; log lines and other events become instants.
struct TraceTimeline {
  typealias Track = ChromeTimeline.Track
  typealias Anchor = ChromeTimeline.Moment

  /// A task seen spawned, and its slices.
  private struct TaskLife {
    var track: Track
    var spawned: Int64
    var args: [TraceEvent.Field]
    var slice: Int?
    var wait: Int?
  }

  /// A queue's job, by its queue's bytes and its number in the queue.
  private struct JobKey: Hashable {
    var queue: LuaString
    var sequence: LuaValue
  }

  /// A workflow's step, by their bytes.
  private struct StepKey: Hashable {
    var workflow: LuaString
    var step: LuaString
  }

  /// A machine: its mailbox's senders, the message it handles and the
  /// commands that message issued. A machine handles one message at a
  /// time and carries out its commands one after another, in order, so
  /// the sequence of events says when each command starts.
  private struct MachineLife {
    var track: Track
    var mailbox: [Anchor] = []
    var mailboxHead = 0
    var message: Int?
    /// When the message's last command ended (the message ends there).
    var lastActivity: Int64 = 0
    var commands: [LuaString] = []
    var commandsHead = 0
    var command: Int?
  }

  private(set) var timeline: ChromeTimeline
  private let main: Track
  /// The latest time seen.
  private var now: Int64 = 0
  /// Open slices per track, in the order they opened.
  private var open: [Track: [Int]] = [:]
  /// Open action spans per track, with the action's bytes.
  private var actions: [Track: [(slice: Int, name: LuaString)]] = [:]
  private var tasks: [Int: TaskLife] = [:]
  private var submits: [JobKey: Anchor] = [:]
  private var jobs: [JobKey: Int] = [:]
  private var machines: [LuaString: MachineLife] = [:]
  private var steps: [StepKey: Int] = [:]
  private var test: Int?

  /// A timeline for the process `process`, whose main chunk (and the work
  /// of the loop itself) is drawn on the track `mainTrack`.
  init(process: String, mainTrack: String) {
    timeline = ChromeTimeline(name: process)
    main = Track(.main, LuaString(mainTrack))
    open[main] = [timeline.open(main, process, category: "run", at: 0)]
  }

  /// The timeline as it stands: a machine's last message ends where its
  /// last command did, and every slice still open ends at the latest event.
  var finished: ChromeTimeline {
    var copy = self
    for (name, var life) in machines where life.message != nil && life.command == nil {
      copy.endMessage(&life)
      copy.machines[name] = life
    }
    copy.timeline.closeAll(at: now)
    return copy.timeline
  }

  /// Takes the next event.
  mutating func take(_ event: TraceEvent) {
    let time = max(0, ChromeTimeline.nanoseconds(event.time))
    now = max(now, time)
    switch event.kind {
    case "task.spawned": taskSpawned(event, time)
    case "task.started": taskStarted(event, time)
    case "task.waiting": taskWaiting(event, time)
    case "task.resumed": taskResumed(event, time)
    case "task.done", "task.failed", "task.cancelled": taskEnded(event, time)
    case "timer.set", "timer.fired": break
    case "job.submitted": jobSubmitted(event, time)
    case "job.started": jobStarted(event, time)
    case "job.finished", "job.failed", "job.cancelled": jobEnded(event, time)
    case "machine.started", "machine.handled", "machine.dropped": machineTakes(event, time)
    case "machine.received": machineReceived(event, time)
    case "machine.state": machineState(event)
    case "machine.command": machineCommand(event, time)
    case "machine.interpreted", "machine.command_failed": machineInterpreted(event, time)
    case "machine.stopped": machineStopped(event, time)
    case "action.started": actionStarted(event, time)
    case "action.finished", "action.failed": actionEnded(event, time)
    case "workflow.step.started": stepStarted(event, time)
    case "workflow.step.succeeded", "workflow.step.failed", "workflow.step.skipped", "workflow.step.reused":
      stepEnded(event, time)
    case "test.started": testStarted(event, time)
    case "test.finished": testEnded(event, time)
    default: instant(event, time)
    }
  }

  // MARK: Tracks and slices

  /// The track of the task the event happened in, else the main one.
  private func actor(_ event: TraceEvent) -> Track {
    event.task.flatMap { tasks[$0]?.track } ?? main
  }

  /// Where an arrow starts: a mark (a slice of no length, `name`) on the
  /// track of the task the event happened in. A reader binds the arrow to
  /// the slice on top of that track, which the mark puts there.
  private mutating func anchor(_ event: TraceEvent, _ time: Int64, _ name: String) -> Anchor {
    let mark = timeline.add(actor(event), name, category: "flow", from: time, to: time, args: event.fields)
    return timeline.moment(in: mark, at: time)
  }

  private mutating func openSlice(
    _ track: Track, _ name: String, _ category: String, _ time: Int64, _ args: [TraceEvent.Field] = []
  ) -> Int {
    let index = timeline.open(track, name, category: category, at: time, args: args)
    open[track, default: []].append(index)
    return index
  }

  private mutating func closeSlice(_ index: Int, _ time: Int64, _ args: [TraceEvent.Field] = []) {
    guard timeline.isOpen(index) else { return }
    let track = timeline.slices[index].track
    timeline.close(index, at: time, args: args)
    open[track]?.removeAll { $0 == index }
    if open[track]?.isEmpty == true { open[track] = nil }
  }

  // MARK: Tasks

  private mutating func taskSpawned(_ event: TraceEvent, _ time: Int64) {
    guard let id = event.int("id") else { return instant(event, time) }
    let label = event.bytes("label") ?? LuaString("task \(id)")
    tasks[id] = TaskLife(track: Track(.task, label, number: id), spawned: time, args: event.fields)
  }

  private mutating func taskStarted(_ event: TraceEvent, _ time: Int64) {
    guard let id = event.int("id"), var life = tasks[id], life.slice == nil else { return }
    life.slice = openSlice(life.track, life.track.name.lossyString, "task", time, life.args)
    tasks[id] = life
  }

  private mutating func taskWaiting(_ event: TraceEvent, _ time: Int64) {
    guard let id = event.int("id"), var life = tasks[id] else { return }
    if let wait = life.wait { closeSlice(wait, time) }
    let subject = event.bytes("on")?.lossyString ?? "wait"
    life.wait = openSlice(life.track, subject, "wait", time, [.init("on", event["on"] ?? .nil)])
    tasks[id] = life
  }

  private mutating func taskResumed(_ event: TraceEvent, _ time: Int64) {
    guard let id = event.int("id"), var life = tasks[id], let wait = life.wait else { return }
    closeSlice(wait, time)
    life.wait = nil
    tasks[id] = life
  }

  private mutating func taskEnded(_ event: TraceEvent, _ time: Int64) {
    guard let id = event.int("id"), let life = tasks.removeValue(forKey: id) else { return }
    let status = String(event.kind.dropFirst("task.".count))
    var args: [TraceEvent.Field] = [.init("status", .string(LuaString(status)))]
    if let error = event["error"] { args.append(.init("error", error)) }
    // Whatever it left open (a wait, an action it never finished) ends with it.
    for index in (open[life.track] ?? []).reversed() where index != life.slice {
      closeSlice(index, time, [.init("unfinished", .boolean(true))])
    }
    actions[life.track] = nil
    if let slice = life.slice {
      closeSlice(slice, time, args)
    } else {
      // Never resumed: Swift work, or cancelled before its start.
      timeline.add(life.track, life.track.name.lossyString, category: "task", from: life.spawned, to: time, args: life.args + args)
    }
  }

  // MARK: Queues

  private func jobKey(_ event: TraceEvent) -> JobKey? {
    guard let queue = event.bytes("queue"), let sequence = event["seq"] else { return nil }
    return JobKey(queue: queue, sequence: sequence)
  }

  private static func jobName(_ key: JobKey) -> String { "\(key.queue.lossyString)#\(key.sequence)" }

  private mutating func jobSubmitted(_ event: TraceEvent, _ time: Int64) {
    guard let key = jobKey(event) else { return }
    submits[key] = anchor(event, time, "submit \(Self.jobName(key))")
  }

  private mutating func jobStarted(_ event: TraceEvent, _ time: Int64) {
    guard let key = jobKey(event) else { return }
    let slice = openSlice(Track(.queue, key.queue), Self.jobName(key), "job", time, event.fields)
    jobs[key] = slice
    if let submit = submits.removeValue(forKey: key) { timeline.addFlow("submit", from: submit, to: slice) }
  }

  private mutating func jobEnded(_ event: TraceEvent, _ time: Int64) {
    guard let key = jobKey(event) else { return }
    let status = String(event.kind.dropFirst("job.".count))
    var args: [TraceEvent.Field] = [.init("status", .string(LuaString(status)))]
    if let error = event["error"] { args.append(.init("error", error)) }
    if let slice = jobs.removeValue(forKey: key) {
      closeSlice(slice, time, args)
    } else {
      // Cancelled while it waited: its turn came and it never ran.
      let slice = timeline.add(Track(.queue, key.queue), Self.jobName(key), category: "job", from: time, to: time, args: event.fields + args)
      if let submit = submits.removeValue(forKey: key) { timeline.addFlow("submit", from: submit, to: slice) }
    }
  }

  // MARK: Machines

  private func machineName(_ event: TraceEvent) -> LuaString? { event.bytes("machine") }

  private mutating func withMachine(_ name: LuaString, _ body: (inout MachineLife) -> Void) {
    var life = machines[name] ?? MachineLife(track: Track(.machine, name))
    body(&life)
    machines[name] = life
  }

  private mutating func machineReceived(_ event: TraceEvent, _ time: Int64) {
    guard let name = machineName(event) else { return }
    let sender = anchor(event, time, "send \(event.bytes("message")?.lossyString ?? "message")")
    withMachine(name) { $0.mailbox.append(sender) }
  }

  /// The machine starts (its initial state's `enter`), handles a message or
  /// drops one: the previous message is over, this one begins.
  private mutating func machineTakes(_ event: TraceEvent, _ time: Int64) {
    guard let name = machineName(event) else { return }
    var life = machines[name] ?? MachineLife(track: Track(.machine, name))
    endMessage(&life)
    let label = event.kind == "machine.started" ? "start" : (event.bytes("message")?.lossyString ?? "message")
    var args = event.fields
    if event.kind == "machine.dropped" { args.append(.init("dropped", .boolean(true))) }
    let slice = openSlice(life.track, label, event.kind == "machine.started" ? "machine" : "message", time, args)
    if event.kind != "machine.started", life.mailboxHead < life.mailbox.count {
      let sender = life.mailbox[life.mailboxHead]
      life.mailboxHead += 1
      if life.mailboxHead > 64 && life.mailboxHead * 2 > life.mailbox.count {
        life.mailbox.removeFirst(life.mailboxHead)
        life.mailboxHead = 0
      }
      timeline.addFlow("send", from: sender, to: slice)
    }
    life.lastActivity = time
    if event.kind == "machine.dropped" {
      closeSlice(slice, time)
    } else {
      life.message = slice
    }
    machines[name] = life
  }

  private mutating func machineState(_ event: TraceEvent) {
    guard let name = machineName(event), let slice = machines[name]?.message else { return }
    timeline.addArgs(slice, [.init("from", event["from"] ?? .nil), .init("to", event["to"] ?? .nil)])
  }

  private mutating func machineCommand(_ event: TraceEvent, _ time: Int64) {
    guard let name = machineName(event), let command = event.bytes("command") else { return }
    var life = machines[name] ?? MachineLife(track: Track(.machine, name))
    life.commands.append(command)
    if life.command == nil { startNextCommand(&life, time) }
    machines[name] = life
  }

  private mutating func machineInterpreted(_ event: TraceEvent, _ time: Int64) {
    guard let name = machineName(event), let command = event.bytes("command"), var life = machines[name],
      let open = life.command
    else { return }
    // A command no interpreter took leaves no event: the one that ended is
    // the first pending of its name, and it began where the open one did.
    var index = life.commandsHead
    while index < life.commands.count && life.commands[index] != command { index += 1 }
    guard index < life.commands.count else { return }
    var args: [TraceEvent.Field] = []
    if let error = event["error"] { args = [.init("status", .string("failed")), .init("error", error)] }
    if index > life.commandsHead {
      timeline.rename(open, to: command.lossyString)
      timeline.addArgs(open, [.init("command", .string(command))])
    }
    closeSlice(open, time, args)
    life.commandsHead = index + 1
    life.command = nil
    life.lastActivity = time
    if life.commandsHead < life.commands.count { startNextCommand(&life, time) }
    machines[name] = life
  }

  private mutating func startNextCommand(_ life: inout MachineLife, _ time: Int64) {
    guard life.commandsHead < life.commands.count else { return }
    let command = life.commands[life.commandsHead]
    life.command = openSlice(life.track, command.lossyString, "command", time, [.init("command", .string(command))])
  }

  /// Ends the message being handled where its last command ended; a
  /// command still open never ran (no interpreter took it).
  private mutating func endMessage(_ life: inout MachineLife) {
    if let command = life.command {
      closeSlice(command, timeline.slices[command].start, [.init("interpreted", .boolean(false))])
      life.command = nil
    }
    life.commands.removeAll()
    life.commandsHead = 0
    if let message = life.message { closeSlice(message, life.lastActivity) }
    life.message = nil
  }

  private mutating func machineStopped(_ event: TraceEvent, _ time: Int64) {
    guard let name = machineName(event) else { return }
    var life = machines[name] ?? MachineLife(track: Track(.machine, name))
    life.lastActivity = time
    endMessage(&life)
    life.mailbox.removeAll()
    life.mailboxHead = 0
    timeline.addInstant(life.track, "stopped", category: "machine", at: time, args: event.fields)
    machines[name] = life
  }

  // MARK: Actions

  private mutating func actionStarted(_ event: TraceEvent, _ time: Int64) {
    guard let name = event.bytes("action") else { return instant(event, time) }
    let track = actor(event)
    let slice = openSlice(track, name.lossyString, "action", time, event.fields)
    actions[track, default: []].append((slice, name))
  }

  private mutating func actionEnded(_ event: TraceEvent, _ time: Int64) {
    guard let name = event.bytes("action") else { return instant(event, time) }
    let track = actor(event)
    var args = event.fields.filter { $0.name != "action" }
    args.append(.init("status", .string(event.kind == "action.failed" ? "failed" : "finished")))
    if let position = actions[track]?.lastIndex(where: { $0.name == name }) {
      let slice = actions[track]!.remove(at: position).slice
      closeSlice(slice, time, args)
    } else {
      // Its start reached the trace elsewhere (or never): the span still
      // says how long it took.
      let seconds = event["duration"]?.numberValue ?? 0
      let start = max(0, time - max(0, ChromeTimeline.nanoseconds(seconds)))
      timeline.add(track, name.lossyString, category: "action", from: start, to: time, args: [.init("action", .string(name))] + args)
    }
  }

  // MARK: Workflows and tests

  private func stepKey(_ event: TraceEvent) -> StepKey? {
    guard let step = event.bytes("step") else { return nil }
    return StepKey(workflow: event.bytes("workflow") ?? "workflow", step: step)
  }

  private mutating func stepStarted(_ event: TraceEvent, _ time: Int64) {
    guard let key = stepKey(event) else { return }
    if let earlier = steps[key] { closeSlice(earlier, time) }
    steps[key] = openSlice(Track(.workflow, key.workflow), key.step.lossyString, "step", time, event.fields)
  }

  private mutating func stepEnded(_ event: TraceEvent, _ time: Int64) {
    guard let key = stepKey(event) else { return }
    let status = String(event.kind.dropFirst("workflow.step.".count))
    let args = [TraceEvent.Field("status", .string(LuaString(status)))] + event.fields.filter { $0.name != "workflow" && $0.name != "step" }
    if let slice = steps.removeValue(forKey: key) {
      closeSlice(slice, time, args)
    } else {
      let names = event.fields.filter { $0.name == "workflow" || $0.name == "step" }
      timeline.add(Track(.workflow, key.workflow), key.step.lossyString, category: "step", from: time, to: time, args: names + args)
    }
  }

  private mutating func testStarted(_ event: TraceEvent, _ time: Int64) {
    if let test { closeSlice(test, time) }
    test = openSlice(main, event.bytes("name")?.lossyString ?? "test", "test", time, event.fields)
  }

  private mutating func testEnded(_ event: TraceEvent, _ time: Int64) {
    guard let slice = test else { return }
    closeSlice(slice, time, event.fields.filter { $0.name != "name" })
    test = nil
  }

  /// Any other event: a moment on the track of the task it happened in
  /// (an analytics event is named by its `event` field).
  private mutating func instant(_ event: TraceEvent, _ time: Int64) {
    let name = event.kind == "action.event" ? (event.bytes("event")?.lossyString ?? event.kind) : event.kind
    let category = event.kind.split(separator: ".", maxSplits: 1).first.map(String.init) ?? event.kind
    let track = event.kind.hasPrefix("machine.") ? machineName(event).map { Track(.machine, $0) } ?? actor(event) : actor(event)
    timeline.addInstant(track, name, category: category, at: time, args: event.fields)
  }
}

extension TraceEvent {
  /// The field `name` as bytes, if it is a string.
  fileprivate func bytes(_ name: String) -> LuaString? {
    if case .string(let bytes)? = self[name] { return bytes }
    return nil
  }

  /// The field `name` as a whole number, if it is one.
  fileprivate func int(_ name: String) -> Int? {
    if case .integer(let value)? = self[name] { return Int(exactly: value) }
    return nil
  }
}
