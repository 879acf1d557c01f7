import LuaKit
import Testing

@testable import Lunar

/// A Swift interpreter that finishes on a later turn of the loop: the
/// driver must wait for it before the next command and the next message.
struct SlowInterpreter: CommandInterpreter {
  let name = "slow"
  func interpret(_ command: Command, in context: InterpreterContext) async throws {
    try await Task.sleep(for: .milliseconds(1))
  }
}

struct SlowInterpreterPlugin: LunarPlugin {
  let name = "slow-interpreter"
  func install(in runtime: RuntimeCore) throws {
    runtime.interpreters.register(SlowInterpreter())
  }
}

/// The mailbox driver every machine runs on: order, one message at a time,
/// commands in order, timers, stop and settle.
@Suite struct MachineDriverTests {
  /// The `field` of every `kind` event, in order.
  static func trace(_ lua: TestRuntime, _ kind: String, _ field: String) -> [LuaValue] {
    lua.recorder.events.filter { $0.kind == kind }.map { $0[field] ?? .nil }
  }

  @Test func messagesWaitInTheMailboxAndAreHandledInTheOrderSent() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local seen = {}
      local function note(_, msg) seen[#seen + 1] = type(msg) == 'table' and msg[1] or msg end
      local m = machine.new { name = 'order', initial = 'idle', states = {
        idle = { on = { a = note, b = note, c = note } },
      } }
      m:send('a')
      m:send({ 'b', n = 1 })
      m:send('c')
      m:send('a')
      local waiting, before = m:mailbox(), #seen
      m:settle()
      return waiting, before, table.concat(seen, ' '), m:mailbox()
      """)
    #expect(results == [4, 0, "a b c a", 0])
    #expect(Self.trace(lua, "machine.handled", "message") == ["a", "b", "c", "a"])
  }

  @Test func aMessageSentWhileOneIsHandledWaitsUntilItsCommandsAreDone() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local log = {}
      machine.interpreter('echo', function(cmd, send)
        log[#log + 1] = 'echo ' .. cmd[2]
        send('pong')
        log[#log + 1] = 'sent pong'
      end)
      machine.interpreter('note', function(cmd) log[#log + 1] = cmd[2] end)
      local m = machine.new { name = 'pingpong', initial = 'idle', states = {
        idle = { on = {
          ping = function()
            log[#log + 1] = 'handling ping'
            return nil, { { 'echo', 1 }, { 'note', 'after echo' } }
          end,
          pong = function() log[#log + 1] = 'handling pong' end,
        } },
      } }
      m:send('ping')
      m:settle()
      return table.concat(log, ', ')
      """)
    #expect(results == ["handling ping, echo 1, sent pong, after echo, handling pong"])
  }

  @Test func commandsRunInOrderEvenAcrossASwiftInterpreter() async throws {
    let lua = try TestRuntime { $0.plugins = [SlowInterpreterPlugin()] }
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local log = {}
      machine.interpreter('note', function(cmd) log[#log + 1] = cmd[2] end)
      local m = machine.new { name = 'steps', initial = 'idle', states = {
        idle = { on = {
          go = function() return 'busy', { { 'note', 'first' }, { 'slow' }, { 'note', 'third' } } end,
        } },
        busy = {
          enter = function() return { { 'note', 'entered' } } end,
          on = { again = function() log[#log + 1] = 'again' end },
        },
      } }
      m:send('go')
      m:send('again')
      m:settle()
      return table.concat(log, ', ')
      """)
    #expect(results == ["first, third, entered, again"])
    #expect(Self.trace(lua, "machine.interpreted", "command") == ["note", "slow", "note", "note"])
    let handled = Self.trace(lua, "machine.handled", "message")
    #expect(handled == ["go", "again"])
  }

  @Test func timersOfAStateAreCancelledWhenTheMachineLeavesIt() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0))
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local m = machine.new { name = 'alarm', initial = 'idle', states = {
        idle = { on = { arm = 'armed', expired = 'expired' } },
        armed = {
          enter = function() return { { 'after', 10, 'expired' } } end,
          on = { disarm = 'idle', expired = 'expired' },
        },
        expired = {},
      } }
      m:send('arm')
      m:send('disarm')
      m:settle()
      lunar.sleep(20)
      local left = m.state
      m:send('arm')
      m:settle()
      lunar.sleep(20)
      return left, m.state
      """)
    // Had the first timer outlived its state, idle would have taken it.
    #expect(results == ["idle", "expired"])
    #expect(Self.trace(lua, "machine.received", "message") == ["arm", "disarm", "arm", "expired"])
  }

  @Test func stopCancelsTimersEmptiesTheMailboxAndRefusesNewMessages() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0))
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local m = machine.new { name = 'halting', initial = 'idle', states = {
        idle = { on = { arm = 'armed' } },
        armed = {
          enter = function() return { { 'after', 10, 'expired' } } end,
          on = { expired = 'expired', x = 'idle', y = 'idle' },
        },
        expired = {},
      } }
      m:send('arm')
      m:settle()
      m:send('x')
      m:send('y')
      local waiting = m:mailbox()
      m:stop()
      local sent, err = pcall(m.send, m, 'z')
      lunar.sleep(20)
      m:settle()
      return waiting, m:mailbox(), m.stopped, sent, err, m.state
      """)
    #expect(results.count == 6)
    #expect(Array(results[0..<4]) == [2, 0, true, false])
    #expect(results[4].stringValue?.hasSuffix("machine 'halting' is stopped") == true)
    #expect(results[5] == "armed", "neither the waiting messages nor the timer moved it")
    #expect(Self.trace(lua, "machine.handled", "message") == ["arm"])
    let stopped = try await lua.runtime.perform { core in
      (core.machines[0].isStopped, core.machines[0].isSettled, core.machines[0].mailboxCount)
    }
    #expect(stopped == (true, true, 0))
  }

  @Test func settleRaisesTheFailuresSinceTheLastSettleOnce() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local m = machine.new { name = 'faulty', initial = 'a', strict = true, states = {
        a = { on = { boom = function() error('kaboom', 0) end, fine = function() end } },
      } }
      m:send('boom')
      m:send('unknown')
      m:send('fine')
      local ok, err = pcall(m.settle, m)
      local again = pcall(m.settle, m)
      return ok, err, again, m.state
      """)
    #expect(results.count == 4)
    #expect(results[0] == false)
    let message = try #require(results[1].stringValue)
    #expect(message.contains("machine 'faulty': kaboom"))
    #expect(message.contains("machine 'faulty': state 'a' does not handle message 'unknown'"))
    #expect(results[2] == true, "a failure is raised by one settle only")
    #expect(results[3] == "a")
    #expect(Self.trace(lua, "machine.handled", "message") == ["fine"], "a failing or unhandled message is not handled")
  }

  @Test func thePureStepChangesNothingAndRunsNoInterpreter() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local ran = 0
      machine.interpreter('count', function() ran = ran + 1 end)
      local m = machine.new { name = 'pure', initial = 'a', states = {
        a = {
          exit = function() return { { 'count', 'exit a' } } end,
          on = { go = function() return 'b', { { 'count', 'go' } } end },
        },
        b = { enter = function() return { { 'count', 'enter b' } } end },
      } }
      local state, commands, handled = m:step('go')
      local _, _, unhandled = m:step('nothing')
      return state, commands[1][2], commands[2][2], commands[3][2], handled, unhandled, m.state, ran, m:mailbox()
      """)
    #expect(results == ["b", "exit a", "go", "enter b", true, false, "a", 0, 0])
    #expect(Self.trace(lua, "machine.state", "to") == [])
  }
}
