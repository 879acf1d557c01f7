import CLua
import CLuaShim
import LuaKit

/// `lunar.machine`: actor state machines and command interpreters from Lua.
struct MachineModulePlugin: LunarPlugin {
  let name = "lunar.machine"

  func install(in runtime: RuntimeCore) throws {
    let scheduler = runtime.scheduler
    var machineClass = LuaClass<MachineDriver>(name: "lunar.machine")
    machineClass.describe = { "machine \($0.name) (\($0.state))" }

    machineClass.method("send") { driver, call in
      guard let message = MachineMessage(value: try call.value(2, name: "msg")) else {
        throw LuaArgumentError.invalid(2, "a message is a name or a table whose first element is its name")
      }
      try Self.raising { try driver.send(message) }
      return .none
    }

    machineClass.method("settle") { [unowned scheduler] driver, call in
      scheduler.suspend(call, on: driver.settleWait())
    }

    // m:step(msg [, state]) -> next state, commands, handled (pure)
    machineClass.method("step") { driver, call in
      guard let message = MachineMessage(value: try call.value(2, name: "msg")) else {
        throw LuaArgumentError.invalid(2, "a message is a name or a table whose first element is its name")
      }
      let from = try call.optionalString(3)
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
        try LuaMachineDefinition(at: 1, on: call.L, state: runtime.state)
      }
      let driver = MachineDriver(behavior: behavior, core: runtime, inert: runtime.configuration.inertMachines)
      runtime.machines.append(driver)
      LuaState(borrowing: call.L).push(driver, as: machineClass)
      return .one
    }

    module.function("swift") { [unowned runtime] call in
      let name = try call.string(1)
      guard let make = runtime.swiftMachines[name] else {
        throw LuaArgumentError.invalid(1, "no Swift machine named '\(name)'")
      }
      let driver = MachineDriver(behavior: make(), core: runtime, inert: runtime.configuration.inertMachines)
      runtime.machines.append(driver)
      LuaState(borrowing: call.L).push(driver, as: machineClass)
      return .one
    }

    // machine.interpreter(name, function(cmd, send) ... end)
    module.function("interpreter") { [unowned runtime] call in
      let name = try call.string(1)
      try call.check(2, is: .function)
      lua_pushvalue(call.L, 2)
      runtime.interpreters.register(name, lua: LuaReference(popping: call.L, in: runtime.state))
      return .none
    }

    // machine.graph(m [, "mermaid" | "dot"]) -> text
    module.function("graph") { call in
      let driver = try call.object(1, of: machineClass)
      let format = try call.optionalString(2) ?? "mermaid"
      guard let graphFormat = MachineGraph.Format(rawValue: format) else {
        throw LuaArgumentError.invalid(2, "format must be 'mermaid' or 'dot', got '\(format)'")
      }
      call.push(MachineGraph.render([driver.behavior], as: graphFormat))
      return .one
    }
    try runtime.install(module)
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
