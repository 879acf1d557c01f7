import LuaKit
import Synchronization
import Testing

@testable import Lunar

/// A Swift action a plugin registers only when its module is built.
struct Halve: RunnableAction {
  static let name = "halves.halve"
  var n: Int
  func execute(in context: RunContext) async throws -> Int { n / 2 }
}

/// A plugin whose actions exist once its module is required: the Swift
/// action `halves.halve` and the Lua action `halves.twice`.
struct HalvesPlugin: ModulePlugin {
  let name: String
  let builds: LazyCounterPlugin.Counter

  func makeModule(_ runtime: RuntimeCore) throws -> LuaModule {
    builds.increment()
    runtime.actions.register(Halve.self)
    var module = LuaModule(name)
    module.lua("lunar.action('halves.twice', function(ctx, input) return input.n * 2 end)", chunkName: "=halves")
    return module
  }
}

@Suite struct PluginActionTests {
  func runtime(module: String, counter: LazyCounterPlugin.Counter) throws -> TestRuntime {
    try TestRuntime { $0.plugins = [HalvesPlugin(name: module, builds: counter)] }
  }

  @Test func anActionLoadsTheSwiftPluginThatProvidesIt() async throws {
    let counter = LazyCounterPlugin.Counter()
    let lua = try runtime(module: "halves", counter: counter)
    _ = try await lua.run("return 1")
    #expect(counter.value == 0, "nothing is built before an action asks for it")
    let results = try await lua.run("""
      local workflow = require "lunar.workflow"
      local half = lunar.run("halves.halve", { n = 42 })
      local outcome = workflow.execute(workflow "w" {
        workflow.step "twice" { uses = "halves.twice", with = { n = 5 } },
      }, { quiet = true })
      return half, outcome.results.twice.output, package.loaded.halves ~= nil
      """)
    #expect(results == [21, 10, true])
    #expect(counter.value == 1)
  }

  @Test func aLunarModuleProvidesTheActionsOfItsShortName() async throws {
    let counter = LazyCounterPlugin.Counter()
    let lua = try runtime(module: "lunar.halves", counter: counter)
    let results = try await lua.run("return lunar.run('halves.twice', { n = 4 }), lunar.run('halves.halve', { n = 9 })")
    #expect(results == [8, 4])
    #expect(counter.value == 1)
  }

  @Test func anActionThePluginDoesNotDefineIsStillUnknown() async throws {
    let counter = LazyCounterPlugin.Counter()
    let lua = try runtime(module: "halves", counter: counter)
    let results = try await lua.run("""
      local _, first = pcall(lunar.run, "halves.third", 3)
      local _, again = pcall(lunar.run, "halves.quarter", 3)
      return first, again
      """)
    #expect(results == [
      "unknown action 'halves.third' (plugin 'halves' does not define it)",
      "unknown action 'halves.quarter' (plugin 'halves' does not define it)",
    ])
    #expect(counter.value == 1, "the plugin is loaded once")
  }
}
