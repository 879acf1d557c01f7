import LuaKit
import LunarSchedules
import LunarStore
import Synchronization

/// What `lunar serve` answers: the runs in one store, as pages. Every
/// answer carries a Content-Security-Policy without inline script; a path
/// it does not know is 404 without touching the disk; a store that fails
/// is one error page, and the next request tries again.
public final class ServeSite: Sendable {
  /// How the site is reached and what it allows.
  public struct Options: Sendable {
    /// The store whose runs it shows.
    public var store: StoreLocation
    /// The token every request must carry, if any.
    public var token: AccessToken?
    /// Whether the site offers no action and refuses every POST.
    public var readOnly: Bool
    /// The fingerprint of a workflow file's content, for a run the page
    /// submits (Trigger, Resume, Rerun: the CLI reads the file as `lunar
    /// schedule trigger` and `lunar submit` do).
    public var fingerprint: @Sendable (_ file: String) throws -> Fingerprint
    /// The program that draws a run's graph: Graphviz's `dot`, looked up on `PATH`.
    public var graphviz = "dot"

    /// Options for the site.
    public init(
      store: StoreLocation, token: AccessToken? = nil, readOnly: Bool = false,
      fingerprint: @escaping @Sendable (_ file: String) throws -> Fingerprint
    ) {
      (self.store, self.token, self.readOnly, self.fingerprint) = (store, token, readOnly, fingerprint)
    }
  }

  /// The headers and query arguments the site reads.
  public static let reading = WebServer.Reading(
    headers: ["cookie", "authorization", "origin", "host"], arguments: ["token", "workflow", "status", "since", "before", "step"])

  private let options: Options
  // The open store, reopened after a failure. Requests come one at a
  // time (WebServer's one thread); the lock makes the site safe anyway.
  private let store = Mutex<(any RunStore)?>(nil)
  private let queueStore = Mutex<(any QueueStore)?>(nil)
  private let now: @Sendable () -> StoreTimestamp
  private let graph: RunGraph
  private let changes: ChangeFeed

  /// A site over `options.store`; `now` is the clock durations run to.
  public init(_ options: Options, now: @escaping @Sendable () -> StoreTimestamp = { .now }) {
    self.options = options
    self.now = now
    graph = RunGraph(program: options.graphviz)
    changes = ChangeFeed(location: options.store)
  }

  deinit { changes.stop() }

  /// The answer to `request`.
  public func answer(_ request: WebRequest) -> WebResponse {
    let known = SessionToken.of(request)
    let session = known ?? .make()
    var response = route(request, session: session, sessionKnown: known != nil)
    // Only pages start a session: a request a browser makes without its
    // cookies (an icon, say) must not replace the one a page's forms carry.
    if known == nil && response.header("content-type")?.hasPrefix("text/html") == true {
      response.headers.append(("Set-Cookie", session.cookie))
    }
    response.headers += Self.securityHeaders
    return response
  }

  private func route(_ request: WebRequest, session: SessionToken, sessionKnown: Bool) -> WebResponse {
    if let token = options.token {
      guard token.admits(request) else {
        var refused = WebResponse.text("401 Unauthorized: give the token (?token=... once, or Authorization: Bearer ...)", status: 401)
        refused.headers.append(("WWW-Authenticate", "Bearer"))
        return refused
      }
      if request.cookie(AccessToken.cookieName).map(token.matches) != true {
        var kept = answerAuthorized(request, session: session, sessionKnown: sessionKnown)
        kept.headers.append(("Set-Cookie", token.cookie))
        return kept
      }
    }
    return answerAuthorized(request, session: session, sessionKnown: sessionKnown)
  }

