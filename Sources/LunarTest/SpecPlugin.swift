import LuaKit
import Lunar

/// Installs the spec DSL (`busted`) and the assertion library (`luassert`,
/// `luassert.spy`, `luassert.stub`, `luassert.mock`, `luassert.match`,
/// `say`) into a runtime, and exposes them as globals as busted does.
public struct SpecPlugin: LunarPlugin {
  public let name = "busted"
  /// Where the file's results go as its tests end.
  public let log: SpecResultLog
  /// Whether results carry where failures were raised (busted's reports).
  public let details: Bool
  /// The sink the file's tests are marked in, as they start and end.
  public let traceSink: (any TraceSink)?

  /// The registry key of the runner table (`run_file`) the driver calls;
  /// `require "busted"` gives only busted's own API. `lua/driver.lua` and
  /// `lua/setup.lua` spell it out.
  static let runnerKey = "lunar.busted.runner"

  /// A plugin whose runtime reports its results to `log`, with where
  /// failures were raised when `details` asks for it; with `traceSink`,
  /// each test's start and end are marked in that sink alone.
  public init(log: SpecResultLog, details: Bool = false, traceSink: (any TraceSink)? = nil) {
    self.log = log
    self.details = details
    self.traceSink = traceSink
  }

  /// The two libraries compiled once per process: every spec file's runtime
  /// loads the bytecode instead of parsing 2,000 lines of Lua again.
  private static let compiled: Result<(luassert: [UInt8], busted: [UInt8]), any Error> = {
    do {
      let state = try LuaState(openLibraries: false)
      try state.load(bytes: PackageResources.luassert_lua, name: "=luassert", mode: .text)
      let luassert = state.dump()
      state.pop()
      try state.load(bytes: PackageResources.busted_lua, name: "=busted", mode: .text)
      let busted = state.dump()
      return .success((luassert, busted))
    } catch {
      return .failure(error)
    }
  }()

  public func install(in runtime: RuntimeCore) throws {
    let state = runtime.state
    let base = state.top
    defer { state.top = base }

    let chunks = try Self.compiled.get()
    try state.load(bytes: chunks.luassert, name: "=luassert", mode: .binary)
    try state.call(arguments: 0, results: 1)
    let luassert = state.top
    state.pushLoadedModules()
    let loaded = state.top
    for (module, field) in [
      ("luassert", "assert"), ("luassert.spy", "spy"), ("luassert.stub", "stub"), ("luassert.mock", "mock"),
      ("luassert.match", "match"), ("say", "say"),
    ] {
      state.pushField(field, of: luassert)
      state.setField(module, of: loaded)
    }

    try state.load(bytes: chunks.busted, name: "=busted", mode: .binary)
    state.pushValue(at: luassert)
    let scheduler = runtime.scheduler
    if details { scheduler.keepsFailureFrames = true }
    let taskClass = runtime.taskClass
    // Registered now, not by the first test: a runtime reused for the next
    // file keeps the registry as it was set up.
    state.register(taskClass)
    // spawn_untraced(label, fn, ...): a task for a test body, hook or block.
    state.push(function: { [unowned scheduler] call in
      let label = try call.string(1)
      try call.check(2, is: .function)
      let task = scheduler.spawn(on: call.L, function: 2, arguments: call.argumentCount - 2, label: .text(label), traced: false)
      call.push(task, as: taskClass)
      return .one
    })
    // settle(task): nothing once it finished, or the deadlock report.
    state.push(function: { [unowned scheduler] call in
      let task = try call.object(1, of: taskClass)
      switch SpecTaskWait.wait(for: task, in: scheduler, on: call.L) {
      case .finished:
        return .none
      case .deadlock(let report):
        call.push(report)
        return .one
      case .interrupted(let message):
        call.push(message)
        return .error
      }
    })
    // take_unobserved(): the messages of tasks that failed with nobody
    // looking, or nothing when there are none (the usual case).
    state.push(function: { [unowned scheduler] call in
      let messages = scheduler.takeUnobservedFailures().map { LuaValue.string(LuaString($0.description)) }
      guard !messages.isEmpty else { return .none }
      try call.push(.table(LuaTable(array: messages)))
      return .one
    })
    // report(result): one test's result, kept outside the state.
    let log = self.log
    state.push(function: { call in
      log.append(
        try SpecResultReader.read(at: 1, of: call)
          ?? LuaValueDecoder().decode(SpecResult.self, from: SpecText.value(try call.value(1))))
      return .none
    })
    // failure_frame(task): where the task's failure was raised, as
    // debug.getinfo's fields, or nothing.
    state.push(function: { call in
      guard let frame = try call.object(1, of: taskClass).failureFrame else { return .none }
      var table = LuaTable()
      table["source"] = .string(frame.source)
      table["short_src"] = .string(frame.shortSource)
      table["currentline"] = .integer(Int64(frame.currentLine))
      table["linedefined"] = .integer(Int64(frame.lineDefined))
      table["lastlinedefined"] = .integer(Int64(frame.lastLineDefined))
      table["what"] = .string(LuaString(frame.what))
      try call.push(.table(table))
      return .one
    })
    // mark_test(name [, status]): a test starts, or ends with its status;
    // nil when no sink wants the marks, so a plain run pays nothing.
    if let sink = traceSink {
      let trace = runtime.trace
      state.push(function: { [unowned trace] call in
        let name = LuaValue.string(try call.bytes(1))
        if let status = try call.optionalString(2) {
          trace.emit("test.finished", [.init("name", name), .init("status", .string(LuaString(status)))], to: sink)
        } else {
          trace.emit("test.started", [.init("name", name)], to: sink)
        }
        return .none
      })
    } else {
      state.pushNil()
    }
    try state.call(arguments: 7, results: 1)
    state.pushField("module", of: -1)
    state.setField("busted", of: loaded)
    state.pushValue(at: -1)
    state.setRegistryField(Self.runnerKey)
    state.pushField("export", of: -1)
    try state.call(arguments: 0, results: 0)
  }
}
