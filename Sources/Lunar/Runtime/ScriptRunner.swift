import CLua
import CLuaShim
import LuaKit
import Synchronization

/// Runs scripts on a runtime's loop thread: `LUA_INIT` before the first,
/// the main chunk on the main Lua thread, what plugins do with the values
/// it returns, then the loop until every task is done; and maps each way a
/// run can end to a `RunFailure`. Also runs a console's entries. Loop
/// thread only.
public final class ScriptRunner {
  private let state: LuaState
  private let scheduler: Scheduler
  private let configuration: RuntimeConfiguration
  private let control: ControlHandle
  private let pluginPath: PluginPath
  /// The first file the run could not write; the run ends with it.
  private let failedOutput = FailedOutput()
  /// Failures plugins keep outside tasks (machines'), reported when a run ends.
  private var endOfRunReports: [() -> [UnobservedError]] = []

  /// A runner for `state`, whose loop `scheduler` runs; sets up the plugin
  /// path and the sandbox (see `PluginPath`).
  init(state: LuaState, scheduler: Scheduler, configuration: RuntimeConfiguration, control: ControlHandle) throws {
    self.state = state
    self.scheduler = scheduler
    self.configuration = configuration
    self.control = control
    pluginPath = try PluginPath(state: state, configuration: configuration)
    for case let sink as any FileWritingSink in configuration.traceSinks { endRun(whenWriteFails: sink.output) }
    if configuration.inertMachines {
      // `lunar graph` keeps standard output for the diagram.
      try state.load("print = function() end; if io then io.write = function() return io.stdout end end", name: "=inert")
      try state.call(arguments: 0, results: 0)
    }
  }

  /// Ends the run, with the failure as its error, when `output` (a file the
  /// run writes as it goes: a journal, a trace) cannot be written: a full
  /// disk must not let a run go on losing what it records.
  public func endRun(whenWriteFails output: FileOutput) {
    let failedOutput = self.failedOutput
    let control = self.control
    output.whenWriteFails { error in
      if failedOutput.record(error.description) { control.interrupt(reason: LUNAR_INTERRUPT_REQUEST) }
    }
  }

  /// The run's failure when a file it writes has failed.
  private var outputFailure: RunFailure? {
    failedOutput.message.map { .lua(LuaError(message: $0)) }
  }

  /// Adds failures a plugin keeps outside tasks (a machine's failed
  /// command that no settle raised) to those reported as unobserved when a
  /// run ends; `take` returns them and forgets them.
  public func reportWhenRunEnds(_ take: @escaping () -> [UnobservedError]) {
    endOfRunReports.append(take)
  }

  /// Runs `script`'s main chunk on the main Lua thread, then the loop until
  /// every task has finished. Returns the chunk's results.
  func run(_ script: Script) -> Result<[LuaValue], RunFailure> {
    let L = state.L
    let base = lua_gettop(L)
    defer { lua_settop(L, base) }
    script.installArgTable(in: state)
    pluginPath.prepare(for: script)
    do {
      if configuration.runsLuaInit && !ranLuaInit {
        ranLuaInit = true
        try runLuaInit()
      }
      let count = try script.load(into: state)
      try state.call(arguments: count)
      if let usage = try runReturnedWorkflow(above: base, of: script) {
        scheduler.cancelAll(on: L)
        return .failure(usage)
      }
    } catch {
      let failure = failure(after: error)
      lunar_clearinterrupt(L)
      return .failure(failure)
    }
    var results: [LuaValue] = []
    for index in (base + 1)..<(lua_gettop(L) + 1) {
      results.append((try? state.value(at: index, root: "result")) ?? .nil)
    }
    if let stop = drain() {
      lunar_clearinterrupt(L)
      return .failure(stop)
    }
    if let failure = outputFailure { return .failure(failure) }
    let unobserved = scheduler.unobservedFailures.map(UnobservedError.init) + endOfRunReports.flatMap { $0() }
    scheduler.clearFailures()
    if !unobserved.isEmpty { return .failure(.unobservedErrors(unobserved)) }
    return .success(results)
  }

  private var ranLuaInit = false

  /// Runs a chunk for an interactive session: no `arg` table, no waiting
  /// for background tasks to finish (they go on between entries), but the
  /// tasks the chunk woke have run when it returns (`Scheduler.runWoken`).
  func evaluate(_ source: String, name: String, arguments: [LuaValue]) -> Result<[LuaValue], RunFailure> {
    let L = state.L
    let base = lua_gettop(L)
    defer { lua_settop(L, base) }
    let outcome: Result<[LuaValue], RunFailure>
    do {
      if configuration.runsLuaInit && !ranLuaInit {
        ranLuaInit = true
        try runLuaInit()
      }
      try state.load(source, name: name)
      for argument in arguments where (try? state.push(argument)) == nil { lua_pushnil(L) }
      try state.call(arguments: Int32(arguments.count))
      var results: [LuaValue] = []
      for index in (base + 1)..<(lua_gettop(L) + 1) {
        results.append((try? state.value(at: index, root: "result")) ?? .nil)
      }
      outcome = .success(results)
    } catch {
      let held = scheduler.takeHeldNote().map { "\n" + $0 } ?? ""
      let failure = lunar_interrupted(L) != LUNAR_INTERRUPT_NONE ? RunFailure.interrupted("interrupted" + held) : .lua(error)
      lunar_clearinterrupt(L)
      outcome = .failure(failure)
    }
    lua_settop(L, base)
    do {
      try scheduler.runWoken(on: L)
    } catch {
      // Ctrl-C while woken tasks run: the prompt comes back.
      lunar_clearinterrupt(L)
      if case .success = outcome, case .interrupted(_, let message) = error { return .failure(.interrupted(message)) }
    }
    return outcome
  }

