import Foundation
import Testing
import TestSupport

/// `--trace-format chrome`: `lunar run` and `lunar test` write a Chrome
/// trace, and `lunar runs show RUN --format chrome` exports a recorded run;
/// each file is read back by `ChromeTrace`, which checks the format's rules.
@Suite struct ChromeTraceCommandTests {
  /// A workflow of three steps in a chain: the first submits three jobs to
  /// a queue, the second sends a machine three messages (each `open`
  /// issues a command that takes half a unit), the third sleeps. `arg[1]`
  /// is the unit of time in seconds.
  static let script = """
    local workflow = require "lunar.workflow"
    local queue = require "lunar.queue"
    local machine = require "lunar.machine"
    local step = workflow.step
    local unit = tonumber(arg[1])

    local jobs = queue.new("jobs")
    local door = machine.new {
      name = "door", initial = "closed",
      states = {
        closed = { on = { open = { run = function() return "opened", { { "creak" } } end, targets = { "opened" } } } },
        opened = { on = { close = "closed" } },
      },
    }
    machine.interpreter("creak", function() lunar.sleep(unit / 2) end)

    return workflow "chain" {
      step "first" { run = function()
        local a = jobs:submit(function() lunar.sleep(unit) return 1 end)
        local b = jobs:submit(function() lunar.sleep(unit) return 2 end)
        local c = jobs:submit(function() return 3 end)
        return a:await() + b:await() + c:await()
      end },
      step "second" { needs = { "first" }, run = function()
        door:send("open")
        door:send("close")
        door:send("open")
        door:settle()
        return door.state
      end },
      step "third" { needs = { "second" }, run = function() lunar.sleep(unit) end },
    }
    """

  /// Runs `script` with `flags` writing a Chrome trace; returns it read back.
  static func trace(_ script: String, flags: [String] = [], arguments: [String] = []) async throws -> (
    LunarProcess.Outcome, ChromeTrace
  ) {
    let folder = try TemporaryFolder()
    let file = try folder.write("script.lua", script)
    let path = folder.url.appendingPathComponent("trace.json").path
    let outcome = try await LunarProcess.run(
      ["run", "--no-store", "--trace-file", path, "--trace-format", "chrome"] + flags + [file] + arguments)
    return (outcome, ChromeTrace(try Data(contentsOf: URL(fileURLWithPath: path))))
  }

  @Test(arguments: [("virtual", "1"), ("real", "0.02")])
  func aRunsStepsJobsAndMessagesAreSlicesInOrder(clock: String, unit: String) async throws {
    let (outcome, trace) = try await Self.trace(Self.script, flags: ["--clock", clock], arguments: [unit])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(trace.problems == [])
    #expect(trace.displayTimeUnit == "ms")

    let steps = trace.slices(onTracksStartingWith: "workflow chain")
    #expect(steps.map(\.name) == ["first", "second", "third"])
    #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.end <= $1.start }, "each step starts after the one it needs")
    #expect(steps.map { $0.args["status"] as? String } == ["succeeded", "succeeded", "succeeded"])

    let jobs = trace.slices(onTracksStartingWith: "queue jobs")
    #expect(jobs.map(\.name) == ["jobs#1", "jobs#2", "jobs#3"])
    #expect(zip(jobs, jobs.dropFirst()).allSatisfy { $0.end <= $1.start }, "one job at a time, in order")
    #expect(jobs.map { $0.args["seq"] as? Int } == [1, 2, 3])
    #expect(jobs.allSatisfy { $0.args["queue"] as? String == "jobs" && $0.args["status"] as? String == "finished" })
    #expect(jobs.allSatisfy { $0.start >= steps[0].start && $0.end <= steps[0].end }, "inside the step that submitted them")

    let door = trace.slices(onTracksStartingWith: "machine door")
    #expect(door.filter { $0.category == "message" }.map(\.name) == ["open", "close", "open"])
    #expect(door.filter { $0.category == "message" }.map { $0.args["to"] as? String } == ["opened", "closed", "opened"])
    let creaks = door.filter { $0.category == "command" }
    #expect(creaks.map(\.name) == ["creak", "creak"])

    // Each submit is an arrow from the step's task to its job.
    let submits = trace.flows.filter { $0.start.name == "submit" }
    #expect(submits.count == 3)
    for flow in submits {
      #expect(trace.trackName(pid: flow.start.pid, tid: flow.start.tid)?.hasSuffix("step first") == true)
      #expect(trace.slice(boundTo: flow.end)?.category == "job")
    }
    #expect(submits.compactMap { trace.slice(boundTo: $0.end)?.name }.sorted() == ["jobs#1", "jobs#2", "jobs#3"])
    let sends = trace.flows.filter { $0.start.name == "send" }
    #expect(sends.compactMap { trace.slice(boundTo: $0.end)?.name } == ["open", "close", "open"])

    if clock == "virtual" {
      // Virtual time jumps over sleeps, and the timeline shows them whole.
      let second: Int64 = 1_000_000_000
      #expect(jobs.map { $0.end - $0.start } == [second, second, 0])
      #expect(creaks.map { $0.end - $0.start } == [second / 2, second / 2])
      #expect(steps.map { $0.end - $0.start } == [2 * second, second, second])
      #expect(trace.slices.contains { $0.category == "wait" && $0.name == "sleep 1s" && $0.end - $0.start == second })
    }
  }