  private func answerAuthorized(_ request: WebRequest, session: SessionToken, sessionKnown: Bool) -> WebResponse {
    if request.method == "POST" && !options.readOnly {
      return act(request, session: sessionKnown ? session : nil)
    }
    guard request.method == "GET" || request.method == "HEAD" else {
      var refused = WebResponse.text(
        options.readOnly ? "403 Forbidden: this server is read-only" : "405 Method Not Allowed", status: options.readOnly ? 403 : 405)
      refused.headers.append(("Allow", "GET, HEAD"))
      return refused
    }
    let path = request.path
    if path == "/style.css" {
      return WebResponse(status: 200, contentType: "text/css; charset=utf-8", body: Array(Page.style.utf8))
    }
    if path == "/live.js" {
      return WebResponse(status: 200, contentType: "text/javascript; charset=utf-8", body: Array(Page.liveScript.utf8))
    }
    if path == "/changes" {
      // The live pages' question, several times a second: answered from
      // memory, never from the store.
      return WebResponse(status: 200, contentType: "text/plain; charset=utf-8", body: Array(String(changes.mark).utf8))
    }
    if path == "/favicon.svg" {
      return WebResponse(status: 200, contentType: "image/svg+xml", body: Array(Page.icon.utf8))
    }
    if path == "/" || path == "/runs" { return runs(request) }
    let actions = options.readOnly ? nil : session
    if path == "/queues" { return queues(actions: actions) }
    if path == "/schedules" { return schedules(actions: actions) }
    if path.hasPrefix("/runs/") {
      let rest = path.dropFirst("/runs/".count)
      if let id = Int64(rest), id > 0 { return run(RunID(id), session: session) }
      if rest.hasSuffix("/logs"), let id = Int64(rest.dropLast("/logs".count)), id > 0 { return logs(RunID(id), request) }
    }
    return notFound(path)
  }

  private func logs(_ id: RunID, _ request: WebRequest) -> WebResponse {
    var step: LuaString?
    if let hex = request.arguments["step"], !hex.isEmpty {
      guard let bytes = HexName.decode(hex) else {
        return .html(Page.document(title: "Bad step", content: "<h1>Bad step</h1><p>The step is named in hex.</p>"), status: 400)
      }
      step = LuaString(bytes: bytes)
    }
    return withStore { store throws(StoreError) in
      guard let run = try store.run(id) else { return notFound("/runs/\(id.rawValue)/logs") }
      let chunks = try store.stepLogs(of: id, step: step, attempt: nil, after: 0).sorted {
        ($0.position, $0.attempt, $0.sequence) < ($1.position, $1.attempt, $1.sequence)
      }
      return .html(LogsPage.html(run, step: step, chunks: chunks))
    }
  }

  private func runs(_ request: WebRequest) -> WebResponse {
    let query: RunsPage.Query
    do {
      query = try RunsPage.Query(request.arguments, now: now())
    } catch {
      return .html(Page.document(title: "Bad filter", content: "<h1>Bad filter</h1><p>\(HTML.escape(error.message))</p>"), status: 400)
    }
    return withStore { store throws(StoreError) in
      // One more than a page: whether an older page exists.
      let found = try store.runs(query.filter, limit: RunsPage.pageSize + 1)
      return .html(RunsPage.html(Array(found.prefix(RunsPage.pageSize)), query: query, more: found.count > RunsPage.pageSize, now: now()))
    }
  }

  private func run(_ id: RunID, session: SessionToken) -> WebResponse {
    withStore { store throws(StoreError) in
      guard let run = try store.run(id) else { return notFound("/runs/\(id.rawValue)") }
      let actions = options.readOnly ? nil : session
      let waits = try (store as? any WaitStore)?.stepWaits(of: id) ?? []
      let steps = try store.steps(of: id)
      let graph = graph.drawing(of: run, steps: steps)
      return .html(RunPage.html(run, steps: steps, waits: waits, graph: graph, now: now(), actions: actions))
    }
  }

