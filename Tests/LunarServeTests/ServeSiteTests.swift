import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

@testable import LunarServe

/// The site over a real SQLite store in a temporary folder: the runs page,
/// a run's page, what it refuses, and names that must stay text.
@Suite struct ServeSiteTests {
  let folder: TemporaryFolder
  let location: StoreLocation

  init() throws {
    folder = try TemporaryFolder()
    location = StoreLocation(.sqlite(path: folder.url.appendingPathComponent("runs.db").path))
  }

  static func at(_ seconds: Int64) -> StoreTimestamp { StoreTimestamp(microseconds: 1_800_000_000_000_000 + seconds * 1_000_000) }

  /// A finished run, a failed one (its step named with markup) and a running one.
  func record() throws -> (done: RunID, failed: RunID, running: RunID) {
    let store = try location.openRunStore()
    let done = try store.beginRun(NewRun(workflow: "nightly", file: "nightly.lua", startedAt: Self.at(0), host: "h", pid: 1))
    try store.recordSteps(
      [StepRecord(name: "fetch", position: 0, status: .succeeded, startedAt: Self.at(0), finishedAt: Self.at(2), output: [.integer(42), .string("<ok>")])],
      of: done)
    try store.finishRun(done, status: .succeeded, at: Self.at(3))
    let failed = try store.beginRun(NewRun(workflow: "<b>bold</b>", file: "x.lua", startedAt: Self.at(10), host: "h", pid: 2))
    try store.recordSteps(
      [
        StepRecord(
          name: "<img src=x onerror=alert(1)>", position: 0, status: .failed, startedAt: Self.at(10), finishedAt: Self.at(11),
          error: "<script>alert(2)</script>")
      ], of: failed)
    try store.finishRun(failed, status: .failed, at: Self.at(11))
    let running = try store.beginRun(NewRun(workflow: "nightly", file: "nightly.lua", startedAt: Self.at(20), host: "box", pid: 77))
    return (done, failed, running)
  }

  func site(token: String? = nil, readOnly: Bool = false) -> ServeSite {
    ServeSite(.init(store: location, token: token.map(AccessToken.init), readOnly: readOnly), now: { Self.at(30) })
  }

  func text(_ response: WebResponse) -> String { String(decoding: response.body, as: UTF8.self) }

  @Test func theRunsPageListsEveryRunNewestFirstWithItsStatus() throws {
    let runs = try record()
    let page = site().answer(WebRequest(method: "GET", path: "/"))
    #expect(page.status == 200)
    #expect(page.header("content-type") == "text/html; charset=utf-8")
    let body = text(page)
    let positions = [runs.running, runs.failed, runs.done].map { body.range(of: "href=\"/runs/\($0.rawValue)\"")?.lowerBound }
    #expect(positions.allSatisfy { $0 != nil })
    #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
    #expect(body.contains("<td class=\"status running\">running</td>"))
    #expect(body.contains("pid 77 on box"))
    #expect(body.contains("1 succeeded"))
  }

  @Test func filtersByWorkflowAndStatus() throws {
    let runs = try record()
    let nightly = text(site().answer(WebRequest(method: "GET", path: "/", arguments: ["workflow": "nightly"])))
    #expect(nightly.contains("/runs/\(runs.done.rawValue)\"") && !nightly.contains("/runs/\(runs.failed.rawValue)\""))
    let failed = text(site().answer(WebRequest(method: "GET", path: "/", arguments: ["status": "failed"])))
    #expect(failed.contains("/runs/\(runs.failed.rawValue)\"") && !failed.contains("/runs/\(runs.done.rawValue)\""))
    let bad = site().answer(WebRequest(method: "GET", path: "/", arguments: ["status": "<nope>"]))
    #expect(bad.status == 400)
    #expect(text(bad).contains("&lt;nope&gt;"))
  }

  @Test func aRunsPageShowsItsStepsWithTheirOutputs() throws {
    let runs = try record()
    let page = site().answer(WebRequest(method: "GET", path: "/runs/\(runs.done.rawValue)"))
    #expect(page.status == 200)
    let body = text(page)
    #expect(body.contains("<td>fetch</td>"))
    #expect(body.contains("<pre>42, &quot;&lt;ok&gt;&quot;</pre>"))
    #expect(body.contains("2.00s"))
  }

