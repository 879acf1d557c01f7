import LuaKit

import Synchronization
import Testing

@testable import Lunar

/// A plugin written the way a third party would write one.
struct GreeterPlugin: LunarPlugin {
  let name = "greeter"

  func install(in runtime: RuntimeCore) throws {
    var module = LuaModule("greeter")
    module.function("hello") { call in
      call.push("hello, " + (try call.string(1)))
      return .one
    }
    // Completes without suspending: takes the immediate path.
    module.asyncFunction("double") { arguments in
      guard let n = arguments.first?.integerValue else { throw GreeterError.notANumber }
      return .integer(n * 2)
    }
    // Really suspends: finishes on Swift's pool and posts back.
    module.asyncFunction("later") { arguments in
      try await Task.sleep(for: .milliseconds(2))
      return arguments.first ?? .nil
    }
    // Never finishes unless cancelled.
    module.asyncFunction("forever") { _ in
      try await Task.sleep(for: .seconds(3600))
      return .nil
    }
    module.value("answer", 42)
    module.lua("local m = ...; function m.shout(s) return m.hello(s):upper() end", chunkName: "=greeter")
    try runtime.install(module)
  }
}

enum GreeterError: Error, CustomStringConvertible {
  case notANumber
  var description: String { "double needs a number" }
}

@Suite struct PluginTests {
  func runtime() throws -> TestRuntime {
    try TestRuntime(clock: .real) { $0.plugins = [GreeterPlugin()] }
  }

  @Test func aPluginModuleIsRequirable() async throws {
    let lua = try runtime()
    let results = try await lua.run("local g = require 'greeter'; return g.hello('moon'), g.shout('moon'), g.answer")
    #expect(results == ["hello, moon", "HELLO, MOON", 42])
  }

  @Test func anAsyncFunctionThatCompletesAtOnceReturnsDirectly() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local g = require 'greeter'
      local sum = 0
      for i = 1, 1000 do sum = sum + g.double(i) end
      local t = lunar.spawn(function() return g.double(21) end)
      return sum, t:await()
      """)
    #expect(results == [1_001_000, 42])
  }

  @Test func anAsyncFunctionThatSuspendsIsAwaitedEverywhere() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local g = require 'greeter'
      local main = g.later('main')
      local tasks = {}
      for i = 1, 20 do tasks[i] = lunar.spawn(function() return g.later(i) end) end
      local sum = 0
      for i = 1, 20 do sum = sum + tasks[i]:await() end
      local wrapped = coroutine.wrap(function() return g.later('wrapped') end)()
      return main, sum, wrapped
      """)
    #expect(results == ["main", 210, "wrapped"])
  }

  @Test func swiftErrorsBecomeLuaErrorsWithThePosition() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local g = require 'greeter'
      local ok, err = pcall(function() return g.double('x') end)
      local bad, conversion = pcall(function() return g.double({f = print}) end)
      return ok, err, bad, conversion
      """)
    #expect(results == [false, "test.lua:2: double needs a number", false, "test.lua:3: argument #1.f: a function cannot cross into Swift"])
  }

  @Test func cancellingATaskCancelsItsSwiftWork() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local g = require 'greeter'
      local t = lunar.spawn(function() return g.forever() end)
      lunar.sleep(0.001)
      t:cancel()
      local ok, err = t:result()
      return ok, tostring(err), t:status()
      """)
    #expect(results == [false, "cancelled", "cancelled"])
  }

  @Test func performRunsOnTheLoopThread() async throws {
    let lua = try runtime()
    _ = try await lua.run("shared = 'set by a script'")
    let value = try await lua.runtime.perform { core -> String in
      core.state.getGlobal("shared")
      defer { core.state.pop() }
      return core.state.string(at: -1) ?? "missing"
    }
    #expect(value == "set by a script")
  }

  @Test func aRuntimeWorksWithoutTheCommandLine() async throws {
    let runtime = try Runtime()
    let results = try await runtime.run(Script(source: .text("return 6 * 7, ...", chunkName: "=embedded"), arguments: ["x"]))
    #expect(results == [42, "x"])
  }

  @Test func severalRuntimesRunInParallel() async throws {
    try await withThrowingTaskGroup(of: [LuaValue].self) { group in
      for i in 1...4 {
        group.addTask {
          let lua = try TestRuntime()
          return try await lua.run("local s = 0 for k = 1, 100000 do s = s + k end lunar.sleep(60) return s + \(i)")
        }
      }
      var sums: Set<LuaValue> = []
      for try await result in group { sums.insert(result[0]) }
      #expect(sums == [5_000_050_001, 5_000_050_002, 5_000_050_003, 5_000_050_004])
    }
  }

  @Test func installingTheSamePluginTwiceIsHarmless() async throws {
    let lua = try TestRuntime { $0.plugins = [GreeterPlugin(), GreeterPlugin()] }
    #expect(try await lua.run("return require('greeter').answer") == [42])
  }
}

/// Counts how often its module is described, to show it happens on the first
/// `require` and only then.
struct LazyCounterPlugin: LunarPlugin {
  let name = "lazy.counter"
  let builds: Counter

  final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
  }

  func install(in runtime: RuntimeCore) throws {
    let builds = self.builds
    runtime.install(moduleNamed: name) { _ in
      builds.increment()
      var module = LuaModule("lazy.counter")
      module.value("ready", true)
      return module
    }
  }
}

@Suite struct LazyModuleTests {
  @Test func aModuleIsDescribedOnItsFirstRequireOnly() async throws {
    let counter = LazyCounterPlugin.Counter()
    let lua = try TestRuntime { $0.plugins = [LazyCounterPlugin(builds: counter)] }
    _ = try await lua.run("return 1")
    #expect(counter.value == 0)
    let results = try await lua.run("""
      local a = require 'lazy.counter'
      local b = require 'lazy.counter'
      return a.ready, a == b
      """)
    #expect(results == [true, true])
    #expect(counter.value == 1)
  }
}