  /// A POST: an action, done only for a form of this site's own pages
  /// (the session's token in its `csrf` field, an Origin that is this
  /// site), as the CLI does it and recorded the same way.
  private func act(_ request: WebRequest, session: SessionToken?) -> WebResponse {
    let fields = request.bodyTooLarge ? [:] : FormBody.fields(request.body)
    let action: SiteAction
    do {
      action = try SiteAction.read(path: request.path, fields: fields)
    } catch {
      switch error {
      case .unknownPath:
        var refused = WebResponse.text("405 Method Not Allowed", status: 405)
        refused.headers.append(("Allow", "GET, HEAD"))
        return refused
      case .badField(let problem):
        guard Self.fromOwnPage(request, fields: fields, session: session) else { return refusedAction }
        return .html(Page.document(title: "Not done", content: "<h1>Not done</h1><p>\(HTML.escape(problem)).</p>"), status: 400)
      }
    }
    guard Self.fromOwnPage(request, fields: fields, session: session) else { return refusedAction }
    switch action {
    case .cancel(let run):
      return withStore { store throws(StoreError) in
        do throws(StoreError) {
          _ = try store.requestCancel(run, by: "request", at: now())
        } catch where error.kind == .noSuchRun {
          return notFound("/runs/\(run.rawValue)")
        } catch where error.kind == .runNotCancellable {
          return notDone(error.message)
        }
        return .seeOther(action.page)
      }
    case .signal(let run, let name, let value):
      return withStore { store throws(StoreError) in
        guard let waits = store as? any WaitStore else { return notDone("the store \(store.location) keeps no signals") }
        do throws(StoreError) {
          try waits.sendSignal(name, value: value, to: run, at: now())
        } catch where error.kind == .noSuchRun {
          return notFound("/runs/\(run.rawValue)")
        }
        return .seeOther(action.page)
      }
    case .resumeQueue(let queue):
      return withQueueStore { store throws(StoreError) in
        guard let store else { return notFound("/queues") }
        do throws(StoreError) {
          _ = try store.resume(queue: queue)
        } catch where error.kind == .noSuchQueue {
          return notFound("/queues")
        }
        return .seeOther(action.page)
      }
    case .resumeRun(let run), .rerun(let run, _):
      return withStore { store throws(StoreError) in
        guard let submissions = store as? any SubmittedRunStore else { return notDone("the store \(store.location) takes no submitted runs") }
        guard let earlier = try store.run(run) else { return notFound("/runs/\(run.rawValue)") }
        guard ![.running, .parked, .queued].contains(earlier.status) else {
          return notDone("run \(run) is \(earlier.status.rawValue): a run is resumed once it has ended")
        }
        let fingerprint: Fingerprint
        do {
          fingerprint = try options.fingerprint(earlier.file)
        } catch {
          return notDone("run \(run)'s file \(earlier.file) cannot be read here: \(error)")
        }
        var force: [LuaString] = []
        if case .rerun(_, let step) = action { force = [step] }
        let submitted = try submissions.submit(
          RunSubmission(
            file: earlier.file, arguments: earlier.arguments, fileFingerprint: fingerprint, submittedAt: now(), resumes: run,
            force: force))
        return .seeOther("/runs/\(submitted.run.id.rawValue)")
      }
    case .pauseSchedule(let name), .resumeSchedule(let name):
      return withStore { store throws(StoreError) in
        guard let schedules = store as? any SchedulingStore else { return notFound("/schedules") }
        var pausing = false
        if case .pauseSchedule = action { pausing = true }
        do throws(StoreError) {
          try schedules.setSchedule(name, paused: pausing, at: now())
        } catch where error.kind == .noSuchSchedule {
          return notFound("/schedules")
        }
        return .seeOther(action.page)
      }
    case .triggerSchedule(let name):
      return withStore { store throws(StoreError) in
        guard let schedules = store as? any SchedulingStore else { return notFound("/schedules") }
        let submitted: SubmittedRun?
        do {
          let fingerprint = options.fingerprint
          submitted = try ScheduleTicker(store: schedules) { try fingerprint($0.file) }.trigger(name, at: ScheduleTicker.date(now()))
        } catch let error as StoreError {
          throw error
        } catch {
          return notDone("schedule \(name.quoted): \(error)")
        }
        guard let submitted else { return notFound("/schedules") }
        return .seeOther("/runs/\(submitted.run.id.rawValue)")
      }
    }
  }

