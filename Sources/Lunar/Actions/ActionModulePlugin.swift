import CLuaShim
import LuaKit

/// `lunar.action`, `lunar.run`, `lunar.run_stubbed` and the services actions
/// use (`http`, `store`, `log`, `clock`). The runner is written in Lua on
/// top of host functions for Swift actions, services, spans and the journal.
public struct ActionModulePlugin: ModulePlugin {
  public let name = "lunar.actions"
  /// How the runtime's actions run.
  public let options: ActionOptions

  /// The plugin with `options` (the defaults: real HTTP, no journal).
  public init(options: ActionOptions = ActionOptions()) {
    self.options = options
  }

  /// Makes the runtime's `ActionSystem` now, before the configuration's
  /// plugins register services, and fails if its journal cannot be opened;
  /// the module itself is described on its first `require`.
  public func install(in runtime: RuntimeCore) throws {
    runtime.provide(ActionSystem(core: runtime, options: options))
    if let failure = runtime.component(ActionSystem.self).journalFailure { throw failure }
    runtime.install(moduleNamed: name) { runtime in try makeModule(runtime) }
  }

  public func makeModule(_ runtime: RuntimeCore) throws -> LuaModule {
    let actions: ActionRunner = runtime.actions
    let scheduler = runtime.scheduler
    var module = LuaModule("lunar.actions")

    // Swift actions, from Lua: swift_run(name, input, chain, attempt) -> output
    module.function("swift_run") { [unowned runtime] call in
      let name = try call.bytes(1)
      // The action keeps its input until it is done: charged meanwhile.
      let input = try call.chargedValue(2, name: "input")
      let chain = (try call.value(3, name: "chain")).tableValue?.array.compactMap(\.luaStringValue) ?? []
      let attempt = Int(clamping: try call.optionalInteger(4, default: 1))
      let scope = scheduler.currentTask?.journalScope
      return runtime.suspend(call, awaiting: "action \(name)") {
        defer { withExtendedLifetime(input) {} }
        return try await actions.run(name, input: input.value, chain: chain, journalScope: scope, attempt: attempt)
      }
    }
    // copy(value, root) -> a copy made as a value crossing into Swift is:
    // functions, userdata, threads and cycles refused with their path.
    module.function("copy") { call in
      let copied = try call.chargedValue(1, name: try call.string(2))
      try call.push(copied.value)
      return .one
    }
    // chain() -> the chain of the action running in this task (or in the
    // task that created it), nil if none; set_chain(chain) sets it. Asked
    // and set by every action run: C functions (TaskChains.c).
    module.cFunction("chain", lunar_chain)
    module.cFunction("set_chain", lunar_setchain)
    module.function("keep_job_runner") { [unowned runtime] call in
      try call.check(1, is: .function)
      runtime.component(DurableJobRunner.self).keep(call.reference(1, in: runtime.state))
      return .none
    }
    module.function("has_swift") { call in
      call.push(actions.has(try call.bytes(1)))
      return .one
    }
    module.function("swift_names") { call in
      try call.push(.table(LuaTable(array: actions.names.map(LuaValue.string))))
      return .one
    }
    // The services Swift registered for the run (plugins register theirs
    // when installed, before any script runs).
    module.function("swift_services") { [unowned runtime] call in
      try call.push(.table(LuaTable(array: runtime.services.names.map { .string(LuaString($0)) })))
      return .one
    }
    module.function("swift_uses") { call in
      try call.push(.table(LuaTable(array: actions.uses(of: try call.bytes(1)).map { .string(LuaString($0)) })))
      return .one
    }
    // emit(kind, fields): a span or analytics event in the trace.
    module.function("emit") { [unowned runtime] call in
      guard runtime.trace.isEnabled else { return .none }
      let kind = try call.string(1)
      // Checked against the memory limit: a recorder may keep the event.
      let charged = try call.chargedValue(2, name: "fields")
      let fields = charged.value.tableValue ?? LuaTable()
      var list: [TraceEvent.Field] = []
      for key in ["action", "event", "depth", "input", "duration", "error"] where fields[key] != .nil {
        list.append(.init(key, fields[key]))
      }
      for (key, value) in fields.fields.sorted(by: { $0.key.description < $1.key.description }) {
        let name = key.description
        if !["action", "event", "depth", "input", "duration", "error"].contains(name) { list.append(.init(name, value)) }
      }
      runtime.trace.emit(kind, list)
      return .none
    }
    // journal(kind, key [, result]) -> the recorded result when replaying;
    // the call belongs to the running task's step.
    module.function("journal") { call in
      guard let journal = actions.journal else { return .none }
      let kind = try call.bytes(1)
      let key = try call.value(2, name: "key").tableValue ?? LuaTable()
      let result = call.isNil(3) ? nil : try call.value(3, name: "result").tableValue
      let entry = try journal.step(kind: kind, key: key, result: result, in: scheduler.currentTask?.journalScope)
      if let entry { try call.push(.table(entry)) } else { call.pushNil() }
      return .one
    }
    module.function("replaying") { call in
      call.push(actions.journal?.isReplaying ?? false)
      return .one
    }
    // tracing() -> whether spans are recorded now (someone listens to the trace)
    module.cFunction("tracing", lunar_tracing)
    module.value("journaling", .boolean(actions.journal != nil))
    module.value("limit", .integer(Int64(actions.recursionLimit)))
    // The action runner, in Lua (actions.lua).
    module.lua(bytes: PackageResources.actions_lua, chunkName: "=lunar.actions")
    module.whenLoaded { runtime in try ServiceObjects.install(in: runtime, scheduler: scheduler) }
    return module
  }
}

extension ActionRunner {
  /// The services a Swift action declared.
  public func uses(of name: LuaString) -> [String] { usesNames(name) }
}
