import LuaKit
import Testing

@testable import Lunar

/// `live.queues()` and `live.machines()`: how many of each the runtime
/// still holds, after a full collection.
struct LiveCountsPlugin: LunarPlugin {
  let name = "live"

  func install(in runtime: RuntimeCore) throws {
    var module = LuaModule("live")
    module.function("queues") { [unowned runtime] call in
      runtime.state.collectGarbage()
      call.push(runtime.queues.count)
      return .one
    }
    module.function("machines") { [unowned runtime] call in
      runtime.state.collectGarbage()
      call.push(runtime.machines.count)
      return .one
    }
    try runtime.install(module)
  }
}

@Suite struct LiveObjectsTests {
  @Test func queuesLuaCannotReachAreReleasedOnceTheirJobsAreDone() async throws {
    let lua = try TestRuntime(clock: .real) { $0.plugins = [LiveCountsPlugin()] }
    let results = try await lua.run("""
      local queue, live = require 'lunar.queue', require 'live'
      for i = 1, 1000 do queue.new('unused ' .. i) end
      kept = queue.new('kept')
      local log = {}
      local busy = queue.new('busy')
      local jobs = {}
      for i = 1, 3 do jobs[i] = busy:submit(function() lunar.sleep(0.001); log[#log + 1] = i end) end
      busy = nil
      local whileBusy = live.queues()
      lunar.await_all(jobs)
      return whileBusy, live.queues(), table.concat(log, ' ')
      """)
    // The busy queue outlived its handle until its last job was done.
    #expect(results == [2, 1, "1 2 3"])
  }

  @Test func machinesLuaCannotReachAreReleasedOnceSettled() async throws {
    let lua = try TestRuntime(clock: .real) { $0.plugins = [LiveCountsPlugin()] }
    let results = try await lua.run("""
      local machine, live = require 'lunar.machine', require 'live'
      local function define(name)
        return machine.new { name = name, initial = 'a', states = {
          a = { on = { go = function() handled = (handled or 0) + 1 return 'b', { { 'keep' } } end } },
          b = { on = { ping = function() pinged = true return 'a' end } },
        } }
      end
      machine.interpreter('keep', function(cmd, send) saved = send end)
      for i = 1, 1000 do define('unused ' .. i) end
      kept = define('kept')
      local pending = define('pending')
      -- Each machine starts (enters its initial state) on the loop: until
      -- then that is its pending work.
      lunar.sleep(0)
      pending:send('go')
      pending = nil
      collectgarbage()
      local whilePending = live.machines()
      repeat lunar.sleep(0) until saved
      -- The pending machine handled 'go'; its interpreter kept its `send`,
      -- which still reaches it.
      local whileSendKept = live.machines()
      saved('ping')
      repeat lunar.sleep(0) until pinged
      saved = nil
      return whilePending, handled, whileSendKept, pinged, live.machines()
      """)
    #expect(results == [2, 1, 2, true, 1])
  }

  @Test func aMachineThatSettledWorksAgainWithItsOwnSendFunction() async throws {
    let lua = try TestRuntime(clock: .real)
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local sends = {}
      machine.interpreter('echo', function(cmd, send) sends[#sends + 1] = send; send('pong') end)
      local m = machine.new { name = 'm', initial = 'a', states = {
        a = { on = { ping = function() return 'b', { { 'echo' } } end } },
        b = { on = { pong = 'a' } },
      } }
      m:send('ping')
      m:settle()
      -- Between two turns, other code anchors values in the registry.
      local seen = 0
      for i = 1, 20 do machine.interpreter('count' .. i, function() seen = seen + 1 end) end
      local tasks = {}
      for i = 1, 100 do tasks[i] = lunar.spawn(function() return i end) end
      lunar.await_all(tasks)
      m:send('ping')
      m:settle()
      local counter = machine.new { name = 'counter', initial = 'a', states = {
        a = { on = { go = function()
          local commands = {}
          for i = 1, 20 do commands[i] = { 'count' .. i } end
          return nil, commands
        end } },
      } }
      counter:send('go')
      counter:settle()
      return m.state, #sends, sends[1] == sends[2], seen
      """)
    #expect(results == ["a", 2, true, 20])
  }
}
