import LuaKit
import Testing

@testable import Lunar

@Suite struct DrawingTests {
  static let script = """
    local workflow, machine = require 'lunar.workflow', require 'lunar.machine'
    local step = workflow.step
    local m = machine.new { name = 'door', initial = 'shut', states = { shut = { on = { open = 'open' } }, open = {} } }
    m:send('open')
    assert(m.state == 'shut', 'drawn machines never run')
    return workflow 'w' { step 'a' { run = print }, step 'b' { needs = { 'a' }, run = print } }
    """

  @Test func aScriptIsDrawnWorkflowFirstThenItsMachines() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0)) { $0.drawing = .mermaid }
    let drawn = await lua.runtime.draw(Script(source: .text(Self.script, chunkName: "@test.lua")))
    let drawings = drawn.drawings.map(\.lossyString)
    #expect(drawings.count == 2, "\(drawings)")
    #expect(drawings.first?.hasPrefix("---\ntitle: w\n---\nflowchart LR\n") == true, "\(drawings)")
    #expect(drawings.last?.hasPrefix("---\ntitle: door\n---\nstateDiagram-v2\n") == true, "\(drawings)")
    guard case .success = drawn.outcome else {
      Issue.record("expected the drawing run to succeed, got \(drawn.outcome)")
      return
    }
    #expect(lua.events("workflow.").isEmpty && lua.events("machine.").isEmpty, "nothing ran")
  }

  @Test func machinesAreDrawnEvenWhenTheScriptFailsAfterDefiningThem() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0)) { $0.drawing = .dot }
    let drawn = await lua.runtime.draw(Script(source: .text("""
      local machine = require 'lunar.machine'
      machine.new { name = 'm', initial = 'a', states = { a = {} } }
      error('needs what the machine would have done')
      """, chunkName: "@test.lua")))
    #expect(drawn.drawings.count == 1 && drawn.drawings[0].lossyString.hasPrefix("digraph \"m\" {\n"))
    guard case .failure(.lua(let error)) = drawn.outcome else {
      Issue.record("expected the script's error, got \(drawn.outcome)")
      return
    }
    #expect(error.message == "test.lua:3: needs what the machine would have done")
  }

  @Test func aRuntimeThatRunsScriptsDrawsNothing() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0))
    let drawn = await lua.runtime.draw(Script(source: .text("""
      local machine = require 'lunar.machine'
      machine.new { name = 'm', initial = 'a', states = { a = {} } }
      """, chunkName: "@test.lua")))
    #expect(drawn.drawings.isEmpty)
  }
}
