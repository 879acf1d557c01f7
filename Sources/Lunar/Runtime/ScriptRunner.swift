import CLuaShim
import LuaKit
import Synchronization

/// Runs scripts on a runtime's loop thread: `LUA_INIT` before the first,
/// the main chunk on the main Lua thread, what plugins do with the values
/// it returns, then the loop until every task is done; and maps each way a
/// run can end to a `RunFailure`. Also runs a console's entries. Loop
/// thread only. (C calls only for the interrupt flag, which is CLuaShim's.)
public final class ScriptRunner {
  private let state: LuaState
  private let scheduler: Scheduler
  private let configuration: RuntimeConfiguration
  private let control: ControlHandle
  private let pluginPath: PluginPath
  /// The first file the run could not write; the run ends with it.
  private let failedOutput = FailedOutput()
  /// What plugins do with the values a main chunk returns, in order.
  private var resultHandlers: [ResultsHandler] = []
  /// Failures plugins keep outside tasks (machines'), reported when a run ends.
  private var endOfRunReports: [() -> [UnobservedError]] = []
  /// How many result handlers and end-of-run reports plugins added.
  var handlerCounts: [Int] { [resultHandlers.count, endOfRunReports.count] }

  /// A runner for `state`, whose loop `scheduler` runs; sets up the plugin
  /// path and the sandbox (see `PluginPath`).
  init(state: LuaState, scheduler: Scheduler, configuration: RuntimeConfiguration, control: ControlHandle) throws {
    self.state = state
    self.scheduler = scheduler
    self.configuration = configuration
    self.control = control
    pluginPath = try PluginPath(state: state, configuration: configuration)
    for case let sink as any FileWritingSink in configuration.traceSinks { endRun(whenWriteFails: sink.output) }
    if configuration.drawing != nil {
      // `lunar graph` keeps standard output for the diagram (inert.lua).
      try state.load(bytes: PackageResources.inert_lua, name: "=inert")
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

  /// Adds `handler` to what runs on the values a script's main chunk
  /// returns, once it has returned and before the loop runs its tasks (the
  /// workflow plugin runs or draws a returned workflow). Handlers run in
  /// the order they were added; the first that returns a failure refuses
  /// the run: its tasks are cancelled and it ends with that failure.
  public func handleResults(_ handler: @escaping ResultsHandler) {
    resultHandlers.append(handler)
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
    let base = state.top
    defer { state.top = base }
    script.installArgTable(in: state)
    pluginPath.prepare(for: script)
    do {
      if configuration.runsLuaInit && !ranLuaInit {
        ranLuaInit = true
        try runLuaInit()
      }
      let count = try script.load(into: state)
      try state.call(arguments: count)
      let returned = MainChunkResults(script: script, state: state, base: base)
      for handler in resultHandlers {
        guard let refusal = try handler(returned) else { continue }
        scheduler.cancelAll(on: L)
        return .failure(refusal)
      }
    } catch {
      let failure = failure(after: error)
      lunar_clearinterrupt(L)
      return .failure(failure)
    }
    var results: [LuaValue] = []
    for index in (base + 1)..<(state.top + 1) {
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
    let base = state.top
    defer { state.top = base }
    let outcome: Result<[LuaValue], RunFailure>
    do {
      if configuration.runsLuaInit && !ranLuaInit {
        ranLuaInit = true
        try runLuaInit()
      }
      try state.load(source, name: name)
      for argument in arguments where (try? state.push(argument)) == nil { try? state.push(.nil) }
      try state.call(arguments: Int32(arguments.count))
      var results: [LuaValue] = []
      for index in (base + 1)..<(state.top + 1) {
        results.append((try? state.value(at: index, root: "result")) ?? .nil)
      }
      outcome = .success(results)
    } catch {
      let held = scheduler.takeHeldNote().map { "\n" + $0 } ?? ""
      let failure = lunar_interrupted(L) != LUNAR_INTERRUPT_NONE ? RunFailure.interrupted("interrupted" + held) : .lua(error)
      lunar_clearinterrupt(L)
      outcome = .failure(failure)
    }
    state.top = base
    do {
      try scheduler.runWoken(on: L)
    } catch {
      // Ctrl-C while woken tasks run: the prompt comes back.
      lunar_clearinterrupt(L)
      if case .success = outcome, case .interrupted(_, let message) = error { return .failure(.interrupted(message)) }
    }
    return outcome
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

/// What a script's main chunk returned, on the main Lua thread's stack,
/// for the plugins that act on it (`ScriptRunner.handleResults`).
public struct MainChunkResults {
  /// The script that returned them.
  public let script: Script
  /// The state; the results are at `base + 1` to the top of its stack.
  public let state: LuaState
  /// The stack index just below the first result.
  public let base: Int32
}

/// Acts on what a main chunk returned (see `ScriptRunner.handleResults`):
/// may replace the results on the stack; returns a failure (a usage error)
/// to refuse the run.
public typealias ResultsHandler = (MainChunkResults) throws(LuaError) -> RunFailure?

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
