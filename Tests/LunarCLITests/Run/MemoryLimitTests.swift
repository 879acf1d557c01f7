import Foundation
import TestSupport
import Testing

/// `--max-memory` bounds what Lua hands to Swift, not only Lua's own heap:
/// each script below keeps copies in Swift until one no longer fits, and the
/// call that made it fails with Lua's own `not enough memory`, after which
/// the script still runs (the copy was never kept).
@Suite struct MemoryLimitTests {
  /// About 4 MB in Lua, more as a copy in Swift.
  static let bigTable = "local big = {} for i = 1, 40000 do big[i] = ('x'):rep(40) .. i end"

  /// Runs `script` under a 16 MB limit; it prints what `pcall` gave and
  /// raises the error again, so the run ends as an uncaught one would.
  func run(_ script: String) async throws -> LunarProcess.Outcome {
    try await LunarProcess.run(["run", "--max-memory", "16M", "-"], input: script, timeout: 60)
  }

  func expectRefused(_ outcome: LunarProcess.Outcome) {
    #expect(outcome.status == 1)
    #expect(outcome.stdout == "false\tnot enough memory\ttrue\n", "\(outcome.stderr)")
    #expect(outcome.stderr.hasPrefix("lunar: not enough memory (the limit is 16777216 bytes)"), "\(outcome.stderr)")
  }

  @Test func aCopyForSwiftCollectsGarbageFirstAsLuaDoes() async throws {
    // The heap is near the limit and full of garbage (the collector is
    // stopped, as a run between two cycles would leave it): Lua's own
    // allocations would collect first, and so must Swift's copy.
    let outcome = try await run("""
      local machine = require "lunar.machine"
      local m = machine.new { name = "m", initial = "a", states = { a = { on = { big = "a" } } } }
      local value = { "big" }
      for i = 1, 20000 do value[i + 1] = ("x"):rep(100) .. i end
      collectgarbage("stop")
      local junk = {}
      for i = 1, 60000 do junk[i] = ("y"):rep(150) .. i end
      junk = nil
      local full = collectgarbage("count") > 14 * 1024
      print(full, pcall(m.send, m, value))
      collectgarbage("restart")
      m:settle()
      """)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "true\ttrue\n")
  }

  @Test func messagesWaitingInAMailboxCount() async throws {
    await expectRefused(try run("""
      local machine = require "lunar.machine"
      local m = machine.new { name = "m", initial = "a", states = { a = { on = { big = "a" } } } }
      \(Self.bigTable)
      big[1] = "big"
      local sent = 0
      local ok, err = pcall(function() for i = 1, 50 do m:send(big); sent = i end end)
      print(ok, err, sent < 50)
      error(err, 0)
      """))
  }

  @Test func storedValuesCount() async throws {
    await expectRefused(try run("""
      lunar.action("keep", { uses = { "store" } }, function(ctx)
        \(Self.bigTable)
        local stored = 0
        local ok, err = pcall(function() for i = 1, 50 do ctx.store:set("k" .. i, big); stored = i end end)
        print(ok, err, stored < 50)
        error(err, 0)
      end)
      lunar.run("keep")
      """))
  }

  @Test func recordedEventsCount() async throws {
    await expectRefused(try run("""
      require("lunar.trace").start()
      lunar.action("tell", function(ctx)
        \(Self.bigTable)
        local told = 0
        local ok, err = pcall(function() for i = 1, 50 do ctx:event("big", { items = big }); told = i end end)
        print(ok, err, told < 50)
        error(err, 0)
      end)
      lunar.run("tell")
      """))
  }

  @Test func aDecodedHTTPBodyCounts() async throws {
    // About 8 MB of JSON, several times that once decoded.
    let items = (1...200_000).map { "{\"id\":\($0),\"name\":\"launch \($0)\"}" }.joined(separator: ",")
    let server = try TestHTTPServer { _ in .init(body: "{\"items\":[\(items)]}") }
    await expectRefused(try run("""
      lunar.action("fetch", { uses = { "http" } }, function(ctx)
        local ok, err = pcall(function() return ctx.http:get_json("\(server.url)/launches") end)
        print(ok, err, collectgarbage("count") < 16 * 1024)
        error(err, 0)
      end)
      lunar.run("fetch")
      """))
  }
}
