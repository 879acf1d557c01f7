import LuaKit
import Testing

@testable import Lunar

/// Lua machines whose names are not plain text: every name is its bytes, as
/// in Lua. `é` is "\xC3\xA9" composed and "e\xCC\x81" decomposed: one
/// Swift `String`, two Lua strings.
@Suite struct LuaMachineDefinitionTests {
  static let composed = LuaString(bytes: [0xC3, 0xA9])
  static let decomposed = LuaString(bytes: [0x65, 0xCC, 0x81])

  @Test func aZeroByteOrInvalidUTF8IsPartOfAStateName() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run(#"""
      local machine = require 'lunar.machine'
      local m = machine.new { name = 'bytes', initial = 'b\0c', states = {
        ['b\0c'] = { on = { next = '\xfe' } },
        ['\xfe'] = { on = { next = 'b\0c' }, enter = function() return { { 'log', 'entered' } } end },
        b = {},
      } }
      local states = { m.state }
      m:send('next')
      m:settle()
      states[2] = m.state
      m:send('next')
      m:settle()
      states[3] = m.state
      return table.unpack(states)
      """#)
    let zeroByte = LuaString(bytes: [0x62, 0x00, 0x63])
    let invalid = LuaString(bytes: [0xFE])
    #expect(results == [.string(zeroByte), .string(invalid), .string(zeroByte)])
    let states = try await lua.runtime.perform { core in core.machines[0].behavior.states }
    #expect(states == ["b", zeroByte, invalid])
    #expect(lua.events("machine.log").count == 1, "the enter hook of '\\xfe' ran, found by its own name")
  }

  @Test func canonicallyEquivalentNamesAreTwoStates() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run(#"""
      local machine = require 'lunar.machine'
      local m = machine.new { name = 'accents', initial = 'start', states = {
        start = { on = { nfc = '\xC3\xA9', nfd = 'e\xCC\x81' } },
        ['\xC3\xA9'] = { on = { onward = 'after composed' } },
        ['e\xCC\x81'] = { on = { onward = 'after decomposed' } },
        ['after composed'] = {},
        ['after decomposed'] = {},
      } }
      m:send('nfd')
      m:settle()
      local reached = m.state
      m:send('onward')
      m:settle()
      return reached, m.state, (m:step('onward', '\xC3\xA9'))
      """#)
    #expect(results == [.string(Self.decomposed), "after decomposed", "after composed"])
    let (states, edges) = try await lua.runtime.perform { core in
      let behavior = core.machines[0].behavior
      return (behavior.states, behavior.edges.map { [$0.from, $0.message, $0.to] })
    }
    #expect(states.count == 5)
    #expect(edges.contains([Self.composed, "onward", "after composed"]))
    #expect(edges.contains([Self.decomposed, "onward", "after decomposed"]))
  }

  @Test func commandsAreFoundByTheirBytes() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run(#"""
      local machine = require 'lunar.machine'
      local ran = {}
      machine.interpreter('\xC3\xA9', function(cmd) ran[#ran + 1] = 'composed' end)
      machine.interpreter('e\xCC\x81', function(cmd) ran[#ran + 1] = 'decomposed' end)
      machine.interpreter('\xfe', function(cmd) ran[#ran + 1] = 'invalid ' .. cmd[2] end)
      local m = machine.new { name = 'issuer', initial = 'idle', states = {
        idle = { on = { go = function() return nil, { { 'e\xCC\x81' }, { '\xfe', 1 }, { '\xC3\xA9' } } end } },
      } }
      m:send('go')
      m:settle()
      return table.concat(ran, ', ')
      """#)
    #expect(results == ["decomposed, invalid 1, composed"])
    let interpreted = lua.recorder.events.filter { $0.kind == "machine.interpreted" }.map { $0["command"] }
    #expect(interpreted == [.string(Self.decomposed), .string(LuaString(bytes: [0xFE])), .string(Self.composed)])
  }

  @Test func feedbackReturnsToTheMachineThatIssuedTheCommand() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0)) { $0.plugins = [TurnstilePlugin()] }
    let results = try await lua.run(#"""
      local machine = require 'lunar.machine'
      local function make(name)
        return machine.new { name = name, initial = 'idle', states = {
          idle = { on = { go = function() return 'waiting', { { 'count', 1 } } end } },
          waiting = { on = { counted = 'counted' } },
          counted = {},
        } }
      end
      local first, second = make('\xC3\xA9'), make('e\xCC\x81')
      first:send('go')
      first:settle()
      second:settle()
      return first.state, second.state, first.name
      """#)
    #expect(results == ["counted", "idle", .string(Self.composed)])
  }

  @Test func machinesWithTheSameNameEachGetTheirOwnFeedback() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0)) { $0.plugins = [TurnstilePlugin()] }
    let results = try await lua.run(#"""
      local machine = require 'lunar.machine'
      local function make(tag)
        return machine.new { name = 'twin', initial = 'idle', context = { tag = tag }, states = {
          idle = { on = { go = function(ctx) return 'waiting', { { 'count', ctx.tag } } end } },
          waiting = { on = { counted = function(ctx, msg) return msg.what == ctx.tag and 'mine' or 'theirs' end } },
          mine = {}, theirs = {},
        } }
      end
      local first, second = make('first'), make('second')
      first:send('go')
      first:settle()
      second:settle()
      local states = { first.state, second.state }
      second:send('go')
      second:settle()
      first:settle()
      return states[1], states[2], first.state, second.state
      """#)
    #expect(results == ["mine", "idle", "mine", "mine"])
  }
}

/// A definition read on its own: no runtime, no driver, just a Lua state.
@Suite struct LuaMachineDefinitionReadingTests {
  /// The definition `source` returns, read on `state`.
  static func define(_ source: String, in state: LuaState) throws -> LuaMachineDefinition {
    try state.load(source, name: "=definition")
    try state.call(arguments: 0, results: 1)
    defer { state.pop() }
    return try LuaMachineDefinition(
      at: -1, on: state, state: state, commandNames: LuaStringCache<LuaString>(capacity: 8, in: state))
  }

  /// How reading `source` fails.
  static func refusal(_ source: String) throws -> String? {
    let state = try LuaState()
    do {
      _ = try define(source, in: state)
      return nil
    } catch {
      #expect(state.top == 0, "a refused definition leaves the stack as it was")
      return String(describing: error)
    }
  }

  @Test func readsNamesStatesEdgesAndFlags() throws {
    let state = try LuaState()
    let definition = try Self.define(
      """
      return { name = 'door', initial = 'closed', strict = true, context = { locks = 2 }, states = {
        opened = { on = { close = 'closed' } },
        closed = { on = { open = 'opened', kick = { run = print, targets = { 'broken', 'closed' } } }, exit = print },
        broken = { enter = print },
      } }
      """, in: state)
    #expect(state.top == 0)
    #expect(definition.name == "door")
    #expect(definition.states == ["broken", "closed", "opened"])
    #expect(definition.initialName == "closed")
    #expect(definition.strict)
    #expect(definition.edges.map { [$0.from, $0.message, $0.to] } == [
      ["closed", "kick", "broken"], ["closed", "kick", "closed"], ["closed", "open", "opened"], ["opened", "close", "closed"],
    ])
  }

  @Test func refusesEachBadFieldInItsOwnWords() throws {
    let cases: [(String, String)] = [
      ("return { initial = 'a', states = {} }", "machine definition: 'name' must be a string"),
      ("return { name = 'x', initial = 'a', states = { a = {} }, stat = 1 }",
       "machine 'x': unknown field 'stat' (fields are name, initial, states, context, strict)"),
      ("return { name = 'x', initial = 'a', strict = 1, states = { a = {} } }",
       "machine 'x': 'strict' must be true or false, got number"),
      ("return { name = 'x', initial = 'a', states = { [1] = {} } }", "machine 'x': state names must be strings"),
      ("return { name = 'x', initial = 'a', states = { a = 1 } }", "machine 'x': state 'a' must be a table"),
      ("return { name = 'x', initial = 'b', states = { a = {} } }", "machine 'x': unknown initial state 'b'"),
      ("return { name = 'x', initial = 'a', states = { a = { exit = 1 } } }", "machine 'x': state 'a': 'exit' must be a function"),
      ("return { name = 'x', initial = 'a', states = { a = { on = 1 } } }",
       "machine 'x': state 'a': 'on' must be a table of handlers"),
      ("return { name = 'x', initial = 'a', states = { a = { on = { go = setmetatable({}, { __name = 'Widget' }) } } } }",
       "machine 'x': state 'a': handler 'go' needs a 'run' function"),
      ("return { name = 'x', initial = 'a', states = { a = { on = { go = { run = print, [true] = 1 } } } } }",
       "machine 'x': state 'a': handler 'go': unknown field [boolean] (fields are run, targets)"),
      ("return { name = 'x', initial = 'a', states = { a = { on = { go = 5 } } } }",
       "machine 'x': state 'a': handler 'go' must be a function or a state name, got number"),
      ("return { name = 'x', initial = 'a', states = { a = { on = { [false] = 'a' } } } }",
       "machine 'x': state 'a': message names in 'on' must be strings, got boolean"),
      ("return { name = 'x', initial = 'a', states = { a = { on = { go = 'z' } } } }",
       "machine 'x': state 'a': transition 'go' goes to unknown state 'z'"),
      ("return { name = 'x', initial = 'a', states = { a = { on = { go = { run = print, targets = { 'a', x = 1 } } } } } }",
       "machine 'x': state 'a': handler 'go': 'targets' must be a list of state names, got a table with other keys"),
      ("return { name = 'x', initial = 'a', states = { a = { on = { go = { run = print, targets = { 'a', 'z' } } } } } }",
       "machine 'x': state 'a': handler 'go' targets unknown state 'z'"),
      ("return { name = 'x', initial = 'a', states = { a = { on = { go = { run = print, targets = { setmetatable({}, { __name = 'W' }) } } } } } }",
       "machine 'x': state 'a': handler 'go': targets[1] must be a state name, got W"),
      ("return { name = 'x', initial = 'a', context = { f = print }, states = { a = {} } }",
       "context.f: a function cannot cross into Swift"),
    ]
    for (source, expected) in cases {
      #expect(try Self.refusal(source) == expected, "\(source)")
    }
  }

  @Test func definitionsAreReadRawSoTheirMetatablesNeverRun() throws {
    let state = try LuaState()
    let definition = try Self.define(
      """
      local trap = { __index = function() error('__index ran') end, __pairs = function() error('__pairs ran') end }
      return setmetatable({ name = 'raw', initial = 'a', states = setmetatable({
        a = setmetatable({ on = setmetatable({ go = 'a' }, trap) }, trap),
      }, trap) }, trap)
      """, in: state)
    #expect(definition.edges.map { [$0.from, $0.message, $0.to] } == [["a", "go", "a"]])
  }

  @Test func aStepReadsItsCommandsFieldByFieldAndLeavesTheStackAsItWas() throws {
    let state = try LuaState()
    let definition = try Self.define(
      """
      return { name = 'steps', initial = 'a', context = { page = 3 }, states = {
        a = {
          exit = function(ctx) return { { 'left', ctx.page } } end,
          on = {
            go = function(ctx, msg) return 'b', { { 'load', ctx.page, msg.extra }, { 'save', key = 'k' }, { 'gap', 1, nil, 3 } } end,
            stay = function() end,
            jump = 'b',
          },
        },
        b = { enter = function() return { { 'arrived' } } end },
      } }
      """, in: state)
    state.push("below")
    var go = LuaTable(array: ["go"])
    go["extra"] = "x"
    let step = try #require(try definition.step(0, MachineMessage(value: .table(go))!, on: state))
    #expect(step.next == 1)
    #expect(step.commands == [
      Command(name: "load", arguments: [3, "x"]), Command(name: "save", fields: ["key": "k"]),
      Command(value: .table(LuaTable(array: ["gap", 1], fields: [4: 3])))!,
    ])
    #expect(try definition.step(0, MachineMessage("stay"), on: state).map { $0.next == nil && $0.commands.isEmpty } == true)
    #expect(try definition.step(0, MachineMessage("jump"), on: state)?.next == 1)
    #expect(try definition.step(0, MachineMessage("unknown"), on: state) == nil)
    #expect(try definition.exit(0, on: state) == [Command(name: "left", arguments: [3])])
    #expect(try definition.enter(1, on: state) == [Command("arrived")])
    #expect(try definition.enter(0, on: state) == [])
    #expect(state.top == 1 && state.string(at: 1) == "below", "steps leave the stack as they found it")
  }

  @Test func aHandlerFailureNamesTheMachineStateAndHandler() throws {
    let state = try LuaState()
    let definition = try Self.define(
      """
      return { name = 'bad', initial = 'a', states = { a = { on = {
        number = function() return 5 end,
        nowhere = function() return 'z' end,
        list = function() return nil, { 'not a table' } end,
        raise = function() error('boom', 0) end,
      } } } }
      """, in: state)
    func failure(_ message: String) -> String? {
      do {
        _ = try definition.step(0, MachineMessage(message), on: state)
        return nil
      } catch {
        return String(describing: error)
      }
    }
    #expect(failure("number") == "machine 'bad': state 'a': handler 'number' must return a state name or nil, got number")
    #expect(failure("nowhere") == "machine 'bad': state 'a': handler 'nowhere' returned unknown state 'z'")
    #expect(failure("list") == "machine 'bad': state 'a': handler 'list': commands[1] must be a table whose first element is the command's name")
    #expect(failure("raise")?.hasPrefix("boom") == true)
    #expect(state.top == 0)
  }
}