  /// If the main chunk returned a workflow, runs it (or draws it), leaving
  /// its outcome as the only result. Returns a usage failure, running
  /// nothing, when the workflow options do not fit what the chunk returned.
  private func runReturnedWorkflow(above base: Int32, of script: Script) throws(LuaError) -> RunFailure? {
    let L = state.L
    let options = configuration.workflowOptions
    let drawing = configuration.workflowGraphFormat != nil
    let noWorkflow: RunFailure? = options.workflowFlag.flatMap { flag in
      drawing ? nil : .usage("'\(flag)' is for a file that returns a workflow; \(script.name) ran and returned none")
    }
    guard lua_gettop(L) > base else { return noWorkflow }
    lua_getfield(L, lunar_registryindex(), LUA_LOADED_TABLE)
    lua_getfield(L, -1, "lunar.workflow")
    lunar_remove(L, -2)
    let module = lua_gettop(L)
    // Drawing, the results are the workflow's drawing or nothing: a
    // string the chunk returned is not one.
    let notWorkflow = configuration.workflowGraphFormat == nil ? module - 1 : base
    // A workflow can only exist if the workflow module was loaded.
    guard lua_type(L, module) == LUA_TTABLE else {
      lua_settop(L, notWorkflow)
      return noWorkflow
    }
    lua_getfield(L, module, "is")
    lua_pushvalue(L, base + 1)
    try state.call(arguments: 1, results: 1)
    let isWorkflow = lua_toboolean(L, -1) != 0
    lua_settop(L, module)
    guard isWorkflow else {
      lua_settop(L, notWorkflow)
      return noWorkflow
    }
    if let misplaced = options.misplacedFlag, !drawing {
      lua_settop(L, module - 1)
      return .usage(
        "'\(misplaced.flag)' after FILE goes to the script; put lunar's flags before FILE (\(misplaced.corrected))")
    }
    if let format = configuration.workflowGraphFormat {
      lua_getfield(L, module, "graph")
      lua_pushvalue(L, base + 1)
      state.push(format)
    } else {
      lua_getfield(L, module, "run")
      lua_pushvalue(L, base + 1)
      if (try? state.push(configuration.workflowOptions.luaValue)) == nil { lua_pushnil(L) }
    }
    try state.call(arguments: 2, results: 1)
    // The outcome replaces everything the chunk returned.
    lunar_replace(L, base + 1)
    lua_settop(L, base + 1)
    return nil
  }

  /// Runs the loop until no task is left; nil when all went well.
  func drain() -> RunFailure? {
    do {
      try scheduler.runUntil(on: state.L) {
        scheduler.liveTasks.isEmpty && scheduler.inFlight == 0 && !scheduler.hasDeferredWork
      }
      return nil
    } catch {
      switch error {
      case .deadlock(let report):
        // A deadlock the script was given (and caught) is not reported twice.
        let reported = scheduler.deadlockWasReported
        scheduler.cancelAll(on: state.L)
        return reported ? nil : .deadlock(report)
      case .interrupted(let reason, let message):
        scheduler.abandonAll()
        if let failure = outputFailure { return failure }
        let text = scheduler.takeHeldNote().map { message + "\n" + $0 } ?? message
        return reason == LUNAR_INTERRUPT_TIMEOUT ? .timedOut(text) : .interrupted(text)
      }
    }
  }

  /// Maps a failed main chunk to a run failure, ending live tasks first.
  private func failure(after error: LuaError) -> RunFailure {
    let reason = lunar_interrupted(state.L)
    if reason != LUNAR_INTERRUPT_NONE {
      scheduler.abandonAll()
      if let failure = outputFailure { return failure }
      let held = scheduler.takeHeldNote().map { "\n" + $0 } ?? ""
      return reason == LUNAR_INTERRUPT_TIMEOUT ? .timedOut(scheduler.timeoutMessage + held) : .interrupted("interrupted" + held)
    }
    scheduler.cancelAll(on: state.L)
    // A memory error caught by `pcall` and raised again with `error(e, 0)`
    // is a plain error with Lua's own message: it is the limit all the same.
    if (error.kind == .memory || error.message == LuaError.notEnoughMemory.message) && configuration.memoryLimit > 0 {
      var error = error
      error.message += " (the limit is \(configuration.memoryLimit) bytes)"
      return .lua(error)
    }
    return .lua(error)
  }

  /// `LUA_INIT_5_4` or `LUA_INIT`: `@file` runs a file, anything else is
  /// source named `=LUA_INIT`, exactly as lua.c's handle_luainit.
  private func runLuaInit() throws(LuaError) {
    let environment = configuration.environment
    let (name, code): (String, String)
    if let value = environment["LUA_INIT_5_4"] {
      (name, code) = ("=LUA_INIT_5_4", value)
    } else if let value = environment["LUA_INIT"] {
      (name, code) = ("=LUA_INIT", value)
    } else {
      return
    }
    if code.hasPrefix("@") {
      try state.load(file: String(code.dropFirst()))
    } else {
      try state.load(code, name: name)
    }
    try state.call(arguments: 0, results: 0)
  }
}

/// The first failure of a file the run writes, shared with the threads
/// that write it.
private final class FailedOutput: Sendable {
  private let storage = Mutex<String?>(nil)

  /// Keeps `message` if it is the first; true if it was.
  func record(_ message: String) -> Bool {
    storage.withLock { stored in
      guard stored == nil else { return false }
      stored = message
      return true
    }
  }

  /// The first failure, if any.
  var message: String? { storage.withLock { $0 } }
}
