import Foundation
import LuaKit
import Testing
import TestSupport

@testable import Lunar

/// A module written in Lua, with a source no other test has.
private struct ProbePlugin: LunarPlugin {
  let name = "probe"
  let source: String

  func install(in runtime: RuntimeCore) throws {
    var module = LuaModule("probe")
    module.lua(source, chunkName: "=probe")
    try runtime.install(module)
  }
}

@Suite struct ModuleBytecodeTests {
  /// Runtimes after the second load a plugin's Lua from kept bytecode, and
  /// what the module does, its messages' lines and its upvalues are the same.
  @Test func aModuleLoadedByManyRuntimesIsCompiledOnceAndBehavesTheSame() async throws {
    let source = """
      local M = ...
      local count = 0 -- \(UUID().uuidString)
      function M.boom() count = count + 1; error("boom " .. count) end
      function M.where() return debug.getinfo(M.boom, "S").source, debug.getinfo(M.boom, "S").linedefined end
      """
    var results: [[LuaValue]] = []
    for index in 1...4 {
      let runtime = try TestRuntime { $0.plugins = [ProbePlugin(source: source)] }
      results.append(
        try await runtime.run(
          """
          local probe = require 'probe'
          local _, first = pcall(probe.boom)
          local _, second = pcall(probe.boom)
          return first, second, probe.where()
          """))
      #expect(ModuleBytecode.isCompiled(Array(source.utf8), chunkName: "=probe") == (index >= 2))
    }
    #expect(results[0] == [.string("probe:3: boom 1"), .string("probe:3: boom 2"), .string("=probe"), .integer(3)])
    #expect(results.allSatisfy { $0 == results[0] }, "\(results)")
  }
}
