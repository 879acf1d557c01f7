import Foundation
import Testing
import TestSupport

@Suite struct RunCommandTests {
  @Test func helloRunsAndExitsZero() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("hello.lua", "print('hello', ...)")
    let outcome = try await LunarProcess.run(["run", script, "a", "b"])
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "hello\ta\tb\n")
    #expect(outcome.stderr == "")
  }

  @Test func aFileWithoutRunIsRunToo() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("x.lua", "print(select('#', ...))")
    let outcome = try await LunarProcess.run([script, "1", "2", "3"])
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "3\n")
  }

  @Test func argIsFilledAsLuaDoes() async throws {
    let folder = try TemporaryFolder()
    try folder.write("args.lua", "for i = -2, #arg do io.write(tostring(arg[i]), '|') end print()")
    let outcome = try await LunarProcess.run(["run", "args.lua", "x", "--flag"], in: folder.url)
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "\(LunarProcess.binary)|run|args.lua|x|--flag|\n")
  }

  @Test func scriptFromStandardInput() async throws {
    let outcome = try await LunarProcess.run(["run", "-", "q"], input: "print(arg[0], ..., 6 * 7)")
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "-\tq\t42\n")
  }

  @Test func osExitStatusIsTheProcessStatus() async throws {
    await #expect(try LunarProcess.run(["run", "-"], input: "io.write('bye') os.exit(3)").status == 3)
    await #expect(try LunarProcess.run(["run", "-"], input: "os.exit(true)").status == 0)
    await #expect(try LunarProcess.run(["run", "-"], input: "os.exit(false)").status == 1)
    let flushed = try await LunarProcess.run(["run", "-"], input: "io.write('kept') os.exit(0, true)")
    #expect(flushed.stdout == "kept")
  }

  @Test func machinesWhoseStateNamesAreNotTextRun() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: #"""
      local machine = require 'lunar.machine'
      local m = machine.new { name = 'bytes', initial = 'b\0c', states = {
        ['b\0c'] = { on = { next = '\xfe', nfc = '\xC3\xA9', nfd = 'e\xCC\x81' } },
        ['\xfe'] = { on = { next = 'b\0c' } },
        ['\xC3\xA9'] = {}, ['e\xCC\x81'] = {},
      } }
      m:send('next') m:settle()
      io.write(tostring(m.state == '\xfe'), ' ')
      m:send('next') m:settle()
      io.write(tostring(m.state == 'b\0c'), ' ')
      m:send('nfd') m:settle()
      print(m.state == 'e\xCC\x81')
      """#)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "true true true\n")
  }

  @Test func aRuntimeErrorPrintsPositionAndTraceback() async throws {
    let folder = try TemporaryFolder()
    try folder.write("boom.lua", "local function f()\n  error('boom')\nend\nf()\n")
    let outcome = try await LunarProcess.run(["run", "boom.lua"], in: folder.url)
    #expect(outcome.status == 1)
    let lines = outcome.stderr.split(separator: "\n").map(String.init)
    #expect(lines.first == "lunar: boom.lua:2: boom")
    #expect(lines.dropFirst().first == "stack traceback:")
    #expect(lines.contains("\tboom.lua:2: in local 'f'"))
    #expect(lines.contains("\tboom.lua:4: in main chunk"))
  }

  @Test func aSyntaxErrorNamesFileAndLine() async throws {
    let folder = try TemporaryFolder()
    try folder.write("bad.lua", "local x = 1\nif x then\n")
    let outcome = try await LunarProcess.run(["run", "bad.lua"], in: folder.url)
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: bad.lua:3: 'end' expected (to close 'if' at line 2) near <eof>\n")
  }

  @Test func aMissingFileIsAnError() async throws {
    let outcome = try await LunarProcess.run(["run", "/nonexistent/nothing.lua"])
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: cannot open /nonexistent/nothing.lua: No such file or directory\n")
  }

  @Test func errorObjectsThatAreNotStrings() async throws {
    let table = try await LunarProcess.run(["run", "-"], input: "error({})")
    #expect(table.status == 1)
    #expect(table.stderr.hasPrefix("lunar: (error object is a table value)\n"))
    let described = try await LunarProcess.run(["run", "-"], input: "error(setmetatable({}, {__tostring = function() return 'mine' end}))")
    #expect(described.stderr.hasPrefix("lunar: mine\n"))
  }

  @Test func requireFindsModulesOnPackagePath() async throws {
    let folder = try TemporaryFolder()
    try folder.write("lib/greet.lua", "return { hi = function(n) return 'hi ' .. n end }")
    try folder.write("main.lua", "package.path = 'lib/?.lua;' .. package.path\nprint(require('greet').hi('there'))")
    let outcome = try await LunarProcess.run(["run", "main.lua"], in: folder.url)
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "hi there\n")
    let viaEnvironment = try await LunarProcess.run(
      ["run", "-"], input: "print(require('greet').hi('env'))", in: folder.url,
      environment: ["LUA_PATH": folder.url.path + "/lib/?.lua"])
    #expect(viaEnvironment.stdout == "hi env\n")
  }

  @Test func nativeModulesLoadAsUnderLua54() async throws {
    let outcome = try await LunarProcess.run(
      ["run", "-"], input: "local lpeg = require 'lpeg'; print(lpeg.match(lpeg.C(lpeg.R('az')^1), 'lunar!'))")
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "lunar\n")
  }

  @Test func stringDumpAndBinaryChunksWork() async throws {
    let outcome = try await LunarProcess.run(
      ["run", "-"], input: "local f = load(string.dump(function(a) return a * 2 end)); print(f(21))")
    #expect(outcome.stdout == "42\n")
  }

  @Test func luaInitRunsFirst() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: "print(greeting)", environment: ["LUA_INIT": "greeting = 'from init'"])
    #expect(outcome.stdout == "from init\n")
    let preferred = try await LunarProcess.run(
      ["run", "-"], input: "print(greeting)", environment: ["LUA_INIT": "greeting = 1", "LUA_INIT_5_4": "greeting = 2"])
    #expect(preferred.stdout == "2\n")
  }

  @Test func printGoesThroughTheGlobal() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: "print(1, nil, true, 2.5, 'x')")
    #expect(outcome.stdout == "1\tnil\ttrue\t2.5\tx\n")
  }

  @Test func theMainChunkRunsOnTheMainThread() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: "local co, main = coroutine.running(); print(main, coroutine.isyieldable())")
    #expect(outcome.stdout == "true\tfalse\n")
  }

  @Test func hugeArgumentListsAndLongLines() async throws {
    let arguments = (1...2000).map(String.init)
    let outcome = try await LunarProcess.run(["run", "-"] + arguments, input: "print(select('#', ...), #arg)")
    #expect(outcome.stdout == "2000\t2000\n")
    let long = String(repeating: "x", count: 100_000)
    let echoed = try await LunarProcess.run(["run", "-", long], input: "print(#(...))")
    #expect(echoed.stdout == "100000\n")
  }

  @Test func binaryGarbageIsASyntaxErrorNotACrash() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: "\u{1}\u{2}\u{3}\u{ff}garbage")
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: stdin:1:"))
  }
}