  @Test func namesOutputsAndErrorsFromTheStoreAreTextNeverMarkup() throws {
    let runs = try record()
    let list = text(site().answer(WebRequest(method: "GET", path: "/")))
    #expect(list.contains("&lt;b&gt;bold&lt;/b&gt;") && !list.contains("<b>bold"))
    let page = text(site().answer(WebRequest(method: "GET", path: "/runs/\(runs.failed.rawValue)")))
    #expect(page.contains("&lt;img src=x onerror=alert(1)&gt;"))
    #expect(page.contains("&lt;script&gt;alert(2)&lt;/script&gt;"))
    #expect(!page.contains("<img") && !page.contains("<script"))
  }

  @Test func everyAnswerForbidsInlineScriptAndFraming() throws {
    _ = try record()
    for path in ["/", "/runs/1", "/style.css", "/favicon.svg", "/nowhere"] {
      let response = site().answer(WebRequest(method: "GET", path: path))
      let policy = try #require(response.header("content-security-policy"))
      #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"))
      #expect(response.header("x-frame-options") == "DENY")
      #expect(response.header("x-content-type-options") == "nosniff")
    }
  }

  @Test func unknownPathsAndRunsAre404() throws {
    _ = try record()
    for path in ["/nowhere", "/runs/999", "/runs/0", "/runs/-1", "/runs/x", "/../etc/passwd", "/runs/1/../../x", "/%2e%2e/"] {
      #expect(site().answer(WebRequest(method: "GET", path: path)).status == 404, "\(path)")
    }
    let huge = String(repeating: "a", count: 100_000)
    #expect(site().answer(WebRequest(method: "GET", path: "/" + huge)).status == 404)
  }

  @Test func aPostChangesNothingAndIsRefused() throws {
    _ = try record()
    #expect(site().answer(WebRequest(method: "POST", path: "/runs/1")).status == 405)
    #expect(site(readOnly: true).answer(WebRequest(method: "POST", path: "/runs/1")).status == 403)
    #expect(site().answer(WebRequest(method: "DELETE", path: "/")).status == 405)
  }

  @Test func withATokenEveryPathWithoutItIs401AndTheTokenIsKeptInACookie() throws {
    _ = try record()
    let guarded = site(token: "s3cret")
    for path in ["/", "/runs/1", "/style.css", "/nowhere"] {
      #expect(guarded.answer(WebRequest(method: "GET", path: path)).status == 401)
      #expect(guarded.answer(WebRequest(method: "GET", path: path, arguments: ["token": "s3cre"])).status == 401)
      #expect(guarded.answer(WebRequest(method: "GET", path: path, headers: ["cookie": "lunar_token=wrong"])).status == 401)
    }
    let first = guarded.answer(WebRequest(method: "GET", path: "/", arguments: ["token": "s3cret"]))
    #expect(first.status == 200)
    #expect(first.header("set-cookie") == "lunar_token=s3cret; Path=/; HttpOnly; SameSite=Strict")
    let later = guarded.answer(WebRequest(method: "GET", path: "/", headers: ["cookie": "theme=dark; lunar_token=s3cret"]))
    #expect(later.status == 200 && later.header("set-cookie") == nil)
    #expect(guarded.answer(WebRequest(method: "GET", path: "/", headers: ["authorization": "Bearer s3cret"])).status == 200)
  }

  @Test func theTokenComparisonNeedsEveryByte() {
    let token = AccessToken("abc")
    #expect(token.matches("abc"))
    #expect(!token.matches("ab") && !token.matches("abcd") && !token.matches("abd") && !token.matches(""))
    #expect(!AccessToken("").matches("x") && AccessToken("").matches(""))
  }

  @Test func aMissingStoreSaysSoAndAFailingOneIsAnErrorPage() throws {
    let missing = site().answer(WebRequest(method: "GET", path: "/"))
    #expect(missing.status == 200 && text(missing).contains("No runs recorded yet"))
    // Not a database: one error page, and the next request tries again.
    try Data("not a database".utf8).write(to: folder.url.appendingPathComponent("runs.db"))
    let failing = site()
    #expect(failing.answer(WebRequest(method: "GET", path: "/")).status == 503)
    #expect(failing.answer(WebRequest(method: "GET", path: "/runs/1")).status == 503)
  }
}