  @Test func theReleaseTrainExampleMakesATimeline() async throws {
    // The command line its header gives.
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("release.json").path
    let outcome = try await LunarProcess.run(
      ["run", "--no-store", "--clock", "virtual", "--trace-file", path, "--trace-format", "chrome", "release_train.lua"],
      in: ExampleTests.examples)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let trace = ChromeTrace(try Data(contentsOf: URL(fileURLWithPath: path)))
    #expect(trace.problems == [])
    #expect(trace.slices(onTracksStartingWith: "workflow release-train").map(\.name) == ["build_eu", "build_us", "approve", "ship", "announce"])
    #expect(trace.slices(onTracksStartingWith: "queue deploys").map(\.name) == ["deploys#1", "deploys#2"])
    let messages = trace.slices(onTracksStartingWith: "machine release").filter { $0.category == "message" }
    #expect(messages.map(\.name) == ["approve", "ship", "deployed", "deployed"])
    let deploys = trace.slices(onTracksStartingWith: "machine release").filter { $0.category == "command" }
    #expect(deploys.map { $0.args["command"] as? String } == ["deploy", "deploy"])
    #expect(deploys.allSatisfy { $0.start >= messages[1].start && $0.end <= messages[1].end }, "the commands ship issued")
  }

  @Test func tasksAndActionsNestOnTheirTaskTracks() async throws {
    let (outcome, trace) = try await Self.trace(
      """
      lunar.action("inner", {}, function() lunar.sleep(1) return 1 end)
      lunar.action("outer", {}, function(ctx) return ctx:run("inner") + 1 end)
      local t = lunar.spawn(function() return lunar.run("outer") end)
      print(t:await())
      """, flags: ["--clock", "virtual"])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "2\n")
    #expect(trace.problems == [])
    let track = trace.slices(onTracksStartingWith: "task 1")
    #expect(track.map(\.name) == ["task 1", "outer", "inner", "sleep 1s"], "task, actions, wait: each inside the one before")
    #expect(zip(track, track.dropFirst()).allSatisfy { $0.start <= $1.start && $1.end <= $0.end })
    #expect(track[1].args["status"] as? String == "finished")
  }

  @Test func aRunThatDeadlocksStillWritesItsTimeline() async throws {
    let (outcome, trace) = try await Self.trace(
      """
      local other
      local a = lunar.spawn(function() lunar.sleep(0) return other:await() end)
      other = lunar.spawn(function() return a:await() end)
      a:await()
      """, flags: ["--clock", "virtual"])
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("deadlock"), "\(outcome.stderr)")
    #expect(trace.problems == [])
    let waits = trace.slices.filter { $0.category == "wait" }
    #expect(waits.map(\.name).sorted() == ["sleep 0s", "task 1", "task 2"])
    let tasks = trace.slices.filter { $0.category == "task" }
    #expect(tasks.map { $0.args["status"] as? String } == ["cancelled", "cancelled"], "the deadlock's report cancels them")
  }

  @Test func theFormatIsCheckedAndNeedsAFile() async throws {
    for command in ["run", "test"] {
      let operand = command == "run" ? ["-"] : []
      let unknown = try await LunarProcess.run([command, "--trace-file", "t.json", "--trace-format", "xml"] + operand, input: "")
      #expect(unknown.status == 2)
      #expect(unknown.stderr.contains("--trace-format is 'jsonl' or 'chrome', got 'xml'"), "\(unknown.stderr)")
      let alone = try await LunarProcess.run([command, "--trace-format", "chrome"] + operand, input: "")
      #expect(alone.status == 2)
      #expect(alone.stderr.contains("--trace-format sets the format of --trace-file FILE"), "\(alone.stderr)")
    }
  }

  @Test func aFileThatIsNotLunarsIsLeftAsItIs() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write("notes.json", #"{"mine": true}"#)
    let outcome = try await LunarProcess.run(["run", "--trace-file", path, "--trace-format", "chrome", "-"], input: "print(1)")
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("is not a Lunar trace (Chrome JSON)"), "\(outcome.stderr)")
    #expect(outcome.stdout == "", "refused before the run")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == #"{"mine": true}"#)
    // A trace of Lunar's own is replaced by the next.
    let trace = folder.url.appendingPathComponent("trace.json").path
    for _ in 0..<2 {
      let run = try await LunarProcess.run(["run", "--trace-file", trace, "--trace-format", "chrome", "-"], input: "print(1)")
      #expect(run.status == 0, "\(run.stderr)")
    }
    #expect(ChromeTrace(try Data(contentsOf: URL(fileURLWithPath: trace))).problems == [])
  }

  @Test func jsonLinesStayTheDefault() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("trace.jsonl").path
    for format in [[], ["--trace-format", "jsonl"]] {
      let outcome = try await LunarProcess.run(
        ["run", "--clock", "virtual", "--trace-file", path] + format + ["-"], input: "lunar.spawn(function() end):await()")
      #expect(outcome.status == 0, "\(outcome.stderr)")
      let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
      #expect(lines.first?.hasPrefix(#"{"sequence":1,"time":0.0,"kind":"task.spawned""#) == true, "\(lines)")
    }
  }

  /// Two spec files: one drives a queue, one has a failing test.
  static func specFolder() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(at: folder.url.appendingPathComponent("spec"), withIntermediateDirectories: true)
    try folder.write(
      "spec/queue_spec.lua",
      """
      local queue = require "lunar.queue"
      describe("a queue", function()
        it("runs jobs in order", function()
          local q = queue.new("work")
          local a = q:submit(function() lunar.sleep(1) return 1 end)
          local b = q:submit(function() return 2 end)
          assert.are.equal(3, a:await() + b:await())
        end)
        it("sleeps", function() lunar.sleep(2) end)
      end)
      """)
    try folder.write(
      "spec/math_spec.lua",
      """
      describe("math", function()
        it("adds", function() assert.are.equal(2, 1 + 1) end)
        it("fails", function() assert.are.equal(3, 1 + 1) end)
      end)
      """)
    return folder
  }

  @Test func lunarTestDrawsEachSpecFileAsAProcessOfTests() async throws {
    let folder = try Self.specFolder()
    let outcome = try await LunarProcess.run(
      ["test", "--trace-file", "trace.json", "--trace-format", "chrome", "spec"], in: folder.url)
    #expect(outcome.status == 1, "one test fails: \(outcome.stdout)")
    let trace = ChromeTrace(try Data(contentsOf: folder.url.appendingPathComponent("trace.json")))
    #expect(trace.problems == [])
    #expect(Set(trace.processNames.values) == ["spec/queue_spec.lua", "spec/math_spec.lua"])
    func pid(_ name: String) -> Int? { trace.processNames.first { $0.value == name }?.key }
    let queueTests = trace.slices(onTracksStartingWith: "tests", pid: pid("spec/queue_spec.lua")).filter { $0.category == "test" }
    #expect(queueTests.map(\.name) == ["a queue runs jobs in order", "a queue sleeps"])
    #expect(queueTests.map { $0.end - $0.start } == [1_000_000_000, 2_000_000_000], "the spec's virtual time")
    let mathTests = trace.slices(onTracksStartingWith: "tests", pid: pid("spec/math_spec.lua")).filter { $0.category == "test" }
    #expect(mathTests.map(\.name) == ["math adds", "math fails"])
    #expect(mathTests.map { $0.args["status"] as? String } == ["success", "failure"])
    let jobs = trace.slices(onTracksStartingWith: "queue work", pid: pid("spec/queue_spec.lua"))
    #expect(jobs.map(\.name) == ["work#1", "work#2"])
    #expect(jobs.allSatisfy { $0.start >= queueTests[0].start && $0.end <= queueTests[0].end })
    #expect(trace.flows.count == 2, "a submit arrow to each job")
  }

  @Test func lunarTestWritesJSONLinesNamingEachFile() async throws {
    let folder = try Self.specFolder()
    let outcome = try await LunarProcess.run(["test", "--trace-file", "trace.jsonl", "spec/queue_spec.lua"], in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stdout)")
    let lines = try String(contentsOf: folder.url.appendingPathComponent("trace.jsonl"), encoding: .utf8).split(separator: "\n")
    let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    #expect(objects.count == lines.count && !lines.isEmpty)
    #expect(objects.allSatisfy { $0["file"] as? String == "spec/queue_spec.lua" })
    let tests = objects.filter { ($0["kind"] as? String)?.hasPrefix("test.") == true }
    #expect(tests.map { "\($0["kind"]!) \($0["name"]!)" } == [
      "test.started a queue runs jobs in order", "test.finished a queue runs jobs in order",
      "test.started a queue sleeps", "test.finished a queue sleeps",
    ])
    #expect(objects.contains { $0["kind"] as? String == "job.started" && $0["queue"] as? String == "work" })
  }

  @Test func runsShowExportsARecordedRunWithALanePerOverlap() async throws {
    let folder = try TemporaryFolder()
    try folder.write(
      "w.lua",
      """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "w" {
        step "a" { run = function() lunar.sleep(1) end },
        step "b" { run = function() lunar.sleep(2) end },
        step "c" { needs = { "a" }, run = function() lunar.sleep(2) end },
        step "d" { needs = { "b", "c" }, run = function() error("no", 0) end },
      }
      """)
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let run = try await LunarProcess.run(["run", "--clock", "virtual", "--store", store, "w.lua"], in: folder.url)
    #expect(run.status == 1, "d fails: \(run.stderr)")
    let shown = try await LunarProcess.run(["runs", "show", "last", "--store", store, "--format", "chrome"], in: folder.url)
    #expect(shown.status == 0, "\(shown.stderr)")
    let trace = ChromeTrace(Data(shown.stdout.utf8))
    #expect(trace.problems == [])
    let steps = trace.slices(onTracksStartingWith: "workflow w")
    #expect(steps.map(\.name) == ["a", "b", "c", "d"])
    let second: Int64 = 1_000_000_000
    #expect(steps.map { $0.end - $0.start } == [second, 2 * second, 2 * second, 0])
    #expect(steps.map(\.start) == [0, 0, second, 3 * second], "from the first step's start (the run's clock was virtual)")
    #expect(steps.map { $0.args["status"] as? String } == ["succeeded", "succeeded", "succeeded", "failed"])
    #expect(steps.last?.args["error"] as? String == "no")
    // b overlaps a and c: they cannot share its track, drawn inside it or not.
    let tracks = Set(steps.map(\.tid))
    #expect(tracks.count == 2)
    for (x, y) in zip(steps, steps.dropFirst()) where x.tid == y.tid { #expect(x.end <= y.start) }
    #expect(steps[1].tid != steps[0].tid && steps[1].tid != steps[2].tid)
    let runSlice = trace.slices(onTracksStartingWith: "run")
    #expect(runSlice.map(\.name) == ["workflow w"])
    #expect(runSlice.first?.args["status"] as? String == "failed")

    let bad = try await LunarProcess.run(["runs", "show", "last", "--store", store, "--format", "xml"], in: folder.url)
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("'chrome'") && bad.stderr.contains("got 'xml'"), "\(bad.stderr)")
  }
}
