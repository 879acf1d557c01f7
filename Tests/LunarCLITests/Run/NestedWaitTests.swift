import Foundation
import Testing
import TestSupport

/// Waits that cannot yield run the loop nested above the frames beneath
/// them: `require` no longer nests, and a nested wait that nothing outside
/// the blocked frames can end is a deadlock naming both places.
@Suite struct NestedWaitTests {
  @Test func aModuleRequiredByATaskWaitsWithoutHoldingTheMainChunk() async throws {
    let folder = try TemporaryFolder()
    try folder.write("polls.lua", "while not _G.ready do lunar.sleep(0.01) end\nreturn { value = 'ready' }\n")
    try folder.write("main.lua", """
      package.path = './?.lua'
      local t = lunar.spawn(function() print('task got', require('polls').value) end)
      lunar.sleep(0.01)
      print('main after sleep')
      _G.ready = true
      """)
    // Before, the module body ran the loop nested above the main chunk,
    // which could never set the flag: the run hung until the timeout.
    let outcome = try await LunarProcess.run(["run", "--timeout", "5", "main.lua"], in: folder.url, timeout: 15)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "main after sleep\ntask got\tready\n")
  }

  @Test func aNestedWaitOnlyTheMainChunkCouldEndIsADeadlockNamingBoth() async throws {
    // string.gsub calls its replacement function without a continuation:
    // a wait there cannot yield the task, so the loop runs nested.
    let script = """
      local gate = lunar.spawn(function() lunar.sleep(math.huge) end)
      local t = lunar.spawn(function()
        return (('abc'):gsub('.', function(c) gate:result() return c:upper() end))
      end)
      lunar.sleep(0.2)
      gate:cancel()
      print('main continued', t:result())
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 10)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.hasPrefix("""
      main continued\tfalse\tdeadlock: a nested wait cannot end, and the waits beneath it cannot continue until it does
        task 2 waits for task 1 at stdin:3, nested inside function 'string.gsub', which cannot yield
        beneath it, main chunk waits for sleep 0.2s at stdin:5
        task 1 waits for sleep forever at stdin:1

      """))
  }

  @Test func aTimerBeneathTheNestedWaitDoesNotPostponeTheDeadlock() async throws {
    // The main chunk's timer can only complete the main chunk's own wait,
    // which cannot continue until the nested wait returns: the deadlock is
    // reported at once, not when that timer fires (after the timeout here).
    let script = """
      local gate = lunar.spawn(function() lunar.sleep(math.huge) end)
      lunar.spawn(function()
        print(pcall(string.gsub, 'abc', '.', function(c) gate:result() return c end))
        io.stdout:flush()
      end)
      lunar.sleep(3600)
      """
    let outcome = try await LunarProcess.run(["run", "--timeout", "1", "-"], input: script, timeout: 15)
    #expect(outcome.stdout.hasPrefix("false\tdeadlock: a nested wait cannot end"))
    #expect(outcome.stdout.contains("  beneath it, main chunk waits for sleep 3600s at stdin:6\n"))
    #expect(outcome.stderr.hasPrefix("lunar: timeout: the script ran longer than 1 seconds"))
  }

  @Test func aTimeoutNamesTheFinishedWaitANestedOneHeld() async throws {
    // A nested wait that polls keeps the loop busy, so it is no deadlock;
    // the timeout that ends it says what was held and by what.
    let script = """
      local done = false
      lunar.spawn(function()
        ('abc'):gsub('.', function(c)
          while not done do lunar.sleep(0.01) end
          return c
        end)
      end)
      lunar.sleep(0.01)
      done = true
      """
    let outcome = try await LunarProcess.run(["run", "--timeout", "0.5", "-"], input: script, timeout: 15)
    #expect(outcome.status == 1)
    #expect(outcome.stderr == """
      lunar: timeout: the script ran longer than 0.5 seconds
        main chunk's wait for sleep 0.01s at stdin:8 had ended, but it could not continue beneath task 1's wait for sleep 0.01s at stdin:4, nested inside function 'string.gsub', which cannot yield

      """)
  }

  @Test func aSortComparatorInATaskWaitsWithoutHoldingTheMainChunk() async throws {
    // Before, each waiting comparison ran the loop nested above the main
    // chunk, whose 10 ms sleep returned only after the whole sort.
    let script = """
      local t = lunar.spawn(function()
        local xs = {}
        for i = 1, 50 do xs[i] = (i * 37) % 50 end
        table.sort(xs, function(a, b) lunar.sleep(0.001) return a < b end)
        print('sorted', xs[1], xs[50])
      end)
      lunar.sleep(0.01)
      print('main after sleep')
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 20)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "main after sleep\nsorted\t0\t49\n")
  }

  @Test func sortKeepsTheStockComparisonsAndErrors() async throws {
    // Every comparison is logged, so the same order of comparisons, the
    // same results and the same errors as lua5.4's table.sort.
    let folder = Repository.url("Tests/LunarCLITests/Fixtures/sort")
    let stock = try await Self.runStockLua(["main.lua"], in: folder)
    let outcome = try await LunarProcess.run(["run", "main.lua"], in: folder, timeout: 20)
    #expect(stock.status == 0)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == stock.stdout)
    #expect(outcome.stdout.contains("position\tfalse\tmain.lua:58: invalid order function for sorting\n"))
  }

  @Test func requireKeepsTheStockSemantics() async throws {
    // The same file under lua5.4 and lunar run: messages, package.loaded,
    // searchers, the loader's data.
    let folder = Repository.url("Tests/LunarCLITests/Fixtures/require")
    let stock = try await Self.runStockLua(["main.lua"], in: folder)
    let outcome = try await LunarProcess.run(["run", "main.lua"], in: folder, timeout: 20)
    #expect(stock.status == 0)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == stock.stdout)
    #expect(outcome.stdout.contains("module 'no.such.module' not found:\n\tno field package.preload['no.such.module']\n\tno file './no/such/module.lua'"))
  }

  @Test func requireFromATaskMayWaitInTheModuleBody() async throws {
    let folder = try TemporaryFolder()
    try folder.write("slow.lua", "local name, path = ...\nlunar.sleep(0.01)\nreturn { yieldable = coroutine.isyieldable(), path = path }\n")
    try folder.write("main.lua", """
      package.path = './?.lua'
      local t = lunar.spawn(function()
        local m, path = require('slow')
        return m.yieldable, m.path, path, require('slow') == m
      end)
      print(t:await())
      """)
    let outcome = try await LunarProcess.run(["run", "--sandbox", "main.lua"], in: folder.url, timeout: 10)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    // The body waits by yielding its task, yet answers isyieldable as stock
    // Lua does in a module body: a user's own yield there cannot pass.
    #expect(outcome.stdout == "false\t./slow.lua\t./slow.lua\ttrue\n")
  }

  /// Runs Debian's `lua5.4` (the stock interpreter) in `directory`.
  static func runStockLua(_ arguments: [String], in directory: URL) async throws -> LunarProcess.Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/lua5.4")
    process.arguments = arguments
    process.currentDirectoryURL = directory
    let output = try TemporaryFile()
    process.standardOutput = output.handle
    process.standardError = output.handle
    try process.run()
    await ChildProcess.wait(for: process)
    return LunarProcess.Outcome(status: process.terminationStatus, stdout: try output.contents(), stderr: "")
  }
}
