import LuaKit
import Testing

@testable import Lunar

/// A machine that loads before it is ready: entering its initial state
/// issues `count`, which a Swift interpreter answers with `counted`.
final class Booting: SwiftMachine {
  enum State: String, CaseIterable { case booting, ready }
  let name = "booting"
  let initial = State.booting

  func receive(_ message: MachineMessage, in state: State) -> (next: State?, commands: [Command])? {
    switch (state, message.name) {
    case (.booting, "counted"): (.ready, [])
    case (_, "ping"): (nil, [Command("log", .string(LuaString("pong in \(state.rawValue)")))])
    default: nil
    }
  }

  func enter(_ state: State) -> [Command] {
    state == .booting ? [Command("count", .string("boot"))] : []
  }
}

struct BootingPlugin: LunarPlugin {
  let name = "booting"
  func install(in runtime: RuntimeCore) throws {
    runtime.registerMachine("booting") { Booting() }
    runtime.interpreters.register(CountInterpreter())
  }
}

/// A machine starts by entering its initial state: its `enter` runs on the
/// loop (never inside the call that made the machine), and its commands are
/// carried out before the first message; the pure step never runs it.
@Suite struct MachineStartTests {
  @Test func aLuaMachineEntersItsInitialStateBeforeItsFirstMessage() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0))
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local log = {}
      local m = machine.new { name = 'light', initial = 'off', context = { delay = 5 }, states = {
        off = { enter = function(ctx)
                  log[#log + 1] = 'enter off'
                  return { { 'note', 'entered off' }, { 'after', ctx.delay, { 'switch' } } }
                end,
                on = { switch = 'on', first = function() return nil, { { 'note', 'first' } } end } },
        on = {},
      } }
      local enteredInsideNew = #log
      m:send('first')
      machine.interpreter('note', function(cmd) log[#log + 1] = cmd[2] end)
      m:settle()
      local settled = m.state
      lunar.sleep(5)
      return enteredInsideNew, table.concat(log, ', '), settled, m.state
      """)
    #expect(results == [0, "enter off, entered off, first", "off", "on"])
    let events = lua.recorder.events.map(\.summary).filter { $0.hasPrefix("machine.") }
    #expect(
      Array(events.prefix(6)) == [
        "machine.received machine=light message=first",
        "machine.started machine=light state=off",
        "machine.command machine=light command=note",
        "machine.command machine=light command=after",
        "machine.interpreted machine=light command=note",
        "machine.interpreted machine=light command=after",
      ])
    #expect(events.dropFirst(6).first == "machine.handled machine=light message=first state=off")
  }

  @Test func aSwiftMachineEntersItsInitialStateBeforeItsFirstMessage() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0)) { $0.plugins = [BootingPlugin()] }
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local m = machine.swift('booting')
      m:send('ping')
      m:settle()
      return m.state
      """)
    #expect(results == ["ready"])
    let events = lua.recorder.events.filter { $0.kind.hasPrefix("machine.") }.map(\.summary)
    let interpreted = try #require(events.firstIndex(of: "machine.interpreted machine=booting command=count"))
    let pinged = try #require(events.firstIndex(of: "machine.handled machine=booting message=ping state=booting"))
    #expect(events.first { $0.hasPrefix("machine.started") } == "machine.started machine=booting state=booting")
    #expect(interpreted < pinged, "\(events)")
    #expect(lua.recorder.events.filter { $0.kind == "machine.log" }.map { $0["text"] } == [.string("pong in booting")])
  }

  @Test func thePureStepNeverEntersTheInitialState() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0)) { $0.plugins = [BootingPlugin()] }
    let results = try await lua.run("""
      local machine = require 'lunar.machine'
      local entered = 0
      local m = machine.new { name = 'pure', initial = 'a', states = {
        a = { enter = function() entered = entered + 1; return { { 'emit', 'entered' } } end,
              on = { stay = function() end } },
      } }
      local before = { m:step('stay') }
      m:settle()
      local after = { m:step('stay') }
      local swift = machine.swift('booting')
      local swiftStep = { swift:step('counted') }
      swift:settle()
      return #before[2], #after[2], entered, swiftStep[1], #swiftStep[2], swift.state
      """)
    #expect(results == [0, 0, 1, "ready", 0, "ready"])
    #expect(lua.recorder.events.filter { $0.kind == "entered" }.count == 1)
  }

  @Test func machinesThatAreOnlyDrawnNeverStart() async throws {
    let script = """
      local machine = require 'lunar.machine'
      entered = false
      local m = machine.new { name = 'drawn', initial = 'a', states = {
        a = { enter = function() entered = true; return { { 'emit', 'entered' } } end },
      } }
      m:settle()
      lunar.sleep(1)
      return entered
      """
    let drawn = try TestRuntime(clock: .virtual(start: 0)) { $0.drawing = .mermaid }
    #expect(try await drawn.run(script) == [false])
    #expect(drawn.recorder.events.filter { $0.kind.hasPrefix("machine.") || $0.kind == "entered" }.isEmpty)
    let run = try TestRuntime(clock: .virtual(start: 0))
    #expect(try await run.run(script) == [true])
    #expect(run.recorder.events.filter { $0.kind == "entered" }.count == 1)
  }
}
