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
