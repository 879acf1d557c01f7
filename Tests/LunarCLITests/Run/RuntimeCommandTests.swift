import Foundation
import Testing
import TestSupport

@Suite struct RuntimeCommandTests {
  @Test func deadlockEndsTheRunWithAReport() async throws {
    let script = """
      local a, b
      a = lunar.spawn(function() lunar.sleep(0); return b:await() end)
      b = lunar.spawn(function() lunar.sleep(0); return a:await() end)
      print(a:await())
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 10)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: deadlock: every task is waiting and nothing can wake them\n"))
    #expect(outcome.stderr.contains("  main chunk waits for task 1 at stdin:4\n"))
    #expect(outcome.stderr.contains("  task 1 waits for task 2 at stdin:2\n"))
    #expect(outcome.stderr.contains("  task 2 waits for task 1 at stdin:3\n"))
  }

  @Test func unobservedTaskErrorsFailTheRun() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: "lunar.spawn(function() error('lost') end)\nprint('main done')")
    #expect(outcome.status == 1)
    #expect(outcome.stdout == "main done\n")
    #expect(outcome.stderr.hasPrefix("lunar: unobserved error in task 1 (spawned at stdin:1): stdin:1: lost\n"))
  }

  @Test func closingOrResumingATasksCoroutineIsAnErrorAtTheCallersLine() async throws {
    let script = """
      local co
      local t = lunar.spawn(function() co = coroutine.running(); lunar.sleep(0.05); print('task finished') end)
      lunar.sleep(0.01)
      print(pcall(coroutine.resume, co, true))
      coroutine.close(co)
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 10)
    #expect(outcome.status == 1)
    #expect(outcome.stdout == """
      false\tbad argument #1 to 'coroutine.resume' (the coroutine of task 1 is run by the scheduler; await the task instead)

      """)
    #expect(outcome.stderr.hasPrefix("""
      lunar: stdin:5: bad argument #1 to 'close' (the coroutine of task 1 is run by the scheduler; cancel the task instead)
      stack traceback:
      """))
  }

  @Test func sigintStopsABusyLoop() async throws {
    let running = try LunarProcess.start(
      ["run", "-"],
      input: "lunar.spawn(function() lunar.sleep(3600) end)\nio.stdout:write('ready\\n') io.stdout:flush() while true do end")
    // SIGINT comes once the script is in its loop, not after a guess at how long starting takes.
    try await running.waitForOutput("ready")
    running.send(SIGINT)
    let outcome = try await running.wait(timeout: 10)
    #expect(outcome.status == 130)
    #expect(outcome.stderr == "lunar: interrupted\n")
  }

  @Test func timeoutStopsARunawayScript() async throws {
    let outcome = try await LunarProcess.run(["run", "--timeout", "0.2", "-"], input: "while true do end", timeout: 10)
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: timeout: the script ran longer than 0.2 seconds\n")
  }

  @Test func timeoutCannotBeCaughtByPcall() async throws {
    let outcome = try await LunarProcess.run(
      ["run", "--timeout", "0.2", "-"], input: "while true do pcall(function() while true do end end) end", timeout: 10)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: timeout"))
  }

  @Test func timeoutEndsARunStuckInOneLongCCall() async throws {
    // The backtracking find never returns to Lua, so the count hook never
    // runs; the run still ends about a second after the limit.
    let script = """
      io.write('before ')
      print(string.rep('a', 3e4):find(('a-'):rep(30) .. 'b'))
      """
    let outcome = try await LunarProcess.run(["run", "--timeout", "0.5", "-"], input: script, timeout: 20)
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: timeout: the script ran longer than 0.5 seconds (stopped inside a C function)\n")
    #expect(outcome.stdout == "before ", "buffered output is flushed first")
  }

  @Test func memoryLimitStopsARunawayScript() async throws {
    let outcome = try await LunarProcess.run(
      ["run", "--max-memory", "8M", "-"], input: "local t = {} for i = 1, 1e8 do t[i] = ('x'):rep(64) .. i end")
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: not enough memory (the limit is 8388608 bytes)"))
  }

  @Test func sandboxRefusesTheOutsideWorld() async throws {
    let checks = """
      print(io, debug, os.execute, os.remove, os.rename, package.loadlib)
      print(load(string.dump(function() end)))
      print(pcall(require, 'lpeg'))
      print(load('return 1 + 1')())
      """
    let outcome = try await LunarProcess.run(["run", "--sandbox", "-"], input: checks)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines[0] == "nil\tnil\tnil\tnil\tnil\tnil")
    #expect(lines[1] == "nil\tattempt to load a binary chunk (mode is 't')")
    #expect(lines[2].hasPrefix("false\tmodule 'lpeg' not found"))
    #expect(!outcome.stdout.contains("lpeg.so"), "no native searcher")
    #expect(lines.last == "2")
  }

  @Test func traceFlagPrintsEvents() async throws {
    let outcome = try await LunarProcess.run(
      ["run", "--trace", "--clock", "virtual", "-"], input: "lunar.spawn(function() lunar.sleep(1.5) end):await()")
    #expect(outcome.status == 0)
    #expect(outcome.stderr == """
      [   0.000] task.spawned id=1 label="task 1" at=stdin:1
      [   0.000] task.started id=1
      [   0.000] timer.set after=1.5
      [   0.000] task.waiting id=1 on="sleep 1.5s"
      [   1.500] timer.fired after=1.5
      [   1.500] task.resumed id=1
      [   1.500] task.done id=1

