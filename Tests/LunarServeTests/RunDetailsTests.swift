import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

@testable import LunarServe

/// A run's page beyond its table: the timeline of its steps, what its
/// waits wait for, and the logs page of each step, on a real SQLite store.
@Suite struct RunDetailsTests {
  let base: ServeSiteTests

  init() throws { base = try ServeSiteTests() }

  /// The tests over `base`'s store.
  init(base: ServeSiteTests) { self.base = base }

  static func at(_ seconds: Int64) -> StoreTimestamp { ServeSiteTests.at(seconds) }

  func step(_ name: LuaString, _ position: Int, _ status: StepStatus, from start: Int64, to end: Int64) -> StepRecord {
    StepRecord(name: name, position: position, status: status, startedAt: Self.at(start), finishedAt: Self.at(end))
  }

  @Test func overlappingStepsTakeLanesAndSequentialOnesShareOne() {
    let steps = [
      step("a", 0, .succeeded, from: 0, to: 10), step("b", 1, .succeeded, from: 2, to: 4), step("c", 2, .failed, from: 5, to: 12),
      step("d", 3, .succeeded, from: 12, to: 13), StepRecord(name: "never", position: 4, status: .skipped),
    ]
    let (bars, leftOut) = StepTimeline.bars(steps, now: Self.at(20))
    #expect(leftOut == 0)
    #expect(bars.map(\.name) == ["a", "b", "c", "d"], "a step that never started has no bar")
    #expect(bars.map(\.lane) == [0, 1, 1, 0])
    let svg = StepTimeline.svg(bars, leftOut: leftOut)
    #expect(svg.contains("<rect class=\"failed\" x=\"384.6\" y=\"20\" width=\"537.5\""), "\(svg)")
    #expect(svg.contains("<text class=\"label\" x=\"388.6\" y=\"32\" aria-hidden=\"true\">c</text>"), "a wide bar is labelled")
    #expect(svg.contains("<title>c: failed, 7.00s</title>"))
    #expect(svg.contains("aria-label=\"Timeline: 4 steps over 13.0s\""))
  }

  @Test func lanesStopAtTheLimitAndSaySo() {
    let wide = (0..<(StepTimeline.laneLimit + 5)).map { step(LuaString("s\($0)"), $0, .succeeded, from: 0, to: 1) }
    let (bars, leftOut) = StepTimeline.bars(wide, now: Self.at(2))
    #expect(bars.count == StepTimeline.laneLimit && leftOut == 5)
    #expect(StepTimeline.svg(bars, leftOut: leftOut).contains("5 overlapping steps are not drawn"))
    #expect(StepTimeline.svg([], leftOut: 0).isEmpty)
  }

  @Test func aHostileStepNameInTheTimelineIsText() throws {
    let runs = try base.record()
    let page = base.text(base.site().answer(WebRequest(method: "GET", path: "/runs/\(runs.failed.rawValue)")))
    #expect(page.contains("<svg class=\"timeline\""))
    #expect(page.contains("<title>&lt;img src=x onerror=alert(1)&gt;: failed, 1.00s</title>"))
    #expect(!page.contains("<img"))
  }

  /// A fan-out's children are listed under their step, in item order
  /// (`deploy[2]` before `deploy[10]`), marked as children; a declared
  /// step that is only named like one is not.
  @Test func fanOutChildrenAreGroupedUnderTheirStep() throws {
    let store = try base.location.openRunStore()
    let run = try store.beginRun(NewRun(workflow: "fan", file: "f.lua", startedAt: ServeSiteTests.at(0), host: "h", pid: 1))
    try store.recordSteps(
      [
        StepRecord(name: "announce", position: 2, status: .succeeded), StepRecord(name: "deploy[10]", position: 1, status: .succeeded),
        StepRecord(name: "deploy", position: 1, status: .succeeded), StepRecord(name: "odd[1]", position: 3, status: .succeeded),
        StepRecord(name: "deploy[2]", position: 1, status: .failed), StepRecord(name: "regions", position: 0, status: .succeeded),
      ], of: run)
    let page = base.text(base.site().answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)")))
    let order = ["regions", "deploy", "deploy[2]", "deploy[10]", "announce", "odd[1]"].map { page.range(of: "<th scope=\"row\">\($0)</th>")?.lowerBound }
    #expect(order.allSatisfy { $0 != nil } && order.compactMap { $0 } == order.compactMap { $0 }.sorted(), "\(page)")
    #expect(page.contains("<tr id=\"\(RunPage.rowID("deploy[2]"))\" class=\"child\">"))
    #expect(page.contains("<tr id=\"\(RunPage.rowID("deploy"))\"><th"))
    #expect(page.contains("<tr id=\"\(RunPage.rowID("odd[1]"))\"><th"))
  }

  @Test func aRunningRunShowsWhatItsStepsWaitFor() throws {
    let runs = try base.record()
    let waits = try #require(try base.location.openRunStore() as? any WaitStore)
    try waits.recordStepWait(
      StepWait(name: "<cool>", fingerprint: nil, deadlineMilliseconds: 1_800_000_060_000), of: runs.running)
    let page = base.text(base.site().answer(WebRequest(method: "GET", path: "/runs/\(runs.running.rawValue)")))
    #expect(page.contains("<dt>Waiting</dt><dd>&lt;cool&gt; until "), "\(page)")
    try waits.recordStepWait(StepWait(name: "far", fingerprint: nil, deadlineMilliseconds: .max), of: runs.running)
    let far = base.text(base.site().answer(WebRequest(method: "GET", path: "/runs/\(runs.running.rawValue)")))
    #expect(far.contains("far until a time out of range"))
  }

