import Foundation
import LuaKit
import Lunar
import Testing
import TestSupport

/// The Chrome timeline's tracks hold whatever order events come in: slices
/// that overlap without nesting go to lanes, and events that pair up badly
/// still give a file that follows the format's rules (`ChromeTrace`).
@Suite struct ChromeTimelineTests {
  /// The file for `timeline`, read back and checked.
  static func read(_ timeline: ChromeTimeline) -> ChromeTrace {
    ChromeTrace(Data(ChromeTraceFile.text([(timeline, 0)]).utf8))
  }

  /// Feeds `events` (kind, seconds, fields; task) to a sink.
  static func timeline(_ events: [(String, Double, [TraceEvent.Field], Int?)]) -> ChromeTimeline {
    let sink = ChromeTraceSink(process: "test")
    for (index, event) in events.enumerated() {
      sink.receive(TraceEvent(sequence: index + 1, time: event.1, kind: event.0, fields: event.2, task: event.3))
    }
    return sink.finished
  }

  @Test func slicesThatOverlapInPartGoToLanesAndNestedOnesStay() {
    var timeline = ChromeTimeline(name: "p")
    let queue = ChromeTimeline.Track(.queue, "q")
    timeline.add(queue, "outer", category: "job", from: 0, to: 100)
    timeline.add(queue, "inner", category: "job", from: 10, to: 20)
    timeline.add(queue, "across", category: "job", from: 50, to: 150)
    timeline.add(queue, "after", category: "job", from: 150, to: 160)
    let trace = Self.read(timeline)
    #expect(trace.problems == [])
    let lanes = Dictionary(grouping: trace.slices, by: { trace.trackName(pid: $0.pid, tid: $0.tid) ?? "?" })
      .mapValues { $0.map(\.name).sorted() }
    #expect(lanes == ["queue q": ["after", "inner", "outer"], "queue q (2)": ["across"]])
  }

  @Test func aWorkflowsStepsNeverNestEvenWhenTheirTimesDo() {
    var timeline = ChromeTimeline(name: "p")
    let steps = ChromeTimeline.Track(.workflow, "w")
    timeline.add(steps, "long", category: "step", from: 0, to: 100)
    timeline.add(steps, "short", category: "step", from: 10, to: 20)
    timeline.add(steps, "instant", category: "step", from: 100, to: 100)
    timeline.add(steps, "next", category: "step", from: 100, to: 200)
    let trace = Self.read(timeline)
    #expect(trace.problems == [])
    for slice in trace.slices {
      let others = trace.slices.filter { $0.tid == slice.tid && $0.name != slice.name }
      #expect(others.allSatisfy { $0.end <= slice.start || slice.end <= $0.start }, "\(slice.name) shares a lane with a step it overlaps")
    }
    #expect(Set(trace.slices.map(\.tid)).count == 2)
  }

  @Test func swiftActionSpansThatInterleaveStillNest() {
    // Swift actions report through the loop: their spans reach the trace
    // in any order, with no task.
    let timeline = Self.timeline([
      ("action.started", 0, [.init("action", "a")], nil),
      ("action.started", 1, [.init("action", "b")], nil),
      ("action.finished", 2, [.init("action", "a"), .init("duration", .number(2))], nil),
      ("action.finished", 3, [.init("action", "b"), .init("duration", .number(2))], nil),
      ("action.finished", 4, [.init("action", "c"), .init("duration", .number(1))], nil),
    ])
    let trace = Self.read(timeline)
    #expect(trace.problems == [])
    let spans = trace.slices.filter { $0.category == "action" }.sorted { $0.start < $1.start }
    #expect(spans.map(\.name) == ["a", "b", "c"])
    #expect(spans.map(\.start) == [0, 1_000_000_000, 3_000_000_000], "c's start comes from its duration")
  }

  @Test func eventsThatNeverEndOrNeverBeganGiveAGoodFile() {
    let timeline = Self.timeline([
      // A job whose start the trace missed, and one that never ends.
      ("job.finished", 1, [.init("queue", "q"), .init("seq", 7)], nil),
      ("job.submitted", 1, [.init("queue", "q"), .init("seq", 8)], nil),
      ("job.started", 2, [.init("queue", "q"), .init("seq", 8)], nil),
      // A machine command no interpreter takes, then one that runs.
      ("machine.handled", 3, [.init("machine", "m"), .init("message", "go"), .init("state", "a")], nil),
      ("machine.command", 3, [.init("machine", "m"), .init("command", "nobody")], nil),
      ("machine.command", 3, [.init("machine", "m"), .init("command", "work")], nil),
      ("machine.interpreted", 5, [.init("machine", "m"), .init("command", "work")], nil),
      // A task cancelled while it waits, inside an action.
      ("task.spawned", 4, [.init("id", 1), .init("label", "t")], nil),
      ("task.started", 4, [.init("id", 1)], nil),
      ("action.started", 4, [.init("action", "x")], 1),
      ("task.waiting", 4, [.init("id", 1), .init("on", "sleep 9s")], 1),
      ("task.cancelled", 6, [.init("id", 1)], nil),
      // Virtual time far ahead.
      ("log.info", 1e300, [.init("text", "late")], nil),
    ])
    let trace = Self.read(timeline)
    #expect(trace.problems == [])
    let jobs = trace.slices(onTracksStartingWith: "queue q")
    #expect(jobs.map(\.name) == ["q#7", "q#8"])
    #expect(jobs.last?.args["unfinished"] as? Bool == true)
    let machine = trace.slices(onTracksStartingWith: "machine m")
    #expect(machine.map(\.name) == ["go", "work"])
    #expect(machine.map { $0.end - $0.start } == [2_000_000_000, 2_000_000_000])
    let task = trace.slices(onTracksStartingWith: "task 1 t")
    #expect(task.map(\.name) == ["t", "x", "sleep 9s"])
    #expect(task.map { $0.args["unfinished"] as? Bool } == [nil, true, true])
    #expect(task[0].args["status"] as? String == "cancelled")
    #expect(trace.flows.count == 1)
  }

  @Test func whatTheSinkKeepsCountsAgainstTheMemoryLimit() async throws {
    // Tasks that end at once leave Lua nothing to hold: only the timeline grows.
    let source = "for _ = 1, 20000 do lunar.spawn(function() end):await() end"
    func failure(tracing: Bool) async throws -> RunFailure? {
      var configuration = RuntimeConfiguration()
      configuration.clock = .virtual(start: 0)
      configuration.memoryLimit = 4 << 20
      if tracing { configuration.traceSinks = [ChromeTraceSink(process: "p")] }
      let runtime = try Runtime(configuration)
      do {
        _ = try await runtime.run(Script(source: .text(source, chunkName: "@t.lua")))
        return nil
      } catch {
        return error
      }
    }
    #expect(try await failure(tracing: false) == nil)
    guard case .lua(let error)? = try await failure(tracing: true) else {
      Issue.record("the run should run out of memory")
      return
    }
    #expect(error.message.contains("not enough memory"), "\(error.message)")
  }

  @Test func namesThatDifferByAByteAreTwoTracks() {
    let timeline = Self.timeline([
      ("job.started", 0, [.init("queue", .string(LuaString(bytes: [0xC3, 0xA9]))), .init("seq", 1)], nil),
      ("job.started", 0, [.init("queue", .string(LuaString(bytes: [0x65, 0xCC, 0x81]))), .init("seq", 1)], nil),
    ])
    let trace = Self.read(timeline)
    #expect(trace.problems == [])
    #expect(Set(trace.slices.filter { $0.category == "job" }.map(\.tid)).count == 2)
  }
}
