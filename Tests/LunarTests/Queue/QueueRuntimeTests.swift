import LuaKit
import Testing

@testable import Lunar

/// A plugin that submits Swift work into a Lua-made queue.
struct SwiftJobsPlugin: LunarPlugin {
  let name = "swiftjobs"

  func install(in runtime: RuntimeCore) throws {
    let taskClass = runtime.taskClass
    var module = LuaModule("swiftjobs")
    // swiftjobs.submit(queue, value): a Swift job that really suspends.
    module.function("submit") { call in
      let queue = try call.object(1, of: LuaQueue.self, named: "lunar.queue")
      let value = try call.value(2)
      let task = queue.submit { () async throws -> LuaValue in
        try await Task.sleep(for: .milliseconds(1))
        if value == "fail" { throw LuaScriptError("swift job failed") }
        return value
      }
      LuaState(borrowing: call.L).push(task, as: taskClass)
      return .one
    }
    try runtime.install(module)
  }
}

@Suite struct QueueRuntimeTests {
  @Test func luaAndSwiftJobsShareOneQueueInOrder() async throws {
    let lua = try TestRuntime(clock: .real) { $0.plugins = [SwiftJobsPlugin()] }
    let results = try await lua.run("""
      local queue, jobs = require 'lunar.queue', require 'swiftjobs'
      local q = queue.new('mixed')
      local log = {}
      local a = q:submit(function() lunar.sleep(0.002); log[#log + 1] = 'lua A' return 'a' end)
      local b = jobs.submit(q, 'from swift')
      local c = q:submit(function() log[#log + 1] = 'lua C' return b:status() end)
      local failing = jobs.submit(q, 'fail')
      q:drain()
      local ok, err = failing:result()
      return a:await(), b:await(), c:await(), table.concat(log, ','), ok, err
      """)
    #expect(results == ["a", "from swift", "done", "lua A,lua C", false, "swift job failed"])
    #expect(lua.events("job.").map { $0.replacingOccurrences(of: "queue=mixed ", with: "") } == [
      "job.submitted seq=1", "job.started seq=1", "job.submitted seq=2", "job.submitted seq=3", "job.submitted seq=4",
      "job.finished seq=1", "job.started seq=2", "job.finished seq=2", "job.started seq=3", "job.finished seq=3",
      "job.started seq=4", "job.failed seq=4 error=\"swift job failed\"",
    ])
  }

  @Test func aSwiftJobsNilIsOneResult() async throws {
    let lua = try TestRuntime(clock: .real) { $0.plugins = [SwiftJobsPlugin()] }
    let results = try await lua.run("""
      local queue, jobs = require 'lunar.queue', require 'swiftjobs'
      local job = jobs.submit(queue.new('nil'), nil)
      return select('#', job:await()), select('#', job:result()), select('#', job:await())
      """)
    #expect(results == [1, 2, 1])
  }

  @Test func aQueueKeepsTheBytesOfItsName() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run(#"""
      local queue = require 'lunar.queue'
      return queue.new('\xfe').name, queue.new { name = 'b\0c\xff', policy = 'stop' }.name
      """#)
    #expect(results == [.string(LuaString(bytes: [0xFE])), .string(LuaString(bytes: [0x62, 0, 0x63, 0xFF]))])
  }

  @Test func aSwiftJobCancelledWhileWaitingNeverRuns() async throws {
    let lua = try TestRuntime(clock: .real) { $0.plugins = [SwiftJobsPlugin()] }
    let results = try await lua.run("""
      local queue, jobs = require 'lunar.queue', require 'swiftjobs'
      local q = queue.new('q')
      local slow = q:submit(function() lunar.sleep(0.001) end)
      local job = jobs.submit(q, 'x')
      job:cancel()
      q:drain()
      return job:status()
      """)
    #expect(results == ["cancelled"])
  }
}

extension String {
  func replacingOccurrences(of target: String, with replacement: String) -> String {
    split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
  }
}
