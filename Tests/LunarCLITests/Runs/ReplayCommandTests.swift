import Foundation
import Synchronization
import Testing
import TestSupport

/// `lunar run --record FILE` and `--replay FILE`: calls are kept per step,
/// so steps running at once replay alike; every value comes back exactly.
@Suite struct ReplayCommandTests {
  /// `show(value)`: a canonical text of any value, telling integers from
  /// floats, each float by its bits, strings by their bytes.
  static let show = """
    local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end
    function show(v)
      local t = math.type(v) or type(v)
      if t == "integer" then return "i" .. v end
      if t == "float" then return "f" .. hex(string.pack("<d", v)) end
      if t == "string" then return "s" .. hex(v) end
      if t ~= "table" then return tostring(v) end
      local parts = {}
      for key, value in pairs(v) do parts[#parts + 1] = show(key) .. "=" .. show(value) end
      table.sort(parts)
      return "{" .. table.concat(parts, ",") .. "}"
    end

    """

  static let offline = ["LUNAR_LAUNCHES_LIVE": "0"]

  @Test func theLaunchReportExampleRecordsAndReplaysTwentyTimes() async throws {
    let folder = try TemporaryFolder()
    let journal = folder.url.appendingPathComponent("report.journal").path
    for round in 1...20 {
      let recorded = try await LunarProcess.run(["run", "--no-store", "--record", journal, "launch_report.lua"], in: ExampleTests.examples, environment: Self.offline)
      #expect(recorded.status == 0, "round \(round): \(recorded.stderr)")
      let replayed = try await LunarProcess.run(["run", "--no-store", "--replay", journal, "launch_report.lua"], in: ExampleTests.examples, environment: Self.offline)
      #expect(replayed.status == 0, "round \(round): \(replayed.stdout)\(replayed.stderr)")
      #expect(!replayed.stdout.contains("diverged"))
      let report = { (text: String) in text.split(separator: "\n").filter { $0.hasPrefix("next: ") } }
      #expect(report(replayed.stdout) == report(recorded.stdout))
      #expect(report(replayed.stdout).count == 1)
    }
  }

