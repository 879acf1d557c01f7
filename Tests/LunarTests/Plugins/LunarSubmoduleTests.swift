import LuaKit
import Testing

@testable import Lunar

/// The `lunar` table's sub-modules load on first use: `lunar.queue` is the
/// module `require` gives, `lunar.run` comes with the actions module, and a
/// key that names no module is nil, as a missing field is.
@Suite struct LunarSubmoduleTests {
  @Test func aSubmoduleIsWhatRequireGives() async throws {
    let results = try await TestRuntime().run("""
      local first = lunar.queue
      return first == require "lunar.queue", type(first.new) == "function", lunar.queue == first
      """)
    #expect(results == [.boolean(true), .boolean(true), .boolean(true)])
  }

  @Test func theActionFunctionsComeWithTheActionsModule() async throws {
    let results = try await TestRuntime().run("""
      return type(lunar.run), rawget(lunar, "run") == lunar.run, type(lunar.action), type(lunar.run_stubbed),
        package.loaded["lunar.actions"] ~= nil
      """)
    #expect(results == [.string("function"), .boolean(true), .string("function"), .string("function"), .boolean(true)])
  }

  @Test func keysThatNameNoModuleAreNil() async throws {
    let results = try await TestRuntime().run("""
      return lunar.nosuch, lunar[1], lunar[true], lunar["queue\\0x"], lunar[("x"):rep(100000)]
      """)
    #expect(results == [.nil, .nil, .nil, .nil, .nil])
  }

  @Test func aModuleThatFailsToLoadRaisesItsOwnError() async throws {
    let failure = try await TestRuntime().failure("""
      package.preload["lunar.broken"] = function() error("broken on purpose") end
      return lunar.broken
      """)
    let message = try #require(failure?.luaMessage)
    #expect(message.contains("broken on purpose"))
    #expect(!message.contains("=lunar"))
  }

  @Test func aModuleBodyThatWaitsSuspendsItsTask() async throws {
    let results = try await TestRuntime().run("""
      package.preload["lunar.slow"] = function() lunar.sleep(1) return { ready = true } end
      local other = lunar.spawn(function() return "ran meanwhile" end)
      local module = lunar.slow
      return module.ready, other:await()
      """)
    #expect(results == [.boolean(true), .string("ran meanwhile")])
  }
}
