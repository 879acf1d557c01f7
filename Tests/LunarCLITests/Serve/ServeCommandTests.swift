import Foundation
import Testing
import LunarStore
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `lunar serve` as a user runs it: a real server on 127.0.0.1 over a store
/// that `lunar run` wrote, spoken to over real sockets.
@Suite struct ServeCommandTests {
  let folder: TemporaryFolder
  let store: String

  init() throws {
    folder = try TemporaryFolder()
    store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
  }

  /// Records one run of a workflow whose first step has a name made of
  /// markup and whose second step fails with markup in its error.
  func recordRuns() async throws {
    let file = folder.url.appendingPathComponent("hostile.lua")
    try Data(
      """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "hostile" {
        step "<img src=x onerror=alert(1)>" { run = function() return "<b>out</b>" end },
        step "broken" { needs = { "<img src=x onerror=alert(1)>" }, run = function() error("<script>alert(2)</script>", 0) end },
      }
      """.utf8
    ).write(to: file)
    let outcome = try await LunarProcess.run(["run", "--store", store, file.path])
    #expect(outcome.status == 1, "\(outcome.stderr)")
  }

  /// A succeeded run of the nightly report, then the hostile one (failed).
  func recordTwoRuns() async throws {
    let nightly = try await LunarProcess.run(["run", "--store", store, Repository.url("examples/nightly_report.lua").path, "x"])
    #expect(nightly.status == 0, "\(nightly.stderr)")
    try await recordRuns()
  }

