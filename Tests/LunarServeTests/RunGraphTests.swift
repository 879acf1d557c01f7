import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

@testable import LunarServe

/// A run's step graph on its page, drawn by the real Graphviz `dot` from
/// the plan the store keeps: statuses as classes, nodes linked to their
/// rows, names as text; a plain sentence and the table's Needs column when
/// there is nothing to draw.
@Suite struct RunGraphTests {
  let base: ServeSiteTests

  init() throws { base = try ServeSiteTests() }

  /// The tests on a PostgreSQL store (`ServePostgresTests`).
  init(base: ServeSiteTests) { self.base = base }

  func page(_ run: RunID, graphviz: String = "dot") -> String {
    base.text(base.site(graphviz: graphviz).answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)")))
  }

  /// A running run of four steps: `fetch` succeeded, `build` failed, `test`
  /// runs now, `ship` needs `build` and `test` and has not started.
  func diamond() throws -> RunID {
    let store = try base.location.openRunStore()
    var new = NewRun(workflow: "diamond", file: "d.lua", startedAt: ServeSiteTests.at(0), host: "h", pid: 1)
    new.plan = try RunPlan(names: ["fetch", "build", "test", "ship"], needs: [[], [0], [0], [1, 2]])
    let run = try store.beginRun(new)
    try store.recordSteps(
      [
        StepRecord(name: "fetch", position: 0, status: .succeeded, startedAt: ServeSiteTests.at(0), finishedAt: ServeSiteTests.at(1)),
        StepRecord(name: "build", position: 1, status: .failed, startedAt: ServeSiteTests.at(1), finishedAt: ServeSiteTests.at(2)),
      ], of: run)
    let lease = try #require(try store.run(run))
    _ = try store.heartbeat(run, owner: lease.ownerToken, lease: .seconds(60), running: ["test"], at: ServeSiteTests.at(2))
    return run
  }

  /// The id of the SVG group `dot` draws for the node whose link is `step`'s row.
  func node(_ svg: String, linkingTo step: LuaString) -> Substring? {
    guard let link = svg.range(of: "xlink:href=\"#\(RunPage.rowID(step))\"") else { return nil }
    guard let group = svg[..<link.lowerBound].range(of: "<g id=\"node", options: .backwards) else { return nil }
    return svg[group.lowerBound..<link.lowerBound]
  }

  @Test func aRunsPageDrawsItsPlanWithEachStepsStatusAndEdges() throws {
    let run = try diamond()
    let body = page(run)
    let figure = try #require(body.range(of: "<figure class=\"run-graph\"").map { body[$0.lowerBound...] })
    let svg = String(try #require(figure.range(of: "</figure>").map { figure[..<$0.lowerBound] }))
    #expect(svg.contains("<svg") && !svg.contains("<?xml") && !svg.contains("<!DOCTYPE"))
    let expected: [(LuaString, String)] = [("fetch", "succeeded"), ("build", "failed"), ("test", "running"), ("ship", "pending")]
    for (step, status) in expected {
      let group = try #require(node(svg, linkingTo: step), "no node links to \(step)")
      #expect(group.contains("class=\"node status \(status)\""), "\(step): \(group)")
      #expect(svg.contains("xlink:title=\"\(step.lossyString): \(status)\""))
    }
    // One edge per need: fetch feeds two, ship needs two.
    #expect(svg.components(separatedBy: "class=\"edge\"").count - 1 == 4)
    // Each recorded step's row is the target of its node's link, and says what it needs.
    #expect(body.contains("<tr id=\"\(RunPage.rowID("build"))\"><th scope=\"row\">build</th><td>fetch</td>"))
  }

  @Test func namesInTheGraphAreTextNeverMarkup() throws {
    let runs = try base.record()
    let body = page(runs.failed)
    #expect(body.contains("<figure class=\"run-graph\""))
    #expect(body.contains("&lt;img src=x onerror=alert(1)&gt;") && !body.contains("<img"))
    // The page's only script is still the site's own file.
    #expect(body.components(separatedBy: "<script").count == 2)
  }

  @Test func withoutGraphvizThePageSaysSoAndTheTableListsTheNeeds() throws {
    let run = try diamond()
    let body = page(run, graphviz: "lunar-test-no-such-dot")
    #expect(!body.contains("<svg class=\"run-graph\"") && !body.contains("<figure class=\"run-graph\""))
    #expect(body.contains("Graphviz&#39;s dot is not installed here"))
    #expect(body.contains("<th scope=\"row\">build</th><td>fetch</td>"))
  }

  @Test func aPlanWithoutNeedsOrTooBigIsNotDrawn() throws {
    let store = try base.location.openRunStore()
    var older = NewRun(workflow: "old", file: "o.lua", startedAt: ServeSiteTests.at(0), host: "h", pid: 1)
    older.plan = ["a", "b"]
    #expect(page(try store.beginRun(older)).contains("recorded without its steps&#39; needs"))
    var big = NewRun(workflow: "big", file: "b.lua", startedAt: ServeSiteTests.at(0), host: "h", pid: 1)
    let count = RunGraph.stepLimit + 1
    big.plan = try RunPlan(names: (0..<count).map { LuaString("s\($0)") }, needs: (0..<count).map { $0 == 0 ? [] : [$0 - 1] })
    let body = page(try store.beginRun(big))
    #expect(body.contains("\(count) steps are too many to draw") && !body.contains("<figure class=\"run-graph\""))
  }

  /// A live page asks for its run every half second: `dot` runs again only
  /// when a step's status changed. Counted by a `dot` that notes each start.
  @Test func aDrawingIsKeptUntilAStepsStatusChanges() throws {
    let run = try diamond()
    let count = base.folder.url.appendingPathComponent("starts")
    let counting = try base.folder.write("counting-dot", "#!/bin/sh\necho start >> '\(count.path)'\nexec dot \"$@\"\n")
    chmod(counting, 0o755)
    // A file just written may not run at once (ETXTBSY) while another
    // test's thread forks: run it once, until it starts, then count afresh.
    for _ in 0..<200 {
      let probe = Process()
      probe.executableURL = URL(fileURLWithPath: counting)
      probe.arguments = ["-V"]
      probe.standardError = FileHandle.nullDevice
      if (try? probe.run()) != nil {
        probe.waitUntilExit()
        break
      }
      Thread.sleep(forTimeInterval: 0.02)
    }
    try? FileManager.default.removeItem(at: count)
    let site = base.site(graphviz: counting)
    func starts() -> Int { ((try? String(contentsOf: count, encoding: .utf8)) ?? "").split(separator: "\n").count }
    // The figure alone: each page without a cookie starts a new session.
    func drawn() throws -> String {
      let body = base.text(site.answer(WebRequest(method: "GET", path: "/runs/\(run.rawValue)")))
      let figure = try #require(body.range(of: "<figure class=\"run-graph\""))
      let rest = body[figure.lowerBound...]
      return String(rest[..<(try #require(rest.range(of: "</figure>"))).lowerBound])
    }
    let first = try drawn()
    #expect(starts() == 1)
    #expect(try drawn() == first && starts() == 1)
    let store = try base.location.openRunStore()
    try store.recordSteps(
      [StepRecord(name: "test", position: 2, status: .succeeded, startedAt: ServeSiteTests.at(2), finishedAt: ServeSiteTests.at(3))],
      of: run)
    let svg = try drawn()
    #expect(starts() == 2 && svg != first)
    #expect(node(svg, linkingTo: "test")?.contains("status succeeded") == true)
  }
}
