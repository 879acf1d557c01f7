import LuaKit

/// Runs one machine on the loop thread: its mailbox (one message at a time,
/// never re-entrantly), its current state, and the commands each step
/// issues, carried out in order by the interpreters. A machine starts by
/// entering its initial state, before its first message. Timers started by
/// the `after` command are cancelled when the machine leaves their state.
///
/// Lua's handle keeps a driver alive, and so does its pending work (the
/// loop's turn that processes its mailbox, a Swift interpreter running one
/// of its commands, its timers) and any `send` function an interpreter
/// kept: a machine Lua cannot reach is freed once it has settled.
public final class MachineDriver {
  /// What the machine does.
  public let behavior: any MachineBehavior
  // Safe without reference counting: the core outlives every driver. A
  // driver is owned only by (1) Lua values (its userdata and its `send`
  // function), which live in the core's state: the core closes it in
  // `shutDown`, which its deinit runs first, so they are all released
  // while the core is whole; (2) closures held by the core's scheduler
  // (deferred work, timers) and completions: they are destroyed with the
  // core, and a driver released then runs only its deinit, which never
  // touches `core`; (3) Swift code given a driver on the loop thread
  // (`MachineSystem.all`, `machine(named:)`), which may use it only
  // while the runtime runs, as everything else of the loop thread.
  unowned(unsafe) let core: RuntimeCore
  /// The runtime's live machines, this one among them until its deinit.
  private let registry: LiveObjects<MachineDriver>
  /// This driver's id in `registry` (and in `sendFunctions`).
  private var registration = 0
  /// Each machine's `send` function by id, weakly (see `pushSendFunction`).
  private let sendFunctions: LuaReference
  // Held here as well (neither refers back to a driver): read through
  // `core`, each per-message use would retain and release them.
  private let traceLog: Trace
  private let interpreters: InterpreterRegistry
  /// The current state's position in `behavior.states`.
  private(set) var position: Int
  /// The current state's name.
  public var state: LuaString { behavior.states[position] }
  private let mailbox = Deque<MachineMessage>()
  private var busy = false
  /// True once stopped: sending is then an error.
  public var isStopped: Bool { stopped }
  // Private: the compiler proves exclusive every access to a property no
  // other module can reach, so the checks of each message cost nothing at
  // run time (a public stored property keeps a run-time check).
  private var stopped = false
  private var timers: [(state: Int, id: Int, token: Int)] = []
  private var nextTimerToken = 1
  private var settleWaits: [Wait] = []
  /// Failures since the last settle, kept in the runtime's log (see
  /// `MachineFailures`).
  private let failureLog: MachineFailures
  private var failures: [String] {
    get { failureLog.messages(of: registration) }
    set { failureLog.set(newValue, of: registration, machine: name) }
  }
  /// In `lunar graph`, machines are built but never run.
  let inert: Bool
  /// The log of the workflow step attempt that started the machine, if
  /// any: its `log` lines are kept there too (nothing once the attempt ended).
  private let stepLog: StepLog?

  /// A driver for `behavior`, made on `thread`, a thread of the core's
  /// state; `sendFunctions` is a weak-valued table that caches the
  /// machines' `send` functions.
  init(behavior: any MachineBehavior, core: RuntimeCore, inert: Bool, sendFunctions: LuaReference, on thread: some LuaStack) {
    stepLog = core.scheduler.currentTask?.stepLog
    self.behavior = behavior
    self.core = core
    traceLog = core.trace
    let machines = core.component(MachineSystem.self)
    interpreters = machines.interpreters
    self.inert = inert
    self.sendFunctions = sendFunctions
    position = behavior.initial
    failureLog = machines.failures
    registry = machines.live
    thread.push(false)  // see `releaseSendFunction`
    sendFunctionAnchor = LuaReference(popping: thread, in: core.state)
    registration = registry.add(self)
    if !inert { start() }
  }

  deinit { registry.remove(registration) }

  /// The machine's name.
  public var name: LuaString { behavior.name }

  /// Messages waiting in the mailbox.
  public var mailboxCount: Int { mailbox.count }

  /// True when the mailbox is empty and no command is running.
  public var isSettled: Bool { !busy && mailboxCount == 0 }

  /// True while a timer it started (`after`) has not fired.
  public var hasTimers: Bool { !timers.isEmpty }

  // MARK: Starting

  /// Enters the initial state: its `enter` runs and its commands are
  /// carried out on the loop, like a first message, so before any message
  /// sent after the machine was made (and never re-entrantly inside the
  /// call that made it). Until then the machine is busy, so `settle`
  /// waits for the start too.
  private func start() {
    busy = true
    core.scheduler.later { [self] L in
      let lua = views.on(L)
      guard !isStopped, let commands = enterInitialState(on: lua) else { return processMessages(on: L) }
      if runCommands(commands, from: 0, on: lua) { processMessages(on: L) }
    }
  }