  /// Starts `lunar serve` on a free port; returns it and the port.
  func serve(_ extra: [String] = []) async throws -> (LunarProcess.Running, UInt16) {
    let server = try LunarProcess.start(["serve", "--store", store, "--listen", "127.0.0.1:0"] + extra)
    try await server.waitForOutput("/ (runs of")
    return (server, try #require(Self.port(in: try server.stdout.contents())))
  }

  /// The port of the URL `lunar serve` printed ("http://127.0.0.1:PORT/").
  static func port(in output: String) -> UInt16? {
    guard let url = output.range(of: "http://127.0.0.1:") else { return nil }
    return UInt16(output[url.upperBound...].prefix { $0.isNumber })
  }

  func stop(_ server: LunarProcess.Running) async throws {
    server.send(SIGINT)
    let outcome = try await server.wait()
    #expect(outcome.status == 0, "\(outcome.stderr)")
  }

  @Test func servesTheRunsAndARunWithEveryNameAsText() async throws {
    try await recordRuns()
    let (server, port) = try await serve()
    let runs = try RawHTTPClient.get("/", port: port)
    #expect(runs.status == 200)
    #expect(runs.headers["content-security-policy"]?.contains("script-src 'self'") == true)
    #expect(runs.body.contains("<td class=\"status failed\">failed</td>"))
    #expect(runs.body.contains("hostile"))
    let run = try RawHTTPClient.get("/runs/1", port: port)
    #expect(run.status == 200)
    #expect(run.body.contains("&lt;img src=x onerror=alert(1)&gt;"))
    #expect(run.body.contains("&lt;script&gt;alert(2)&lt;/script&gt;"))
    #expect(run.body.contains("&lt;b&gt;out&lt;/b&gt;"))
    #expect(!run.body.contains("<img") && !run.body.contains("<b>"))
    // The one script is the site's own file.
    #expect(run.body.components(separatedBy: "<script").count == 2 && run.body.contains("<script src=\"/live.js\" defer></script>"))
    let style = try RawHTTPClient.get("/style.css", port: port)
    #expect(style.status == 200 && style.headers["content-type"] == "text/css; charset=utf-8")
    try await stop(server)
  }

  @Test func hostileRequestsGetTheirAnswerAndTheServerGoesOn() async throws {
    try await recordRuns()
    let (server, port) = try await serve()
    for path in ["/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/runs/1/../../etc", "/runs/99999999999999999999", "/\u{7f}"] {
      let answer = try RawHTTPClient.get(path, port: port)
      #expect([400, 404].contains(answer.status), "\(path): \(answer.status)")
    }
    let huge = try RawHTTPClient.get("/", port: port, headers: ["X-Big": String(repeating: "a", count: 100_000)])
    #expect(huge.status == 431 || huge.status == 413, "\(huge.status)")
    let longPath = try RawHTTPClient.get("/" + String(repeating: "a", count: 100_000), port: port)
    #expect([404, 414, 431].contains(longPath.status), "\(longPath.status)")
    let post = try RawHTTPClient.request("POST", "/runs/1", port: port, body: String(repeating: "x", count: 200_000))
    #expect(post.status == 405)
    let garbage = try RawHTTPClient.send(Array("NOT HTTP AT ALL\r\n\r\n".utf8), port: port)
    #expect(garbage.status == 400 || garbage.status == 505, "\(garbage.status)")
    // Still serving.
    #expect(try RawHTTPClient.get("/", port: port).status == 200)
    try await stop(server)
  }

  @Test func readOnlyRefusesEveryPost() async throws {
    try await recordRuns()
    let (server, port) = try await serve(["--read-only"])
    #expect(try RawHTTPClient.request("POST", "/runs/1", port: port).status == 403)
    #expect(try RawHTTPClient.get("/runs/1", port: port).status == 200)
    try await stop(server)
  }

  @Test func withATokenEveryPathWithoutItIs401() async throws {
    try await recordRuns()
    let (server, port) = try await serve(["--token", "s3cret"])
    for path in ["/", "/runs/1", "/style.css", "/nowhere", "/../x"] {
      #expect(try RawHTTPClient.get(path, port: port).status == 401, "\(path)")
    }
    let admitted = try RawHTTPClient.get("/?token=s3cret", port: port)
    #expect(admitted.status == 200)
    let cookies = admitted.headers["set-cookie"]?.split(separator: "\n") ?? []
    #expect(cookies.contains("lunar_token=s3cret; Path=/; HttpOnly; SameSite=Strict"), "\(cookies)")
    #expect(try RawHTTPClient.get("/runs/1", port: port, headers: ["Cookie": "lunar_token=s3cret"]).status == 200)
    #expect(try RawHTTPClient.get("/runs/1", port: port, headers: ["Cookie": "lunar_token=s3cre"]).status == 401)
    try await stop(server)
  }

  @Test func theTokenMayComeFromTheEnvironment() async throws {
    let server = try LunarProcess.start(
      ["serve", "--store", store, "--listen", "127.0.0.1:0"], environment: ["LUNAR_SERVE_TOKEN": "from-env"])
    try await server.waitForOutput("/ (runs of")
    let port = try #require(Self.port(in: try server.stdout.contents()))
    #expect(try RawHTTPClient.get("/", port: port).status == 401)
    #expect(try RawHTTPClient.get("/", port: port, headers: ["Authorization": "Bearer from-env"]).status == 200)
    try await stop(server)
  }

  @Test func listeningBeyondLoopbackWithoutATokenRefusesToStart() async throws {
    for address in ["0.0.0.0:0", "[::]:0", "192.168.1.20:8765"] {
      let outcome = try await LunarProcess.run(["serve", "--store", store, "--listen", address])
      #expect(outcome.status == 2, "\(address)")
      #expect(outcome.stderr.contains("reaches beyond this machine: give --token"), "\(outcome.stderr)")
    }
  }

  @Test(arguments: [
    (["--listen", "nonsense"], "--listen 'nonsense': expected ADDR:PORT"),
    (["--listen", "1.2.3:80"], "the address must be numeric"),
    (["--listen", "example.com:80"], "the address must be numeric"),
    (["--listen", "127.0.0.1:99999"], "the port must be a number from 0 to 65535"),
    (["--listen", "127.0.0.1:-1"], "the port must be a number from 0 to 65535"),
    (["--listen", "[::1"], "an IPv6 address is written [ADDR]:PORT"),
    (["--listen", String(repeating: "9", count: 100_000)], "expected ADDR:PORT"),
    (["--token", ""], "--token must not be empty"),
    (["extra"], "serve takes no operands"),
    (["--store", "mysql://x"], "unknown kind of store"),
    (["--nope"], "--nope"),
  ])
  func badFlagsAreUsageErrors(arguments: [String], message: String) async throws {
    let outcome = try await LunarProcess.run(["serve"] + arguments)
    #expect(outcome.status == 2)
    #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
  }

  @Test func aPortInUseIsAnErrorThatSaysSo() async throws {
    let (first, port) = try await serve()
    let second = try await LunarProcess.run(["serve", "--store", store, "--listen", "127.0.0.1:\(port)"])
    #expect(second.status == 1)
    #expect(second.stderr.contains("cannot listen on 127.0.0.1 port \(port)"), "\(second.stderr)")
    try await stop(first)
  }

  /// The pages in headless Chromium, through WebDriver (selenium): the
  /// runs, the filter by keyboard, a run's page with its hostile names as
  /// text, the not-found page, dark mode, and a console without errors.
  /// Screenshots go to .build/test-artifacts/serve.
  @Test func thePagesWorkInARealBrowser() async throws {
    try await recordTwoRuns()
    let (server, port) = try await serve()
    let screenshots = Repository.url(".build/test-artifacts/serve")
    let browser = try await ProgramRun.run(
      "/usr/bin/python3", [Repository.url("Tests/browser/serve_pages.py").path, "http://127.0.0.1:\(port)/", screenshots.path],
      timeout: 120)
    #expect(browser.status == 0, "\(browser.stdout)\(browser.stderr)")
    #expect(browser.stdout.contains("ok: the browser console has no errors in dark mode"), "\(browser.stdout)")
    for page in ["runs", "run", "queues", "schedules", "not-found", "runs-dark"] {
      #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent("\(page).png").path), "\(page)")
    }
    try await stop(server)
  }

  /// A running run in the browser: its step turns succeeded without a
  /// reload, then its cancel button cancels it, as `lunar runs cancel`
  /// would, and the page shows it cancelled, again without a reload.
  @Test func aRunningRunUpdatesLiveAndIsCancelledFromItsPage() async throws {
    let file = folder.url.appendingPathComponent("slow.lua")
    try Data(
      """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "slow" {
        step "first" { run = function() lunar.sleep(1) return "done" end },
        step "second" { needs = { "first" }, run = function() lunar.sleep(60) end },
      }
      """.utf8
    ).write(to: file)
    let (server, port) = try await serve()
    let run = try LunarProcess.start(["run", "--store", store, file.path])
    try await run.waitForOutput("step first started")
    let screenshots = Repository.url(".build/test-artifacts/serve")
    let browser = try await ProgramRun.run(
      "/usr/bin/python3",
      [Repository.url("Tests/browser/serve_pages.py").path, "--live", "http://127.0.0.1:\(port)/", "1", screenshots.path],
      timeout: 120)
    #expect(browser.status == 0, "\(browser.stdout)\(browser.stderr)")
    #expect(browser.stdout.contains("ok: the run shows cancelled"), "\(browser.stdout)")
    let ended = try await run.wait(timeout: 30)
    #expect(ended.stdout.contains("workflow slow: cancelled by request"), "\(ended.stdout)")
    try await stop(server)
  }

  /// A waiting run signalled through its page's form, by keyboard: the
  /// wait outputs the value, the run goes on and succeeds, its logs page
  /// shows what the next step printed; then a schedule is paused and
  /// resumed by its buttons, as `lunar schedule pause` and `resume` do.
  @Test func aWaitingRunIsSignalledAndAScheduleActedOnFromThePages() async throws {
    let add = try await LunarProcess.run(
      ["schedule", "add", "nightly", "--store", store, "--cron", "30 2 * * *", Repository.url("examples/approval.lua").path])
    #expect(add.status == 0, "\(add.stderr)")
    let (server, port) = try await serve()
    let run = try LunarProcess.start(["run", "--store", store, Repository.url("examples/approval.lua").path])
    try await run.waitForOutput("step approval started")
    let screenshots = Repository.url(".build/test-artifacts/serve")
    let browser = try await ProgramRun.run(
      "/usr/bin/python3",
      [Repository.url("Tests/browser/serve_pages.py").path, "--signal", "http://127.0.0.1:\(port)/", "1", screenshots.path],
      timeout: 120)
    #expect(browser.status == 0, "\(browser.stdout)\(browser.stderr)")
    #expect(browser.stdout.contains("ok: its Resume button resumed it"), "\(browser.stdout)")
    // The page's Rerun queued what `lunar submit --resume 1 --force ship` queues.
    let runs = try StoreLocation(parsing: store, currentFolder: folder.url.path).openRunStore()
    let listed = try runs.runs(workflow: nil, limit: 10).map { "\($0.run.id) \($0.run.status)" }
    let rerun = try #require(try runs.run(RunID(2)), "\(listed)\n\(browser.stdout)")
    #expect(rerun.status == .queued && rerun.resumedFrom == RunID(1) && rerun.force == ["ship"], "\(rerun)")
    let ended = try await run.wait(timeout: 30)
    #expect(ended.status == 0, "\(ended.stdout)\(ended.stderr)")
    #expect(ended.stdout.contains("shipping 1.2.0, approved by ada"), "\(ended.stdout)")
    let schedules = try await LunarProcess.run(["schedule", "ls", "--store", store])
    #expect(schedules.stdout.contains("active"), "\(schedules.stdout)")
    try await stop(server)
  }

  /// A client that sends half a request holds nothing: others are served
  /// meanwhile, and the server closes it once it has been idle (10 s).
  @Test func aSlowClientIsClosedAndDoesNotHoldOthersUp() async throws {
    try await recordRuns()
    let (server, port) = try await serve()
    let slow = Task.detached { try RawHTTPClient.secondsUntilClosed(sending: "GET / HTTP/1.1\r\nHost: 127", port: port, timeout: 60) }
    #expect(try RawHTTPClient.get("/runs/1", port: port).status == 200)
    // Closed by the server (a read past 60 s would throw instead).
    _ = try await slow.value
    #expect(try RawHTTPClient.get("/", port: port).status == 200)
    try await stop(server)
  }
}