      """)
  }

  @Test func traceFileWritesJSONLines() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("trace.jsonl").path
    let outcome = try await LunarProcess.run(
      ["run", "--trace-file", path, "--clock", "virtual", "-"], input: "lunar.spawn(function() error('x', 0) end):result()")
    #expect(outcome.status == 0)
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 3)
    let last = try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any]
    #expect(last?["kind"] as? String == "task.failed")
    #expect(last?["error"] as? String == "x")
    #expect(last?["sequence"] as? Int == 3)
  }

  @Test func pluginFoldersAreOnTheRequirePath() async throws {
    let folder = try TemporaryFolder()
    try folder.write("mine/greeter.lua", "return { greet = function() return 'from --plugin-dir' end }")
    try folder.write("env/envmod/init.lua", "return 'from LUNAR_PATH'")
    try folder.write("plugins/local.lua", "return 'from ./plugins'")
    let outcome = try await LunarProcess.run(
      ["run", "--plugin-dir", "mine", "-"],
      input: "print(require('greeter').greet()) print((require('envmod'))) print((require('local')))",
      in: folder.url, environment: ["LUNAR_PATH": folder.url.appendingPathComponent("env").path])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "from --plugin-dir\nfrom LUNAR_PATH\nfrom ./plugins\n")
  }

  @Test func lunarIsAGlobalAndAModule() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: "print(require('lunar') == lunar, type(lunar.spawn))")
    #expect(outcome.stdout == "true\tfunction\n")
  }

  @Test(arguments: [
    (["--timeout", "soon"], "lunar: --timeout needs a positive number of seconds, got 'soon'"),
    (["--timeout", "-1"], "lunar: --timeout needs a positive number of seconds, got '-1'"),
    (["--max-memory", "lots"], "lunar: --max-memory needs a number of bytes (e.g. 64M), got 'lots'"),
    (["--clock", "sundial"], "lunar: --clock is 'real' or 'virtual', got 'sundial'"),
  ])
  func badFlagValuesAreUsageErrors(flags: [String], message: String) async throws {
    let outcome = try await LunarProcess.run(["run"] + flags + ["-"], input: "print('never')")
    #expect(outcome.status == 2)
    #expect(outcome.stderr == message + "\nTry 'lunar help run'.\n")
    #expect(outcome.stdout == "")
  }

  @Test func aFlagMissingItsValueIsAUsageError() async throws {
    let outcome = try await LunarProcess.run(["run", "--timeout"])
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: option '--timeout' needs a value (SECONDS)\nTry 'lunar help run'.\n")
  }
}

extension RuntimeCommandTests {
  @Test func analyticsAreWrittenAsJSONLines() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("analytics.jsonl").path
    let outcome = try await LunarProcess.run(
      ["run", "--analytics", path, "--clock", "virtual", "-"],
      input: "lunar.action('work', function(ctx) lunar.sleep(2); ctx:event('done', { n = 1 }) end) lunar.run('work')")
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    let kinds = lines.compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["kind"] as? String
    }
    #expect(kinds == ["action.started", "action.event", "action.finished"])
    let finished = try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any]
    #expect(finished?["duration"] as? Double == 2)
  }

  @Test func recordAndReplayCannotBeCombined() async throws {
    let outcome = try await LunarProcess.run(["run", "--record", "a", "--replay", "b", "-"], input: "")
    #expect(outcome.status == 2)
    #expect(outcome.stderr.hasPrefix("lunar: --record and --replay cannot be used together"))
  }

  @Test func aMissingJournalIsAClearError() async throws {
    let outcome = try await LunarProcess.run(["run", "--replay", "/nonexistent/journal.jsonl", "-"], input: "")
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: cannot read /nonexistent/journal.jsonl: No such file or directory\n")
  }
}
