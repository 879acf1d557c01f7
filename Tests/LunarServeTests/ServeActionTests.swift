import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

@testable import LunarServe

/// The site's actions beyond cancelling, each the operation the CLI
/// performs, on a real SQLite store: a signal to a run, resuming a halted
/// queue, pausing, resuming and triggering a schedule; names are bytes,
/// and every action needs the session's token and the site's own Origin.
@Suite struct ServeActionTests {
  let base: ServeSiteTests

  init() throws { base = try ServeSiteTests() }

  /// The tests over `base`'s store.
  init(base: ServeSiteTests) { self.base = base }

  /// A session cookie and its token, from a first visit.
  func session(_ site: ServeSite) throws -> (cookie: String, token: String) {
    let cookie = try base.session(of: site)
    return (cookie, String(cookie.dropFirst("lunar_session=".count)))
  }

  /// POSTs `fields` to `path` as the site's own form would (or without
  /// the token, or from elsewhere).
  func post(_ path: String, _ fields: [(String, String)], on site: ServeSite, session: (cookie: String, token: String)?,
    origin: String = "http://127.0.0.1:8765") -> WebResponse
  {
    var body = session.map { ["csrf=" + $0.token] } ?? []
    body += fields.map { name, value in
      name + "=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    }
    var headers = ["host": "127.0.0.1:8765", "origin": origin]
    headers["cookie"] = session?.cookie
    return site.answer(WebRequest(method: "POST", path: path, headers: headers, body: Array(body.joined(separator: "&").utf8)))
  }

  @Test func aSignalFromThePageIsRecordedAsTheCLIRecordsIt() throws {
    let runs = try base.record()
    let site = base.site()
    let session = try session(site)
    let page = base.text(site.answer(WebRequest(method: "GET", path: "/runs/\(runs.running.rawValue)", headers: ["cookie": session.cookie])))
    #expect(page.contains("<form class=\"signal\" method=\"post\" action=\"/runs/\(runs.running.rawValue)/signal\">"))
    #expect(page.contains("<label>Signal <input name=\"signal\" required></label>"))
    let sent = post("/runs/\(runs.running.rawValue)/signal", [("signal", "approve"), ("value", #"{"by":"ada"}"#)], on: site, session: session)
    #expect(sent.status == 303)
    #expect(sent.header("location") == "/runs/\(runs.running.rawValue)")
    let waits = try #require(try location().openRunStore() as? any WaitStore)
    let approval = try #require(try waits.signal("approve", of: runs.running))
    guard case .table(let table) = approval else {
      Issue.record("the value is a table: \(String(describing: approval))")
      return
    }
    #expect(table["by"] == .string("ada"))
    // No value sends true, as `lunar runs signal RUN NAME` does.
    #expect(post("/runs/\(runs.running.rawValue)/signal", [("signal", "go")], on: site, session: session).status == 303)
    #expect(try waits.signal("go", of: runs.running) == .some(.some(.boolean(true))))
    // Bad JSON or no name is said, and nothing is recorded.
    let bad = post("/runs/\(runs.running.rawValue)/signal", [("signal", "x"), ("value", "{nope")], on: site, session: session)
    #expect(bad.status == 400)
    #expect(base.text(bad).contains("the value is not JSON"))
    #expect(try waits.signal("x", of: runs.running) == nil)
    #expect(post("/runs/\(runs.running.rawValue)/signal", [("value", "1")], on: site, session: session).status == 400)
    #expect(post("/runs/999/signal", [("signal", "go")], on: site, session: session).status == 404)
    // Without the token, or from elsewhere: 403, nothing recorded.
    #expect(post("/runs/\(runs.running.rawValue)/signal", [("signal", "y")], on: site, session: nil).status == 403)
    #expect(
      post("/runs/\(runs.running.rawValue)/signal", [("signal", "y")], on: site, session: session, origin: "http://evil.example").status
        == 403)
    #expect(try waits.signal("y", of: runs.running) == nil)
    // A finished run offers no signal form.
    let finished = base.text(site.answer(WebRequest(method: "GET", path: "/runs/\(runs.done.rawValue)", headers: ["cookie": session.cookie])))
    #expect(!finished.contains("form class=\"signal\""))
  }

  @Test func aHaltedQueueIsResumedFromThePageByItsBytes() throws {
    let queues = try location().openQueueStore()
    let name = LuaString(bytes: Array("b\u{00}".utf8) + [0xFF, 0x3C])
    _ = try queues.enqueue(queue: name, action: "send", input: [], policy: .stop, at: ServeSiteTests.at(0))
    _ = try queues.enqueue(queue: name, action: "send", input: [], policy: .stop, at: ServeSiteTests.at(1))
    let claimed = try #require(try queues.claim(worker: WorkerID("box:1"), queues: [name], lease: .seconds(30), at: ServeSiteTests.at(2)))
    try queues.complete(job: claimed.id, token: claimed.token, outcome: .failed(error: Array("boom".utf8)), at: ServeSiteTests.at(3))
    #expect(try queues.queues().first?.haltedBy == claimed.id)
    let site = base.site()
    let session = try session(site)
    let page = base.text(site.answer(WebRequest(method: "GET", path: "/queues", headers: ["cookie": session.cookie])))
    #expect(page.contains("action=\"/queues/resume\""))
    #expect(page.contains("<input type=\"hidden\" name=\"queue\" value=\"6200ff3c\">"), "\(page)")
    #expect(page.contains("aria-label=\"Resume queue b\u{0}\u{FFFD}&lt;\""))
    #expect(post("/queues/resume", [("queue", "6200ff3c")], on: site, session: nil).status == 403)
    #expect(try queues.queues().first?.haltedBy == claimed.id)
    let resumed = post("/queues/resume", [("queue", "6200ff3c")], on: site, session: session)
    #expect(resumed.status == 303 && resumed.header("location") == "/queues")
    #expect(try queues.queues().first?.haltedBy == nil)
    #expect(!base.text(site.answer(WebRequest(method: "GET", path: "/queues"))).contains("action=\"/queues/resume\""))
    #expect(post("/queues/resume", [("queue", "6e6f6e65")], on: site, session: session).status == 404)
    #expect(post("/queues/resume", [("queue", "zz")], on: site, session: session).status == 400)
    #expect(post("/queues/resume", [], on: site, session: session).status == 400)
  }

  @Test func schedulesArePausedResumedAndTriggeredFromThePage() throws {
    let store = try location().openSchedulingStore()
    let file = base.folder.url.appendingPathComponent("nightly.lua").path
    try Data("return 1".utf8).write(to: URL(fileURLWithPath: file))
    let name = LuaString(bytes: Array("night".utf8) + [0xE9])
    try store.addSchedule(Schedule(name: name, cron: "30 2 * * *", timeZone: "UTC", file: file, createdAt: ServeSiteTests.at(0)))
    try store.addSchedule(Schedule(name: "gone", cron: "30 2 * * *", timeZone: "UTC", file: file + ".missing", createdAt: ServeSiteTests.at(0)))
    let hex = HexName.encode(name)
    #expect(hex == "6e69676874e9")
    let site = base.site()
    let session = try session(site)
    let page = base.text(site.answer(WebRequest(method: "GET", path: "/schedules", headers: ["cookie": session.cookie])))
    #expect(page.contains("action=\"/schedules/pause\"") && page.contains("action=\"/schedules/trigger\""))
    #expect(page.contains("aria-label=\"Pause night\u{FFFD}\""))

    #expect(post("/schedules/pause", [("schedule", hex)], on: site, session: session).status == 303)
    #expect(try store.schedule(named: name)?.isPaused == true)
    let paused = base.text(site.answer(WebRequest(method: "GET", path: "/schedules", headers: ["cookie": session.cookie])))
    #expect(paused.contains("action=\"/schedules/resume\""))
    #expect(post("/schedules/resume", [("schedule", hex)], on: site, session: session).status == 303)
    #expect(try store.schedule(named: name)?.isPaused == false)

    let triggered = post("/schedules/trigger", [("schedule", hex)], on: site, session: session)
    #expect(triggered.status == 303)
    let location = try #require(triggered.header("location"))
    let id = try #require(Int64(location.dropFirst("/runs/".count)))
    let submitted = try #require(try store.submittedRun(RunID(id)))
    #expect(submitted.run.status == .queued)
    #expect(submitted.schedule == name)
    #expect(submitted.fileFingerprint == Fingerprint(ofContent: Array("return 1".utf8)))

    let missing = post("/schedules/trigger", [("schedule", HexName.encode("gone"))], on: site, session: session)
    #expect(missing.status == 409, "a file that cannot be read is said")
    #expect(post("/schedules/pause", [("schedule", HexName.encode("none"))], on: site, session: session).status == 404)
    #expect(post("/schedules/stop", [("schedule", hex)], on: site, session: session).status == 405)
    #expect(post("/schedules/pause", [("schedule", hex)], on: site, session: nil).status == 403)
    #expect(try store.schedule(named: name)?.isPaused == false)
    #expect(post("/schedules/pause", [("schedule", hex)], on: base.site(readOnly: true), session: session).status == 403)
    #expect(!base.text(base.site(readOnly: true).answer(WebRequest(method: "GET", path: "/schedules"))).contains("<form"))
  }

  /// Resume and Rerun on an ended run's page submit what `lunar submit
  /// --resume RUN [--force STEP] FILE ARGS...` submits: the same file and
  /// arguments, the file's fingerprint now, for a worker; the browser goes
  /// to the new run's page. A run still open, a file that cannot be read,
  /// a step named badly are refused and submit nothing.
  @Test func anEndedRunIsResumedAndRerunFromAStepAsLunarSubmitWould() throws {
    let file = base.folder.url.appendingPathComponent("flow.lua").path
    try Data("return 2".utf8).write(to: URL(fileURLWithPath: file))
    let store = try location().openRunStore()
    var new = NewRun(workflow: "flow", file: file, arguments: ["day", "b\u{FF}"], startedAt: ServeSiteTests.at(0), host: "h", pid: 1)
    let step = LuaString(bytes: [0x73, 0xFF])
    new.plan = try RunPlan(names: ["fetch", step], needs: [[], [0]])
    let failed = try store.beginRun(new)
    try store.finishRun(failed, status: .failed, at: ServeSiteTests.at(1))
    let site = base.site()
    let session = try session(site)
    let page = base.text(site.answer(WebRequest(method: "GET", path: "/runs/\(failed.rawValue)", headers: ["cookie": session.cookie])))
    #expect(page.contains("action=\"/runs/\(failed.rawValue)/resume\"") && page.contains("id=\"resume\""))
    #expect(page.contains("<option value=\"\(HexName.encode(step))\">s\u{FFFD}</option>"))
    #expect(!page.contains("id=\"cancel\""))

    let resumed = post("/runs/\(failed.rawValue)/resume", [], on: site, session: session)
    #expect(resumed.status == 303)
    let submissions = try #require(store as? any SubmittedRunStore)
    let first = try #require(try submissions.submittedRun(RunID(failed.rawValue + 1)))
    #expect(resumed.header("location") == "/runs/\(first.run.id.rawValue)")
    #expect(first.run.status == .queued && first.run.file == file && first.run.arguments == ["day", "b\u{FF}"])
    #expect(first.run.resumedFrom == failed && first.run.force == [])
    #expect(first.fileFingerprint == Fingerprint(ofContent: Array("return 2".utf8)))

    let rerun = post("/runs/\(failed.rawValue)/rerun", [("step", HexName.encode(step))], on: site, session: session)
    #expect(rerun.status == 303)
    let second = try #require(try submissions.submittedRun(RunID(failed.rawValue + 2)))
    #expect(second.run.resumedFrom == failed && second.run.force == [step])

    // The queued runs are open: neither is resumed before it ends.
    let open = post("/runs/\(first.run.id.rawValue)/resume", [], on: site, session: session)
    #expect(open.status == 409 && base.text(open).contains("is queued"))
    #expect(post("/runs/\(failed.rawValue)/rerun", [("step", "zz")], on: site, session: session).status == 400)
    #expect(post("/runs/999/resume", [], on: site, session: session).status == 404)
    try FileManager.default.removeItem(atPath: file)
    let unreadable = post("/runs/\(failed.rawValue)/resume", [], on: site, session: session)
    #expect(unreadable.status == 409 && base.text(unreadable).contains("cannot be read here"))
    #expect(post("/runs/\(failed.rawValue)/resume", [], on: site, session: nil).status == 403)
    #expect(try store.runs(workflow: nil, limit: 10).count == 3)
    // A succeeded run is rerun from a step, not resumed; read-only offers neither.
    #expect(!base.text(base.site(readOnly: true).answer(WebRequest(method: "GET", path: "/runs/\(failed.rawValue)"))).contains("<form"))
  }

  @Test func namesGoThroughHexByteForByte() {
    let names: [LuaString] = ["", "a", LuaString(bytes: [0, 0xFF, 0x80, 0x7F]), LuaString(bytes: Array(0...255))]
    for name in names { #expect(HexName.decode(HexName.encode(name)) == name.bytes) }
    #expect(HexName.decode("ABcd") == [0xAB, 0xCD])
    for bad in ["a", "zz", "0g", "é0"] { #expect(HexName.decode(bad) == nil, "\(bad)") }
  }

  @Test func onlyTheSitesOwnActionPathsAreActions() throws {
    for path in ["/", "/runs", "/runs/1", "/runs/0/cancel", "/runs/x/cancel", "/runs/1/cancel/more", "/queues", "/queues/halt",
      "/schedules", "/schedules/rm", "/runs/1/logs"]
    {
      #expect(throws: SiteAction.Refusal.unknownPath, "\(path)") { try SiteAction.read(path: path, fields: ["queue": "61", "schedule": "61"]) }
    }
    #expect(try SiteAction.read(path: "/runs/3/cancel", fields: [:]) == .cancel(RunID(3)))
    #expect(try SiteAction.read(path: "/queues/resume", fields: ["queue": "61"]) == .resumeQueue("a"))
    #expect(try SiteAction.read(path: "/runs/4/resume", fields: [:]) == .resumeRun(RunID(4)))
    #expect(try SiteAction.read(path: "/runs/4/rerun", fields: ["step": "61ff"]) == .rerun(RunID(4), from: LuaString(bytes: [0x61, 0xFF])))
    #expect(throws: SiteAction.Refusal.badField("no step named")) { try SiteAction.read(path: "/runs/4/rerun", fields: [:]) }
  }

  func location() -> StoreLocation { base.location }
}