  /// Six steps at once, each making several calls after random sleeps (one
  /// from a task it spawns); one step fails its first attempt and retries. The server numbers its
  /// answers, so each recording differs and a replay must give its own.
  static let parallel = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local url = arg[1]
    local function calls(name)
      return function(ctx)
        local got = {}
        for i = 1, 4 do
          lunar.sleep(math.random() * 0.02)
          local function call() return ctx.http:get(url .. "/" .. name .. "/" .. i).body end
          -- A task the step spawns makes its calls in the step.
          got[#got + 1] = i == 4 and lunar.spawn(call):await() or call()
          got[#got + 1] = ("%.17g"):format(ctx.clock:now())
        end
        print(name .. ": " .. table.concat(got, " "))
        return got
      end
    end
    local steps = {}
    for _, name in ipairs { "a", "b", "c", "d", "e" } do
      steps[#steps + 1] = step(name) { services = { "http", "clock" }, run = calls(name) }
    end
    steps[#steps + 1] = step "flaky" { services = { "http" }, retry = { attempts = 2, backoff = 0 }, run = function(ctx)
      lunar.sleep(math.random() * 0.02)
      local answer = ctx.http:get(url .. "/flaky").body
      if answer:find("first") then error("flaky: " .. answer, 0) end
      print("flaky: " .. answer)
    end }
    return workflow "fan" (steps)
    """

  @Test func parallelStepsReplayTheirOwnCallsHoweverTheyInterleave() async throws {
    let counter = Counter()
    let server = try TestHTTPServer { request in
      let number = counter.next()
      return TestHTTPServer.Reply(body: "\(request.path == "/flaky" && number == counter.firstFlaky(number) ? "first" : "answer")\(number)")
    }
    defer { server.stop() }
    let folder = try TemporaryFolder()
    let script = try folder.write("fan.lua", Self.parallel)
    let journal = folder.url.appendingPathComponent("fan.journal").path
    for _ in 1...3 {
      counter.reset()
      let recorded = try await LunarProcess.run(["run", "--no-store", "--jobs", "4", "--record", journal, script, server.url])
      #expect(recorded.status == 0, "\(recorded.stdout)\(recorded.stderr)")
      let lines = Self.printed(recorded.stdout)
      #expect(lines.count == 6)
      #expect(lines.contains { $0.hasPrefix("flaky: answer") }, "the second attempt got the second answer")
      let requests = server.requests.count
      for _ in 1...4 {
        let replayed = try await LunarProcess.run(["run", "--no-store", "--jobs", "4", "--replay", journal, script, server.url])
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
        #expect(Self.printed(replayed.stdout) == lines)
        #expect(server.requests.count == requests, "a replay asks the journal, not the server")
      }
    }
  }

  /// The lines the steps printed, in step order.
  static func printed(_ stdout: String) -> [String] {
    stdout.split(separator: "\n").map(String.init).filter { $0.range(of: #"^[a-z]+: "#, options: .regularExpression) != nil }.sorted()
  }

  @Test func everyKindOfValueAnActionGetsSurvivesReplay() async throws {
    // A service that reads the outside world records what it read, as the
    // launches plugin does; replaying, it answers from the journal.
    let script = Self.show + """
      local actions = require "lunar.actions"
      local function reading()
        if arg[1] ~= "live" then return "something else" end
        return {
          "\\0\\255\\254", 1, 1.0, 0/0, -(0/0), 1/0, -1/0, -0.0, 0.0, math.maxinteger, math.mininteger, 2^53 + 1.0,
          { [1] = "x", [3] = "y" }, { [true] = "t", [false] = "f", [2.5] = "half", [-1] = "minus", ["\\0k"] = 0 },
          { a = { b = { c = { 1, 2.0, { "\\255" } } } } }, {},
        }
      end
      actions.service("sensor", { read = function(self)
        if actions.replaying() then return actions.journal("sensor", {}).value end
        local value = reading()
        actions.journal("sensor", {}, { value = value })
        return value
      end })
      lunar.action("read", { uses = { "sensor" } }, function(ctx) return ctx.sensor:read() end)
      print(show(lunar.run("read")))
      """
    let folder = try TemporaryFolder()
    let recorded = try await LunarProcess.run(["run", "--record", "values.journal", "-", "live"], input: script, in: folder.url)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    #expect(recorded.stdout.contains("s00fffe"), "the bytes were read")
    #expect(recorded.stdout.contains("=i1,") && recorded.stdout.contains("=f000000000000f03f,"), "1 and 1.0 both")
    let replayed = try await LunarProcess.run(["run", "--replay", "values.journal", "-", "replay"], input: script, in: folder.url)
    #expect(replayed.status == 0, "\(replayed.stderr)")
    #expect(replayed.stdout == recorded.stdout)
  }

  @Test func aBinaryBodyReplaysByteForByte() async throws {
    let server = try TestHTTPServer { _ in TestHTTPServer.Reply(contentType: "application/octet-stream", bytes: Array(0...255)) }
    defer { server.stop() }
    let script = Self.show + """
      lunar.action("download", { uses = { "http" } }, function(ctx, url) return ctx.http:get(url).body end)
      local body = lunar.run("download", arg[1])
      print(#body, show(body))
      """
    let folder = try TemporaryFolder()
    let recorded = try await LunarProcess.run(["run", "--record", "body.journal", "-", server.url], input: script, in: folder.url)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let all = (0...255).map { String(format: "%02x", $0) }.joined()
    #expect(recorded.stdout == "256\ts\(all)\n")
    let replayed = try await LunarProcess.run(["run", "--replay", "body.journal", "-", server.url], input: script, in: folder.url)
    #expect(replayed.status == 0, "\(replayed.stderr)")
    #expect(replayed.stdout == recorded.stdout)
    #expect(server.requests.count == 1)
  }

  @Test func aDivergenceNamesTheStepTheCallAndBothSides() async throws {
    let server = try TestHTTPServer { request in TestHTTPServer.Reply(body: request.path) }
    defer { server.stop() }
    let script = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      local url, second = arg[1], arg[2]
      return workflow "demo" {
        step "fetch" { services = { "http" }, retry = { attempts = 2, backoff = 0 }, run = function(ctx)
          ctx.http:get(url .. "/first")
          return ctx.http:get(url .. "/" .. second).body
        end },
        step "other" { services = { "http" }, run = function(ctx) return ctx.http:get(url .. "/other").body end },
      }
      """
    let folder = try TemporaryFolder()
    let recorded = try await LunarProcess.run(["run", "--no-store", "--record", "demo.journal", "-", server.url, "second"], input: script, in: folder.url)
    #expect(recorded.status == 0, "\(recorded.stdout)\(recorded.stderr)")
    let replayed = try await LunarProcess.run(["run", "--no-store", "--replay", "demo.journal", "-", server.url, "changed"], input: script, in: folder.url)
    #expect(replayed.status == 1)
    let divergence = """
      replay diverged in step "fetch" at call 3: the journal has http { method = "GET", url = "\(server.url)/second" }, \
      the script asked for http { method = "GET", url = "\(server.url)/changed" }
      """
    #expect(replayed.stdout.contains("[demo] step fetch attempt 1 failed: stdin:7: \(divergence); retrying\n"), "\(replayed.stdout)")
    // The retry stops at its first call with the same divergence.
    #expect(replayed.stdout.contains("[demo] step fetch failed: \(divergence)\n"), "\(replayed.stdout)")
    #expect(replayed.stdout.contains("[demo] step other succeeded"), "another step's calls are its own")
    #expect(!replayed.stdout.contains("call 4") && !replayed.stdout.contains("call 5"), "a retry repeats the first divergence, it does not wander on")
    #expect(replayed.stderr == "lunar: workflow demo failed: step fetch failed\n")
    #expect(server.requests.count == 3)
  }

  @Test func aJournalCutMidEntryReplaysUpToTheCut() async throws {
    let script = """
      lunar.action("tick", { uses = { "clock" } }, function(ctx) return ctx.clock:now() end)
      for i = 1, 3 do print(i, lunar.run("tick")) end
      """
    let folder = try TemporaryFolder()
    let recorded = try await LunarProcess.run(["run", "--clock", "virtual", "--record", "run.journal", "-"], input: script, in: folder.url)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let journal = folder.url.appendingPathComponent("run.journal")
    let bytes = try Data(contentsOf: journal)
    // Each tick is three calls (the action, the clock, its result): cut
    // the last call, the third tick's result, in the middle.
    try bytes.prefix(bytes.count - 3).write(to: journal)
    let replayed = try await LunarProcess.run(["run", "--replay", "run.journal", "-"], input: script, in: folder.url)
    #expect(replayed.status == 1)
    let lines = recorded.stdout.split(separator: "\n")
    #expect(replayed.stdout == lines.prefix(2).map { $0 + "\n" }.joined())
    #expect(
      replayed.stderr.hasPrefix(
        #"lunar: stdin:2: replay diverged at call 9: the journal has ended (its last entry was cut short), the script asked for result { name = "tick" }"#),
      "\(replayed.stderr)")
  }

  @Test func aFileThatIsNotAJournalIsRefusedAndUntouched() async throws {
    let folder = try TemporaryFolder()
    let notes = try folder.write("notes.txt", "my notes\n")
    let old = try folder.write("old.jsonl", #"{"kind":"clock","now":1}"# + "\n")
    let script = "print('ran')"
    let replayed = try await LunarProcess.run(["run", "--replay", notes, "-"], input: script, in: folder.url)
    #expect(replayed.status == 1)
    #expect(replayed.stderr == "lunar: cannot replay \(notes): it is not a Lunar journal\n")
    #expect(replayed.stdout.isEmpty)
    let older = try await LunarProcess.run(["run", "--replay", old, "-"], input: script, in: folder.url)
    #expect(older.stderr == "lunar: cannot replay \(old): it is a JSON-lines journal of an earlier Lunar; record it again\n")
    let recorded = try await LunarProcess.run(["run", "--record", notes, "-"], input: script, in: folder.url)
    #expect(recorded.status == 1)
    #expect(recorded.stdout.isEmpty)
    #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
    // An earlier Lunar's journal is Lunar's own: recorded over.
    let again = try await LunarProcess.run(["run", "--record", old, "-"], input: script, in: folder.url)
    #expect(again.status == 0, "\(again.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: old)).starts(with: [0x89] + Array("LUNAR-JOURNAL".utf8)))
  }
}

/// Numbers a test server's answers, and remembers which was the first
/// `/flaky` request of a recording.
private final class Counter: Sendable {
  private let state = Mutex<(count: Int, flaky: Int?)>((0, nil))

  func next() -> Int { state.withLock { $0.count += 1; return $0.count } }
  func reset() { state.withLock { $0 = (0, nil) } }
  /// The number of the first `/flaky` request, which is `number` if none came before.
  func firstFlaky(_ number: Int) -> Int {
    state.withLock { state in
      if state.flaky == nil { state.flaky = number }
      return state.flaky!
    }
  }
}