  /// Whether a POST comes from a form of this site's own pages: the
  /// session's token in its `csrf` field and an Origin that is this site.
  private static func fromOwnPage(_ request: WebRequest, fields: [String: String], session: SessionToken?) -> Bool {
    guard !request.bodyTooLarge, let session, let given = fields["csrf"], session.matches(given),
      let origin = request.header("origin"), let host = request.header("host")
    else { return false }
    return origin == "http://\(host)"
  }

  private var refusedAction: WebResponse {
    .html(Page.document(title: "Refused", content: "<h1>Refused</h1><p>An action must come from this site's own page.</p>"), status: 403)
  }

  private func notDone(_ message: String) -> WebResponse {
    .html(Page.document(title: "Not done", content: "<h1>Not done</h1><p>\(HTML.escape(message))</p>"), status: 409)
  }

  private func queues(actions: SessionToken?) -> WebResponse {
    withQueueStore { store throws(StoreError) in
      guard let store else { return .html(QueuesPage.html([], workers: [], now: now(), actions: actions)) }
      let workers = try (openStore() as? any WorkerStore)?.workers() ?? []
      return .html(QueuesPage.html(try store.queues(), workers: workers, now: now(), actions: actions))
    }
  }

  private func schedules(actions: SessionToken?) -> WebResponse {
    withStore { store throws(StoreError) in
      guard let schedules = store as? any ScheduleStore else { return .html(SchedulesPage.html([], now: now())) }
      return .html(SchedulesPage.html(try schedules.schedules(), now: now(), actions: actions))
    }
  }

  private func storeFailed(_ error: StoreError) -> WebResponse {
    .html(
      Page.document(title: "Store error", content: "<h1>The store did not answer</h1><pre>\(HTML.escape(error.message))</pre>"),
      status: 503)
  }

  private func notFound(_ path: String) -> WebResponse {
    .html(Page.document(title: "Not found", content: "<h1>Not found</h1><p>Nothing is at <code>\(HTML.escape(path))</code>.</p>"), status: 404)
  }

  /// `body` on the open store; a failure is an error page and closes it.
  private func withStore(_ body: (any RunStore) throws(StoreError) -> WebResponse) -> WebResponse {
    do throws(StoreError) {
      return try body(try openStore())
    } catch where error.kind == .missing {
      return .html(Page.document(title: "No runs yet", content: "<h1>Runs</h1><p>No runs recorded yet in \(HTML.escape(options.store.description)).</p>"))
    } catch {
      store.withLock { $0 = nil }
      return storeFailed(error)
    }
  }

  /// The open store, opened now if it is not.
  private func openStore() throws(StoreError) -> any RunStore {
    try store.withLock { open throws(StoreError) -> any RunStore in
      if let open { return open }
      let made = try options.store.openRunStore(createIfMissing: false)
      open = made
      return made
    }
  }

  /// `body` on the open queue store (nil while the store has no file
  /// yet); a failure is an error page and closes it.
  private func withQueueStore(_ body: ((any QueueStore)?) throws(StoreError) -> WebResponse) -> WebResponse {
    do throws(StoreError) {
      let opened = try queueStore.withLock { open throws(StoreError) -> any QueueStore in
        if let open { return open }
        let made = try options.store.openQueueStore(createIfMissing: false)
        open = made
        return made
      }
      return try body(opened)
    } catch where error.kind == .missing {
      do throws(StoreError) { return try body(nil) } catch { return storeFailed(error) }
    } catch {
      queueStore.withLock { $0 = nil }
      return storeFailed(error)
    }
  }

  /// What every answer carries: no inline script or style, no framing,
  /// no sniffing, nothing cached, no referrer sent to other sites.
  static let securityHeaders: [(name: String, value: String)] = [
    (
      "Content-Security-Policy",
      "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; connect-src 'self'; "
        + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    ("X-Content-Type-Options", "nosniff"),
    // Not no-referrer: under it a browser sends `Origin: null` with the
    // site's own forms, which the action check must refuse.
    ("Referrer-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
    ("Cache-Control", "no-store"),
  ]
}
