import LuaKit
import Testing
import TestSupport

@testable import Lunar

/// A turnstile written in Swift.
final class Turnstile: SwiftMachine {
  enum State: String, CaseIterable { case locked, unlocked }
  let name = "turnstile"
  let initial = State.locked

  func receive(_ message: MachineMessage, in state: State) -> (next: State?, commands: [Command])? {
    switch (state, message.name) {
    case (.locked, "coin"): return (.unlocked, [Command("count", .string("coin"))])
    case (.unlocked, "push"): return (.locked, [])
    case (.unlocked, "coin"): return (nil, [Command("refund")])
    default: return nil
    }
  }

  func enter(_ state: State) -> [Command] {
    state == .unlocked ? [Command("after", 10, "push")] : []
  }
}

/// A Swift interpreter that counts and answers through the mailbox.
struct CountInterpreter: CommandInterpreter {
  let name = "count"
  func interpret(_ command: Command, in context: InterpreterContext) async throws {
    try await Task.sleep(for: .milliseconds(1))
    var message = LuaTable(array: ["counted"])
    message["what"] = command.arguments.first ?? .nil
    context.send(MachineMessage(value: .table(message))!)
  }
}

struct TurnstilePlugin: LunarPlugin {
  let name = "turnstile"
  func install(in runtime: RuntimeCore) throws {
    runtime.registerMachine("turnstile") { Turnstile() }
    runtime.interpreters.register(CountInterpreter())
  }
}

@Suite struct SwiftMachineTests {
  @Test func aSwiftMachineIsDrivenFromLua() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0)) { $0.plugins = [TurnstilePlugin()] }
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local refunds = 0
      machine.interpreter('refund', function() refunds = refunds + 1 end)
      local t = machine.swift('turnstile')
      local pure = { t:step('coin') }
      t:send('coin')
      t:send('coin')
      t:settle()
      local afterCoins = t.state
      lunar.sleep(11)       -- the 'after' timer pushes it back
      return pure[1], pure[2][1][1], pure[2][2][1], afterCoins, refunds, t.state
      """)
    #expect(results == ["unlocked", "count", "after", "unlocked", 1, "locked"])
    let kinds = lua.recorder.events.filter { $0.kind == "machine.dropped" }.map { $0["message"] }
    #expect(kinds == [.string("counted")], "the Swift interpreter's feedback arrived through the mailbox")
  }

  @Test func aRegistrationReplacesTheInterpreterOfItsName() throws {
    struct Named: CommandInterpreter {
      let name: String
      let tag: Int
      func interpret(_ command: Command, in context: InterpreterContext) async throws {}
    }
    func tag(_ entry: InterpreterRegistry.Entry?, in registry: InterpreterRegistry) -> Int? {
      guard case .swift(let position)? = entry else { return nil }
      return (registry.swiftInterpreter(at: position) as? Named)?.tag
    }
    let registry = InterpreterRegistry()
    registry.register(Named(name: "load", tag: 1))
    registry.register(Named(name: "save", tag: 2))
    #expect(tag(registry.entry(for: "load"), in: registry) == 1)
    registry.register(Named(name: "load", tag: 3))
    #expect(tag(registry.entry(for: "load"), in: registry) == 3)
    #expect(tag(registry.entry(for: "save"), in: registry) == 2)

    // A Lua interpreter takes the name over, and a Swift one takes it back.
    let state = try LuaState()
    try state.load("return function() end", name: "=fn")
    try state.call(arguments: 0, results: 1)
    let function = LuaReference(popping: state)
    state.push("load")
    let nameString = LuaReference(popping: state)
    registry.register("load", lua: function, nameString: nameString)
    guard case .lua(let interpreter)? = registry.entry(for: "load") else {
      Issue.record("expected a Lua entry")
      return
    }
    #expect(interpreter.function === function && interpreter.name === nameString)
    registry.register(Named(name: "load", tag: 4))
    #expect(tag(registry.entry(for: "load"), in: registry) == 4)
    #expect(registry.entry(for: "unknown") == nil)
    #expect(registry.names == ["after", "emit", "load", "log", "save"])
  }

  @Test func interpretersAreToldApartByTheirNamesBytes() throws {
    struct Named: CommandInterpreter {
      let name: String
      func interpret(_ command: Command, in context: InterpreterContext) async throws {}
    }
    let registry = InterpreterRegistry()
    registry.register(Named(name: "\u{E9}"))
    registry.register(Named(name: "e\u{301}"))
    func interpreter(_ name: LuaString) -> String? {
      guard case .swift(let position)? = registry.entry(for: name) else { return nil }
      return (registry.swiftInterpreter(at: position) as? Named)?.name
    }
    // Compared as bytes here too: as `String`s the two names are equal.
    #expect(interpreter(LuaString(bytes: [0xC3, 0xA9])).map { Array($0.utf8) } == [0xC3, 0xA9])
    #expect(interpreter(LuaString(bytes: [0x65, 0xCC, 0x81])).map { Array($0.utf8) } == [0x65, 0xCC, 0x81])
    #expect(registry.names.count == 5)
  }

  @Test func unknownSwiftMachinesAreArgumentErrors() async throws {
    let lua = try TestRuntime()
    let failure = await lua.failure("require('lunar.machine').swift('nope')")
    #expect(failure?.luaMessage == "test.lua:1: bad argument #1 to 'swift' (no Swift machine named 'nope')")
  }

  @Test func graphsDrawStatesAndTransitions() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local m = machine.new { name = 'door', initial = 'closed', states = {
        closed = { on = { open = 'opened', kick = { run = function() end, targets = { 'broken' } } } },
        opened = { on = { close = 'closed' } },
        broken = {},
      } }
      return machine.graph(m), machine.graph(m, 'dot')
      """)
    #expect(results.first?.stringValue == """
      ---
      title: door
      ---
      stateDiagram-v2
        [*] --> closed
        closed --> broken : kick
        closed --> opened : open
        opened --> closed : close

      """)
    let dot = try #require(results.last?.stringValue)
    #expect(dot.contains("\"closed\" -> \"broken\" [label=\"kick\"];"))
    #expect(try Graphviz.draw(dot).edges.count == 4)
  }
}
