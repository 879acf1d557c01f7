import LuaKit

/// `lunar.machine`: actor state machines and command interpreters from Lua.
struct MachineModulePlugin: ModulePlugin {
  let name = "lunar.machine"

  func makeModule(_ runtime: RuntimeCore) throws -> LuaModule {
    let scheduler = runtime.scheduler
    var machineClass = LuaClass<MachineDriver>(name: "lunar.machine")
    machineClass.describe = { "machine \($0.name) (\($0.state))" }

    // Message names sent so far, shared by every machine of the runtime.
    let messageNames = LuaStringCache<MachineMessage>(capacity: 64, in: runtime.state)
    // Command names, likewise shared (interpreters are per runtime too).
    let commandNames = LuaStringCache<LuaString>(capacity: 64, in: runtime.state)
    // The machines' `send` functions, by machine, weakly (see MachineDriver).
    let sendFunctions = Self.weakTable(in: runtime.state)
    // Messages wait in Swift: with a memory limit, each is charged.
    let budget = runtime.memoryBudget.isLimited ? runtime.memoryBudget : nil
    machineClass.method("send") { driver, call in
      let message = try call.message(2, names: messageNames, budget: budget)
      try Self.raising { try driver.send(message) }
      return .none
    }

    machineClass.method("settle") { [unowned scheduler] driver, call in
      scheduler.suspend(call, on: driver.settleWait())
    }

    // m:step(msg [, state]) -> next state, commands, handled (pure)
    machineClass.method("step") { driver, call in
      let message = try call.message(2)
      let from = try call.optionalBytes(3)
      let result = try Self.raising { try driver.step(message, in: from, on: call.L) }
      call.push(result.state)
      try call.push(.table(LuaTable(array: result.commands.map(\.value))))
      call.push(result.handled)
      return .values(3)
    }

    machineClass.method("stop") { driver, _ in
      driver.stop()
      return .none
    }

    machineClass.method("mailbox") { driver, call in
      call.push(driver.mailboxCount)
      return .one
    }

    machineClass.property("state") { driver, call in
      call.push(driver.state)
      return .one
    }
    machineClass.property("name") { driver, call in
      call.push(driver.name)
      return .one
    }
    machineClass.property("stopped") { driver, call in
      call.push(driver.isStopped)
      return .one
    }

    var module = LuaModule("lunar.machine")
    module.function("new") { [unowned runtime] call in
      try call.check(1, is: .table)
      let behavior = try Self.raising {
        try LuaMachineDefinition(at: 1, on: call, state: runtime.state, commandNames: commandNames)
      }
      let driver = Self.driver(behavior, runtime, sendFunctions, on: call)
      call.push(driver, as: machineClass)
      return .one
    }

    module.function("swift") { [unowned runtime] call in
      let name = try call.bytes(1)
      guard let make = runtime.component(MachineSystem.self).swiftMachine(named: name) else {
        throw LuaArgumentError.invalid(1, "no Swift machine named '\(name)'")
      }
      let driver = Self.driver(make(), runtime, sendFunctions, on: call)
      call.push(driver, as: machineClass)
      return .one
    }

    // machine.interpreter(name, function(cmd, send) ... end)
    module.function("interpreter") { [unowned runtime] call in
      let name = try call.bytes(1)
      try call.check(2, is: .function)
      let function = call.reference(2, in: runtime.state)
      // The name as a string even if it was given as a number: it is `cmd[1]`.
      call.push(name)
      runtime.interpreters.register(name, lua: function, nameString: LuaReference(popping: call, in: runtime.state))
      return .none
    }

    // machine.graph(m [, "mermaid" | "dot"]) -> text
    module.function("graph") { call in
      let driver = try call.object(1, of: machineClass)
      let format = try call.optionalBytes(2) ?? "mermaid"
      guard let graphFormat = MachineGraph.Format.allCases.first(where: { LuaString($0.rawValue) == format }) else {
        throw LuaArgumentError.invalid(2, "format must be 'mermaid' or 'dot', got '\(format)'")
      }
      call.push(MachineGraph.render([driver.behavior], as: graphFormat))
      return .one
    }
    // machine.test(m), in Lua (machine.lua).
    module.lua(bytes: PackageResources.machine_lua, chunkName: "=lunar.machine")
    return module
  }

  /// A driver for `behavior`. `lunar graph` draws every machine a script
  /// defined, reachable or not, so its (inert) machines live as long as the
  /// runtime.
  static func driver(_ behavior: any MachineBehavior, _ runtime: RuntimeCore, _ sendFunctions: LuaReference, on call: LuaCall)
    -> MachineDriver
  {
    let machines = runtime.component(MachineSystem.self)
    let driver = MachineDriver(
      behavior: behavior, core: runtime, inert: machines.isInert, sendFunctions: sendFunctions, on: call)
    if machines.isInert { machines.keepForDrawing(driver) }
    return driver
  }

  /// A new table with weak values, anchored in the registry.
  static func weakTable(in state: LuaState) -> LuaReference {
    state.newTable()
    state.newTable(fieldCapacity: 1)
    state.push("v")
    state.setField("__mode", of: -2)
    state.setMetatable(of: -2)
    return LuaReference(popping: state)
  }

  /// Runs `body`, turning machine errors into plain Lua errors (with the
  /// caller's position).
  static func raising<T>(_ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as MachineError {
      throw LuaScriptError(error.description)
    } catch let error as LuaError {
      throw error
    }
  }
}
