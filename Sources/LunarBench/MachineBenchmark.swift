import CLua
import Dispatch
import Foundation
import LuaKit
import Lunar

/// Messages through machines, each beside a baseline in the same run: a Lua
/// machine against the same transitions as a plain Lua function in a loop;
/// a Swift machine against a DispatchQueue-driven one.
enum MachineBenchmark {
  final class Toggle: SwiftMachine {
    enum State: String, CaseIterable { case off, on }
    let name = "toggle"
    let initial = State.off
    func receive(_ message: MachineMessage, in state: State) -> (next: State?, commands: [Command])? {
      (state == .off ? .on : .off, [Command("noop")])
    }
  }

  struct Setup: LunarPlugin {
    let name = "machine-bench"
    func install(in runtime: RuntimeCore) throws {
      runtime.registerMachine("toggle") { Toggle() }
    }
  }

  /// The baseline Swift driver: a serial queue, one `async` per message.
  final class DispatchDriver: @unchecked Sendable {
    // Safe: `state` and `commands` are only touched on `queue`, serially.
    private let queue = DispatchQueue(label: "bench.machine")
    private var state = Toggle.State.off
    private var commands = 0
    private let machine = Toggle()

    func send(_ message: MachineMessage) {
      queue.async {
        if let (next, issued) = self.machine.receive(message, in: self.state) {
          if let next { self.state = next }
          self.commands += issued.count
        }
      }
    }

    func settle() { queue.sync {} }
  }

  /// The least any machine driver written in Swift must do per message,
  /// with none of the bookkeeping: the `send` host call from Lua, a
  /// protected call of the handler from Swift, and a protected call of the
  /// interpreter with its own copy of the command (Lua values are copied
  /// across, never shared).
  static func driverFloor() throws -> (Int) throws -> Void {
    let state = try LuaState()
    var mailbox = 0
    state.register("send") { call in
      guard lua_type(call.L, 1) == LUA_TSTRING else { throw LuaArgumentError.invalid(1, "a message name") }
      mailbox += 1
      return .none
    }
    try state.load(
      """
      local n = ...
      for i = 1, n do send('flip') end
      return {
        off = { flip = function() return 'on', { { 'noop' } } end },
        on = { flip = function() return 'off', { { 'noop' } } end },
      }, function() end, 'flip', 'on', 'off'
      """, name: "=floor")
    let chunk = LuaReference(popping: state)
    return { count in
      let L = state.L
      chunk.push()
      lua_pushinteger(L, lua_Integer(count))
      try state.call(arguments: 1, results: 5)
      // Stack: 1 handlers, 2 interpreter, 3 'flip', 4 'on', 5 'off'.
      var current: Int32 = 5
      for _ in 0..<mailbox {
        lua_settop(L, 5)
        lua_pushvalue(L, current)
        lua_rawget(L, 1)
        lua_pushvalue(L, 3)
        lua_rawget(L, -2)
        lua_pushnil(L)
        lua_pushvalue(L, 3)
        try state.call(arguments: 2, results: 2)
        current = lua_rawequal(L, -2, 4) != 0 ? 4 : 5
        lua_rawgeti(L, -1, 1)
        lua_pushvalue(L, 2)
        lua_createtable(L, 1, 0)
        lua_rawgeti(L, -3, 1)
        lua_rawseti(L, -2, 1)
        lua_pushnil(L)
        try state.call(arguments: 2, results: 0)
      }
      mailbox = 0
      lua_settop(L, 0)
    }
  }

  static func run() throws {
    let runtime = try RuntimeBenchmark.makeRuntime(plugins: [Setup()])
    let n = 100_000
    let luaMachine = RuntimeBenchmark.script(runtime, """
      local machine, n = require('lunar.machine'), ...
      machine.interpreter('noop', function() end)
      local m = machine.new { name = 'toggle', initial = 'off', states = {
        off = { on = { flip = function() return 'on', { { 'noop' } } end } },
        on = { on = { flip = function() return 'off', { { 'noop' } } end } },
      } }
      for i = 1, n do m:send('flip') end
      m:settle()
      """)
    let plain = RuntimeBenchmark.script(runtime, """
      local n = ...
      local handlers = {
        off = { flip = function() return 'on', { { 'noop' } } end },
        on = { flip = function() return 'off', { { 'noop' } } end },
      }
      local function noop() end
      local state = 'off'
      for i = 1, n do
        local next, commands = handlers[state].flip()
        state = next
        for _, c in ipairs(commands) do noop(c) end
      end
      """)
    let times = try Harness.interleaved(iterations: n, rounds: 15, [luaMachine, plain, try driverFloor()])
    Harness.report("Lua machine, 1 command per message", subject: times[0], baseline: times[1], baselineName: "plain Lua:", goal: "≤ 3×")
    Harness.report("    the least a driver in Swift does", subject: times[2], baseline: times[1], baselineName: "plain Lua:", goal: "report")

    let swiftMachine = try RuntimeBenchmark.timeScript(runtime, iterations: n, rounds: 3, """
      local machine, n = require('lunar.machine'), ...
      machine.interpreter('noop', function() end)
      local m = machine.swift('toggle')
      for i = 1, n do m:send('flip') end
      m:settle()
      """)
    let dispatch = Harness.nanoseconds(iterations: n, rounds: 3) { count in
      let driver = DispatchDriver()
      for _ in 0..<count { driver.send(MachineMessage("flip")) }
      driver.settle()
    }
    Harness.report("Swift machine, driven from Lua", subject: swiftMachine, baseline: dispatch, baselineName: "DispatchQueue:", goal: "report")
  }
}
