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
  /// The PostgreSQL schema the store is in, kept while the test runs.
  let schema: TestPostgresSchema?

  init() throws {
    folder = try TemporaryFolder()
    location = StoreLocation(.sqlite(path: folder.url.appendingPathComponent("runs.db").path))
    schema = nil
  }

  /// The same tests on a PostgreSQL store in a fresh schema of the test
  /// server (`ServePostgresTests`).
  init(postgres schema: TestPostgresSchema) throws {
    folder = try TemporaryFolder()
    location = StoreLocation(.postgres(url: schema.url))
    self.schema = schema
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
    var failing = NewRun(workflow: "<b>bold</b>", file: "x.lua", startedAt: Self.at(10), host: "h", pid: 2)
    failing.plan = try RunPlan(names: ["<img src=x onerror=alert(1)>", "report"], needs: [[], [0]])
    let failed = try store.beginRun(failing)
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

  /// The site over the store; `graphviz` is the program it draws graphs with.
  func site(token: String? = nil, readOnly: Bool = false, graphviz: String = "dot") -> ServeSite {
    var options = ServeSite.Options(
      store: location, token: token.map(AccessToken.init), readOnly: readOnly,
      fingerprint: { file in
        guard let content = FileManager.default.contents(atPath: file) else { throw CocoaError(.fileNoSuchFile) }
        return Fingerprint(ofContent: Array(content))
      })
    options.graphviz = graphviz
    return ServeSite(options, now: { Self.at(30) })
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
    #expect(body.contains("<th scope=\"row\">fetch</th>"))
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
    #expect(!page.contains("<img"))
    // The one script is the site's own file.
    #expect(page.components(separatedBy: "<script").count == 2 && page.contains("<script src=\"/live.js\" defer></script>"))
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
    #expect(first.headers.contains { $0.name == "Set-Cookie" && $0.value == "lunar_token=s3cret; Path=/; HttpOnly; SameSite=Strict" })
    let later = guarded.answer(WebRequest(method: "GET", path: "/", headers: ["cookie": "theme=dark; lunar_token=s3cret"]))
    #expect(later.status == 200 && !later.headers.contains { $0.value.hasPrefix("lunar_token=") })
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

  /// A session's cookie, as the site set it on a first visit.
  func session(of site: ServeSite) throws -> String {
    let first = site.answer(WebRequest(method: "GET", path: "/"))
    let cookie = try #require(first.header("set-cookie"))
    #expect(cookie.hasSuffix("; Path=/; HttpOnly; SameSite=Strict"))
    return String(cookie.prefix { $0 != ";" })
  }

  func cancel(_ run: RunID, on site: ServeSite, cookie: String?, csrf: String?, origin: String? = "http://127.0.0.1:8765")
    -> WebResponse
  {
    var headers = ["host": "127.0.0.1:8765"]
    headers["cookie"] = cookie
    headers["origin"] = origin
    return site.answer(
      WebRequest(method: "POST", path: "/runs/\(run.rawValue)/cancel", headers: headers, body: Array((csrf.map { "csrf=" + $0 } ?? "").utf8)))
  }

  @Test func aRunningRunsPageOffersCancelWithTheSessionsToken() throws {
    let runs = try record()
    let site = site()
    let cookie = try session(of: site)
    let token = String(cookie.dropFirst("lunar_session=".count))
    let page = text(site.answer(WebRequest(method: "GET", path: "/runs/\(runs.running.rawValue)", headers: ["cookie": cookie])))
    #expect(page.contains("<form class=\"actions\" method=\"post\" action=\"/runs/\(runs.running.rawValue)/cancel\">"))
    #expect(page.contains("<input type=\"hidden\" name=\"csrf\" value=\"\(token)\">"))
    let finished = text(site.answer(WebRequest(method: "GET", path: "/runs/\(runs.done.rawValue)", headers: ["cookie": cookie])))
    #expect(!finished.contains("<form class=\"actions\""))
    let readOnly = text(self.site(readOnly: true).answer(WebRequest(method: "GET", path: "/runs/\(runs.running.rawValue)")))
    #expect(!readOnly.contains("<form class=\"actions\"") && !readOnly.contains("csrf"))
    // Files are not pages: they start no session.
    for path in ["/style.css", "/live.js", "/favicon.svg"] {
      #expect(site.answer(WebRequest(method: "GET", path: path)).header("set-cookie") == nil, "\(path)")
    }
    // A known session is not set again.
    #expect(site.answer(WebRequest(method: "GET", path: "/", headers: ["cookie": cookie])).header("set-cookie") == nil)
  }

  @Test func cancelThroughThePageIsRecordedAsTheCLIRecordsIt() throws {
    let runs = try record()
    let site = site()
    let cookie = try session(of: site)
    let token = String(cookie.dropFirst("lunar_session=".count))
    let answer = cancel(runs.running, on: site, cookie: cookie, csrf: token)
    #expect(answer.status == 303)
    #expect(answer.header("location") == "/runs/\(runs.running.rawValue)")
    let after = try #require(try location.openRunStore().run(runs.running))
    #expect(after.cancelRequest == "request" || after.status == .cancelled, "\(after)")
    // A finished run cannot be cancelled: said, not hidden.
    #expect(cancel(runs.done, on: site, cookie: cookie, csrf: token).status == 409)
    #expect(cancel(RunID(999), on: site, cookie: cookie, csrf: token).status == 404)
  }

  @Test func aPostWithoutTheSessionsTokenOrFromAnotherOriginIs403AndChangesNothing() throws {
    let runs = try record()
    let site = site()
    let cookie = try session(of: site)
    let token = String(cookie.dropFirst("lunar_session=".count))
    let other = String(repeating: "0", count: 64)
    let refused = [
      cancel(runs.running, on: site, cookie: cookie, csrf: nil),
      cancel(runs.running, on: site, cookie: cookie, csrf: other),
      cancel(runs.running, on: site, cookie: cookie, csrf: token.uppercased()),
      cancel(runs.running, on: site, cookie: nil, csrf: token),
      cancel(runs.running, on: site, cookie: "lunar_session=" + other, csrf: token),
      cancel(runs.running, on: site, cookie: cookie, csrf: token, origin: nil),
      cancel(runs.running, on: site, cookie: cookie, csrf: token, origin: "http://evil.example"),
      cancel(runs.running, on: site, cookie: cookie, csrf: token, origin: "null"),
    ]
    #expect(refused.map(\.status) == Array(repeating: 403, count: refused.count))
    let after = try #require(try location.openRunStore().run(runs.running))
    #expect(after.cancelRequest == nil && after.status == .running)
    #expect(self.site(readOnly: true).answer(WebRequest(method: "POST", path: "/runs/\(runs.running.rawValue)/cancel")).status == 403)
  }

  @Test func formBodiesDecodeAsBrowsersSendThem() {
    #expect(FormBody.fields(Array("csrf=ab%20c+d&x=1&csrf=second".utf8)) == ["csrf": "ab c d", "x": "1"])
    #expect(FormBody.fields(Array("bad=%zz&ok=%41".utf8)) == ["ok": "A"])
    #expect(FormBody.fields(Array("cut=%4".utf8)) == [:])
    #expect(FormBody.fields(Array("notutf8=%ff&empty=".utf8)) == ["empty": ""])
    #expect(FormBody.fields([]) == [:])
  }
}

extension ServeSiteTests {
  @Test func theQueuesPageShowsEachQueueAndTheWorkersHoldingJobs() throws {
    let queues = try location.openQueueStore()
    for n in 0..<3 {
      _ = try queues.enqueue(queue: "<mail>", action: "send", input: Array("\(n)".utf8), policy: .stop, at: Self.at(Int64(n)))
    }
    _ = try queues.enqueue(queue: "idle", action: "x", input: [], policy: .stop, at: Self.at(0))
    let claimed = try #require(try queues.claim(worker: WorkerID("box:42"), queues: ["<mail>"], lease: .seconds(30), at: Self.at(5)))
    // A worker that stopped heartbeating: its lease ended at 10, the page's now is 30.
    _ = try queues.enqueue(queue: "late", action: "x", input: [], policy: .stop, at: Self.at(0))
    _ = try #require(try queues.claim(worker: WorkerID("gone:7"), queues: ["late"], lease: .seconds(10), at: Self.at(0)))
    // Workers as they announce themselves: box:42 heartbeats, idle:9 holds
    // nothing, lost:3 stopped heartbeating at 12 (its lease ended at 15).
    let workers = try #require(try location.openRunStore() as? any WorkerStore)
    for (name, serves, seen) in [("box:42", "queues: <mail>", 29), ("idle:9", "runs (4 at once)", 28), ("lost:3", "runs (1 at once)", 12)] {
      try workers.announce(
        WorkerPresence(
          worker: WorkerID(name), host: "h", pid: 1, serves: serves, startedAt: Self.at(1), seenAt: Self.at(Int64(seen)),
          expiresAt: Self.at(Int64(seen) + 3)))
    }
    let page = site().answer(WebRequest(method: "GET", path: "/queues"))
    #expect(page.status == 200)
    let body = text(page)
    #expect(body.contains("<td>&lt;mail&gt;</td><td><span class=\"status running\">running</span></td><td>2</td>"), "\(body)")
    #expect(body.contains("<td>job \(claimed.id.rawValue)</td><td>box:42</td>"), "\(body)")
    let started = TimeText.moment(Self.at(1))
    #expect(body.contains("<tr><th scope=\"row\">box:42</th><td>queues: &lt;mail&gt;</td><td>\(started)</td><td>1.00s ago</td><td>1</td><td>in 5.00s</td></tr>"), "\(body)")
    #expect(body.contains("<tr><th scope=\"row\">idle:9</th><td>runs (4 at once)</td><td>\(started)</td><td>2.00s ago</td><td>0</td><td></td></tr>"), "\(body)")
    #expect(body.contains("<tr><th scope=\"row\">lost:3</th><td>runs (1 at once)</td><td>\(started)</td><td><span class=\"status failed\">18.0s ago: lost</span></td><td>0</td><td></td></tr>"), "\(body)")
    // A worker that holds a job but is not listed (an older Lunar's).
    #expect(body.contains("<tr><th scope=\"row\">gone:7</th><td></td><td></td><td></td><td>1</td><td><span class=\"status failed\">ended 20.0s ago: no heartbeat</span></td></tr>"), "\(body)")
    #expect(body.contains("<td>idle</td>"))
  }

  @Test func theSchedulesPageShowsTheNextTicksInTheSchedulesZone() throws {
    let store = try location.openSchedulingStore()
    try store.addSchedule(Schedule(name: "nightly", cron: "30 2 * * *", timeZone: "UTC", file: "nightly.lua", createdAt: Self.at(0)))
    try store.addSchedule(
      Schedule(name: "<paused>", cron: "0 * * * *", timeZone: "Europe/London", file: "p.lua", isPaused: true, createdAt: Self.at(0)))
    let page = text(site().answer(WebRequest(method: "GET", path: "/schedules")))
    // now is 2027-01-15 08:00:30 UTC: the next ticks are the next three 02:30s.
    #expect(page.contains("2027-01-16 02:30:00 UTC<br>2027-01-17 02:30:00 UTC<br>2027-01-18 02:30:00 UTC"), "\(page)")
    #expect(page.contains("<td>&lt;paused&gt;</td>"))
    #expect(page.contains("<td class=\"status parked\">paused</td><td></td>"))
  }

  /// `/changes` is the number the live pages watch: it goes up once
  /// another process commits to the store, without the page being fetched.
  @Test func changesCountWhatAnotherProcessCommits() async throws {
    let runs = try record()
    let site = site()
    func mark() -> Int64? { Int64(text(site.answer(WebRequest(method: "GET", path: "/changes")))) }
    let first = try #require(mark())
    #expect(site.answer(WebRequest(method: "GET", path: "/changes")).header("content-type") == "text/plain; charset=utf-8")
    // The feed listens from its first answer on: commit until it hears.
    var now = first
    for attempt in 0..<200 where now == first {
      try location.openRunStore().recordSteps(
        [StepRecord(name: LuaString("late \(attempt)"), position: 1, status: .succeeded)], of: runs.running)
      try await Task.sleep(for: .milliseconds(50))
      now = try #require(mark())
    }
    #expect(now > first)
  }

  @Test func emptyStoresHaveEmptyQueueAndSchedulePages() {
    #expect(text(site().answer(WebRequest(method: "GET", path: "/queues"))).contains("No durable queues in this store."))
    #expect(text(site().answer(WebRequest(method: "GET", path: "/schedules"))).contains("No runs recorded yet in "))
  }
}