  /// Runs the initial state's `enter`; the commands to carry out, or nil
  /// if it failed (the failure is raised by the next settle).
  private func enterInitialState(on lua: LuaState) -> [Command]? {
    trace("machine.started", [.init("state", .string(state))])
    let commands: [Command]
    do {
      commands = try behavior.enter(position, on: lua)
    } catch {
      failures.append(describe(error))
      return nil
    }
    if traceLog.isEnabled {
      for command in commands { trace("machine.command", [.init("command", .string(command.name))]) }
    }
    return commands
  }

  // MARK: Sending

  /// Puts a message in the mailbox; it is handled after those before it.
  public func send(_ message: MachineMessage) throws {
    guard !isStopped else { throw MachineError("machine '\(name)' is stopped") }
    if inert { return }
    mailbox.append(message)
    trace("machine.received", [.init("message", .string(message.name))])
    schedule()
  }

  /// Stops the machine: its timers are cancelled and its mailbox emptied.
  public func stop() {
    stopped = true
    for timer in timers { core.scheduler.timers.cancel(timer.id) }
    timers.removeAll()
    mailbox.removeAll()
    trace("machine.stopped", [])
    if !busy { notifySettled() }
  }

  /// The pure step: the next state and every command (exit, handler,
  /// enter) that `message` would give in `state`, without changing anything
  /// or running an interpreter. `handled` is false for an unhandled message.
  public func step(_ message: MachineMessage, in state: LuaString? = nil, on L: OpaquePointer) throws
    -> (state: LuaString, commands: [Command], handled: Bool)
  {
    let states = behavior.states
    guard let from = state.map({ states.firstIndex(of: $0) }) ?? position else {
      throw MachineError("machine '\(name)': unknown state '\(state ?? "?")'")
    }
    let lua = views.on(L)
    guard let (next, commands) = try behavior.step(from, message, on: lua) else { return (states[from], [], false) }
    guard let next else { return (states[from], commands, true) }
    return (states[next], try behavior.exit(from, on: lua) + commands + behavior.enter(next, on: lua), true)
  }

  // MARK: Processing

  /// How many messages a machine handles in a row before the loop runs
  /// other work: enough to skip a round trip per message, few enough to be
  /// fair to other machines and tasks.
  private static let messagesPerTurn = 64

  private func schedule() {
    guard !busy else { return }
    busy = true
    core.scheduler.later { [self] L in processMessages(on: L) }
  }

  /// Handles messages in order, each with its commands, up to
  /// `messagesPerTurn`; then comes back through the loop. A command carried
  /// out by Swift suspends this: its completion resumes the machine.
  private func processMessages(on L: OpaquePointer) {
    let lua = views.on(L)
    for _ in 0..<Self.messagesPerTurn {
      guard !isStopped, !mailbox.isEmpty else {
        busy = false
        releaseSendFunction(on: lua)
        notifySettled()
        return
      }
      guard let commands = handleNext(on: lua) else { continue }
      guard runCommands(commands, from: 0, on: lua) else { return }
    }
    core.scheduler.later { [self] L in processMessages(on: L) }
  }

  /// Takes the next message and steps the machine; the commands to carry
  /// out, or nil when the message was dropped or the step failed.
  private func handleNext(on lua: LuaState) -> [Command]? {
    let message = mailbox.popFirst()!
    let commands: [Command]
    do {
      let from = position
      guard let (next, issued) = try behavior.step(from, message, on: lua) else {
        unhandled(message)
        return nil
      }
      trace("machine.handled", [.init("message", .string(message.name)), .init("state", .string(state))])
      // Naming a state always transitions, to the current one too: exit,
      // then enter, so its timers start again (as `transition(to:)` in the
      // state machine this follows). Naming none stays.
      if let next {
        let exitCommands = try behavior.exit(from, on: lua)
        if !timers.isEmpty {
          for timer in timers where timer.state == from { core.scheduler.timers.cancel(timer.id) }
          timers.removeAll { $0.state == from }
        }
        position = next
        trace("machine.state", [
          .init("from", .string(behavior.states[from])), .init("to", .string(state)),
          .init("message", .string(message.name)),
        ])
        let enterCommands = try behavior.enter(next, on: lua)
        commands = exitCommands.isEmpty && enterCommands.isEmpty ? issued : exitCommands + issued + enterCommands
      } else {
        commands = issued
      }
    } catch {
      failures.append(describe(error))
      return nil
    }
    if traceLog.isEnabled {
      for command in commands { trace("machine.command", [.init("command", .string(command.name))]) }
    }
    return commands
  }