  @Test func theLogsPageShowsEachAttemptsBytesAsText() throws {
    let store = try base.location.openRunStore()
    let run = try store.beginRun(NewRun(workflow: "w", file: "w.lua", startedAt: Self.at(0), host: "h", pid: 1))
    let name = LuaString(bytes: Array("fe".utf8) + [0xFF])
    try store.recordSteps(
      [step(name, 0, .succeeded, from: 0, to: 1), step("quiet", 1, .succeeded, from: 1, to: 2)],
      logs: [
        StepLogChunk(step: name, position: 0, attempt: 1, sequence: 1, stream: .standardOutput, bytes: Array("<b>hello</b>\n".utf8)),
        StepLogChunk(step: name, position: 0, attempt: 1, sequence: 2, stream: .standardError, bytes: [0x6F, 0x6F, 0xFF, 0x0A]),
      ], of: run)
    let page = base.text(base.site().answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)/logs")))
    #expect(page.contains("<h2>fe\u{FFFD} <span class=\"muted\">attempt 1</span></h2>"))
    #expect(page.contains("<pre class=\"log\">&lt;b&gt;hello&lt;/b&gt;\n<span class=\"stderr\">oo\u{FFFD}\n</span></pre>"), "\(page)")
    let runPage = base.text(base.site().answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)")))
    #expect(runPage.contains("href=\"/runs/\(run.rawValue)/logs?step=6665ff\""))
    let one = base.site().answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)/logs", arguments: ["step": "6665ff"]))
    #expect(base.text(one).contains("hello"))
    let quiet = base.site().answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)/logs", arguments: ["step": HexName.encode("quiet")]))
    #expect(base.text(quiet).contains("This step printed nothing that was kept."))
    #expect(base.site().answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)/logs", arguments: ["step": "xyz"])).status == 400)
    #expect(base.site().answer(WebRequest(method: "GET", path: "/runs/999/logs")).status == 404)
    #expect(base.site().answer(WebRequest(method: "GET", path: "/runs/1/logs/x")).status == 404)
  }

  @Test func aHugeLogIsCutAtTheLimitWithAWayToTheRest() throws {
    let store = try base.location.openRunStore()
    let run = try store.beginRun(NewRun(workflow: "w", file: "w.lua", startedAt: Self.at(0), host: "h", pid: 1))
    let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
    try store.recordSteps(
      [step("loud", 0, .succeeded, from: 0, to: 1)],
      logs: (1...3).map { StepLogChunk(step: "loud", position: 0, attempt: 1, sequence: $0, stream: .standardOutput, bytes: chunk) },
      of: run)
    let page = base.text(base.site().answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)/logs")))
    #expect(page.utf8.count < LogsPage.byteLimit + 10_000)
    #expect(page.contains("Cut at 2 MiB: <code>lunar runs logs \(run.rawValue)</code> prints the rest."))
  }
}

extension RunDetailsTests {
  @Test func theRunsPagePagesOnAndFiltersByTime() throws {
    let store = try base.location.openRunStore()
    // 250 runs, one a minute up to the site's now (at 30 s).
    var ids: [RunID] = []
    for n in 0..<250 {
      ids.append(try store.beginRun(NewRun(workflow: n % 2 == 0 ? "even" : "odd", file: "f.lua", startedAt: Self.at(30 - Int64(249 - n) * 60), host: "h", pid: 1)))
    }
    func listed(_ arguments: [String: String]) -> (ids: [Int64], body: String) {
      let body = base.text(base.site().answer(WebRequest(method: "GET", path: "/", arguments: arguments)))
      let ids = body.components(separatedBy: "<tr><td><a href=\"/runs/").dropFirst().compactMap { Int64($0.prefix { $0.isNumber }) }
      return (ids, body)
    }
    let first = listed([:])
    #expect(first.ids == ids.suffix(100).reversed().map(\.rawValue))
    let next = ids[150].rawValue
    #expect(first.body.contains("<a href=\"/?before=\(next)\" rel=\"next\">Older runs</a>"))
    let second = listed(["before": "\(next)"])
    #expect(second.ids == ids[50..<150].reversed().map(\.rawValue))
    let last = listed(["before": "\(ids[50].rawValue)"])
    #expect(last.ids == ids[0..<50].reversed().map(\.rawValue))
    #expect(!last.body.contains("Older runs"), "the last page has no next")

    // The filters carry over to the next page.
    let even = listed(["workflow": "even", "since": "24h"])
    #expect(even.ids.count == 100 && even.ids.allSatisfy { id in ids.firstIndex(of: RunID(id))! % 2 == 0 })
    #expect(even.body.contains("href=\"/?workflow=even&amp;since=24h&amp;before="))
    // The last hour holds the newest 61 runs (one a minute, both ends).
    #expect(listed(["since": "1h"]).ids.count == 61)
    for (name, value) in [("since", "2h"), ("before", "x"), ("before", "0"), ("status", "nope")] {
      #expect(base.site().answer(WebRequest(method: "GET", path: "/", arguments: [name: value])).status == 400, "\(name)=\(value)")
    }
    #expect(RunsPage.Query.encode("a b/é") == "a%20b%2F%C3%A9")
  }
}