  private static let commandFailedName: LuaString = "command_failed"

  private func unhandled(_ message: MachineMessage) {
    trace("machine.dropped", [.init("message", .string(message.name)), .init("state", .string(state))])
    if message.name == Self.commandFailedName {
      let error = message.value["error"].stringValue ?? "?"
      let command = message.value["command"]
      failures.append("machine '\(name)': command \(command) failed: \(error)")
    } else if behavior.strict {
      failures.append("machine '\(name)': state '\(state)' does not handle message '\(message.name)'")
    }
  }

  /// Carries out `commands[start...]` in order on the loop's thread `lua`;
  /// false if a Swift interpreter took over (its completion resumes).
  private func runCommands(_ commands: [Command], from start: Int, on lua: LuaState) -> Bool {
    var index = start
    while index < commands.count, !isStopped {
      let command = commands[index]
      index += 1
      switch interpreters.entry(for: command.name) {
      case .lua(let interpreter):
        let rest = index
        guard runLua(interpreter, command, on: lua, then: { [self] in resume(commands, from: rest) }) else { return false }
      case .swift(let registered):
        let rest = index
        runSwift(interpreters.swiftInterpreter(at: registered), command) { [self] in resume(commands, from: rest) }
        return false
      case .after:
        startTimer(command)
        interpreted(command)
      case .log:
        log(command)
      case .emit:
        emit(command)
      case nil:
        failures.append("machine '\(name)': unknown command '\(command.name)' (no interpreter registered)")
      }
    }
    return true
  }

  /// The built-in `log`: its arguments, as text, to the trace and the log.
  private func log(_ command: Command) {
    let text = command.arguments.map { $0.stringValue ?? $0.description }.joined(separator: " ")
    trace("machine.log", [.init("text", .string(LuaString(text)))])
    LogLine.write("[\(name)] \(text)")
    stepLog?.appendLine("[\(name)] \(text)")
    interpreted(command)
  }

  /// The built-in `emit`: a trace event named by the first argument, with
  /// the fields of the second.
  private func emit(_ command: Command) {
    var fields: [TraceEvent.Field] = [.init("machine", .string(name))]
    if case .table(let table) = command.arguments.dropFirst().first ?? .nil {
      for (key, value) in table.fields.sorted(by: { $0.key.description < $1.key.description }) {
        fields.append(.init(key.description, value))
      }
    }
    traceLog.emit(command.arguments.first?.stringValue ?? "machine.emit", fields)
    interpreted(command)
  }

  /// After a Swift interpreter: the remaining commands, then the next
  /// messages, back on the loop.
  private func resume(_ commands: [Command], from index: Int) {
    core.scheduler.later { [self] L in
      if runCommands(commands, from: index, on: views.on(L)) { processMessages(on: L) }
    }
  }

  private func startTimer(_ command: Command) {
    let arguments = command.arguments
    guard let seconds = arguments.first?.numberValue, seconds >= 0, seconds.isFinite,
      let message = arguments.dropFirst().first.flatMap(MachineMessage.init(value:))
    else {
      failures.append("machine '\(name)': command \(command) must be { \"after\", seconds, message } (seconds: a non-negative finite number)")
      return
    }
    let token = nextTimerToken
    nextTimerToken += 1
    let id = core.scheduler.timers.schedule(at: core.clock.deadline(after: seconds)) { [self] in
      guard !self.isStopped else { return }
      self.timers.removeAll { $0.token == token }
      try? self.send(message)
    }
    timers.append((position, id, token))
  }

  /// Calls a Lua interpreter as `fn(cmd, send)` in a task of its own,
  /// started at once. True when it finished without waiting; otherwise
  /// it waits as any task does (other machines and tasks go on, and waits
  /// end in the order their times come) and `next` carries on with this
  /// machine's remaining commands once it is done, as the order requires.
  private func runLua(
    _ interpreter: LuaInterpreter, _ command: Command, on lua: LuaState, then next: @escaping () -> Void
  ) -> Bool {
    let base = lua.top
    interpreter.function.push(on: lua)
    if (try? command.push(on: lua, name: interpreter.name)) == nil { lua.pushNil() }
    pushSendFunction(on: lua)
    let scheduler = core.scheduler
    let task = scheduler.prepare(
      on: lua.L, function: base + 1, arguments: 2, label: "interpreter of '\(command.name)' (machine '\(name)')",
      traced: false)
    lua.top = base
    task.observed = true
    if scheduler.startNow(task, from: lua.L) {
      interpreterEnded(command, task)
      return true
    }
    task.onFinish.append { [self] task in
      interpreterEnded(command, task)
      next()
    }
    return false
  }

  private func interpreterEnded(_ command: Command, _ task: LuaTask) {
    core.scheduler.forgetFailure(of: task)
    if task.status == .done {
      interpreted(command)
    } else {
      commandFailed(command, task.errorMessage ?? task.status.rawValue)
    }
  }

  /// Pushes the `send` function interpreters receive. An interpreter may
  /// keep it, so it keeps the machine alive; the driver must not keep it
  /// in turn while idle (a cycle through the registry Lua could never
  /// collect), so it is cached where Lua may let it go, a weak-valued table
  /// (made again after a collection took it), and anchored only while the
  /// machine works through its mailbox (see `releaseSendFunction`).
  private func pushSendFunction(on lua: LuaState) {
    if holdsSendFunction {
      sendFunctionAnchor.push(on: lua)
      return
    }
    sendFunctions.push(on: lua)
    if lua.pushField(registration, of: -1) != .function {
      lua.pop()
      lua.push(function: { [self] call in
        try self.send(try call.message(1))
        return .none
      })
      lua.pushValue(at: -1)
      lua.setField(registration, of: -3)
    }
    lua.remove(at: -2)
    lua.pushValue(at: -1)
    sendFunctionAnchor.replace(popping: lua)
    holdsSendFunction = true
  }

  /// Lets go of the `send` function once the mailbox is empty: the machine
  /// is idle, and only Lua's own references may keep it now.
  private func releaseSendFunction(on lua: LuaState) {
    guard holdsSendFunction else { return }
    // False, not nil: a nil slot in the registry's array part may be handed
    // out again by luaL_ref, which finds free slots by the length.
    lua.push(false)
    sendFunctionAnchor.replace(popping: lua)
    holdsSendFunction = false
  }

  /// Holds the `send` function while the machine works (false in between).
  private let sendFunctionAnchor: LuaReference
  /// True while the anchor holds the function.
  private var holdsSendFunction = false
  private let views = BorrowedLuaState()

  private func runSwift(_ interpreter: any CommandInterpreter, _ command: Command, then next: @escaping () -> Void) {
    let inbox = core.inbox
    let name = self.name
    let id = registration
    let context = InterpreterContext(
      machine: name,
      // Feedback reaches this machine if it is still alive; the completion
      // below keeps it so until the interpreter is done.
      send: { message in
        inbox.post { core in try? core.component(MachineSystem.self).live.object(id)?.send(message) }
      },
      services: core.services)
    core.offLoopWork.start({ () async -> String? in
      do {
        try await interpreter.interpret(command, in: context)
        return nil
      } catch {
        return String(describing: error)
      }
    }) { [self] failure in
      if let failure { self.commandFailed(command, failure) } else { self.interpreted(command) }
      next()
    }
  }

  private func interpreted(_ command: Command) {
    trace("machine.interpreted", [.init("command", .string(command.name))])
  }

  private func commandFailed(_ command: Command, _ error: String) {
    trace("machine.command_failed", [.init("command", .string(command.name)), .init("error", .string(LuaString(error)))])
    guard !isStopped else {
      // A stopped machine takes no message: the failure waits for a
      // settle, or for the end of the run.
      failures.append("machine '\(name)': command \(command.value) failed: \(error)")
      return
    }
    var message = LuaTable(array: ["command_failed"])
    message["command"] = command.value
    message["error"] = .string(LuaString(error))
    try? send(MachineMessage(value: .table(message))!)
  }

  // MARK: Settling

  /// Completes when the mailbox is empty and every command is done; the
  /// result raises the first failure since the last settle, if any.
  public func settleWait() -> Wait {
    let wait = Wait(subject: "machine \(name) to settle")
    if isSettled {
      core.scheduler.complete(wait, settleResult())
    } else {
      settleWaits.append(wait)
      wait.onCancel = { [unowned self, weak wait] in self.settleWaits.removeAll { $0 === wait } }
    }
    return wait
  }

  private func notifySettled() {
    guard !settleWaits.isEmpty else { return }
    let waits = settleWaits
    settleWaits = []
    let result = settleResult()
    for wait in waits { core.scheduler.complete(wait, result) }
  }

  private func settleResult() -> WaitResult {
    guard !failures.isEmpty else { return .nothing }
    let message = failures.joined(separator: "\n")
    failures.removeAll()
    return .failure(message: message)
  }

  private func describe(_ error: any Error) -> String {
    if let error = error as? LuaError { return "machine '\(name)': \(error.message)" }
    if let error = error as? LuaConversionError { return "machine '\(name)': \(error)" }
    return String(describing: error)
  }

  private func trace(_ kind: String, _ fields: @autoclosure () -> [TraceEvent.Field]) {
    guard traceLog.isEnabled else { return }
    traceLog.emit(kind, [.init("machine", .string(name))] + fields())
  }
}
