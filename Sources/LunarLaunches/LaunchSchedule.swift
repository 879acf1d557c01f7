/// Keeps one snapshot of launches per source and refreshes it with the
/// policy of the design's `registerRefresh`, `completeRefresh` and
/// `cancelRefresh`: concurrent refreshes of a source share one request; a
/// cooldown, started when a request starts (so a failed fetch starts it
/// too), limits how often a source is asked; a completion that is not the
/// current request's is dropped; when every waiter has left, the request is
/// detached and cancelled and the previous snapshot restored exactly. A new
/// provider detaches the request in flight the same way. Creating a
/// schedule fetches nothing.
public actor LaunchSchedule {
  /// Where a source's snapshot stands.
  public enum Phase: Sendable, Equatable {
    case idle, loading, loaded
    case failed(LaunchFetchError)
  }

  /// What the schedule knows about one source.
  public struct Snapshot: Sendable, Equatable {
    /// The source's launches from its last successful fetch.
    public var launches: [Launch] = []
    /// When that fetch finished.
    public var fetchedAt: Double?
    /// When the last request that counts started (one that completed,
    /// successfully or not); the cooldown runs from it.
    public var requestedAt: Double?
    /// Until when a refresh returns at once without a request: the cooldown
    /// after `requestedAt`; nil when the next refresh may ask at once.
    public var nextRefreshAllowedAt: Double?
    /// Where the source stands now.
    public var phase: Phase = .idle
  }

  /// A refresh that could not be asked for.
  public enum ScheduleError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownSource(String)
    public var description: String {
      switch self {
      case .unknownSource(let source): "unknown launch source '\(source)'"
      }
    }
  }

  private final class Request {
    let id: Int
    /// The snapshot from before the request, put back if it is abandoned.
    var previous: Snapshot
    var task: Task<Void, Never>?
    var waiters: [Int: CheckedContinuation<Snapshot, any Error>] = [:]
    init(id: Int, previous: Snapshot) {
      self.id = id
      self.previous = previous
    }
  }

  private var providers: [String: any LaunchProvider]
  /// The sources, in the order given.
  public nonisolated let sources: [String]
  /// The cooldown after the start of a request, in seconds.
  public private(set) var minimumRefreshInterval: Double
  /// How many launches to ask each source for.
  public nonisolated let limit: Int
  private let now: @Sendable () -> Double
  private var snapshots: [String: Snapshot] = [:]
  private var requests: [String: Request] = [:]
  private var nextID = 1
  private var reminderBook = ReminderBook()
  /// How many completions were dropped as not the current request's (a
  /// diagnostic: tests wait on it to know a detached request has ended).
  private(set) var droppedCompletions = 0

  /// A schedule over `providers`; `now` is the clock (virtual in tests).
  public init(
    providers: [any LaunchProvider], minimumRefreshInterval: Double = 60, limit: Int = 10,
    now: @escaping @Sendable () -> Double
  ) {
    var byName: [String: any LaunchProvider] = [:]
    for provider in providers { byName[provider.source] = provider }
    self.providers = byName
    sources = providers.map(\.source)
    self.minimumRefreshInterval = minimumRefreshInterval
    self.limit = limit
    self.now = now
  }

  /// The snapshot of `source` (idle and empty before the first refresh).
  public func snapshot(_ source: String) -> Snapshot { snapshots[source] ?? Snapshot() }

  // MARK: Configuration

  /// Changes the cooldown. Snapshots, requests in flight and reminders
  /// stay; each source in its cooldown may refresh again `seconds` after
  /// its last request started.
  public func setMinimumRefreshInterval(_ seconds: Double) {
    minimumRefreshInterval = seconds
    for (source, snapshot) in snapshots { snapshots[source] = recooled(snapshot) }
    for request in requests.values { request.previous = recooled(request.previous) }
  }

  private func recooled(_ snapshot: Snapshot) -> Snapshot {
    var snapshot = snapshot
    if snapshot.nextRefreshAllowedAt != nil, let started = snapshot.requestedAt {
      snapshot.nextRefreshAllowedAt = started + minimumRefreshInterval
    }
    return snapshot
  }

  /// Makes `provider` answer for its source from now on. The source keeps
  /// its launches and reminders (as a failing source does) until the new
  /// provider's first fetch replaces them, but loses its cooldown, so the
  /// next refresh asks the new provider. A request in flight is detached
  /// and cancelled: its completion is dropped, the snapshot from before it
  /// is put back (without its cooldown) and given to its waiters at once.
  public func replaceProvider(_ provider: any LaunchProvider) throws(ScheduleError) {
    let source = provider.source
    guard providers[source] != nil else { throw .unknownSource(source) }
    providers[source] = provider
    guard let request = requests[source] else {
      snapshots[source]?.nextRefreshAllowedAt = nil
      return
    }
    var restored = request.previous
    restored.nextRefreshAllowedAt = nil
    detach(source, request, restoring: restored)
    let waiters = request.waiters
    request.waiters = [:]
    for continuation in waiters.values { continuation.resume(returning: restored) }
  }

  /// Refreshes `source` and returns its snapshot: joining the request in
  /// flight if there is one; at once inside the cooldown; otherwise by
  /// starting a request, which starts the cooldown. A failed fetch shows in
  /// the snapshot's phase and keeps the old launches; cancelling this caller
  /// (or calling from a cancelled task, which starts nothing) throws
  /// `CancellationError` without disturbing other callers.
  public func refresh(_ source: String) async throws -> Snapshot {
    guard let provider = providers[source] else { throw ScheduleError.unknownSource(source) }
    try Task.checkCancellation()
    // Joining existing work makes no other request and is never refused by
    // the cooldown that work started.
    if let request = requests[source] { return try await join(source, request) }
    let current = snapshot(source)
    if let allowed = current.nextRefreshAllowedAt, now() < allowed { return current }
    let request = Request(id: nextID, previous: current)
    nextID += 1
    requests[source] = request
    let started = now()
    var loading = current
    loading.phase = .loading
    loading.requestedAt = started
    loading.nextRefreshAllowedAt = started + minimumRefreshInterval
    snapshots[source] = loading
    let limit = self.limit
    let id = request.id
    request.task = Task {
      let result: Result<[Launch], LaunchFetchError>
      do {
        result = .success(try await provider.fetch(limit: limit))
      } catch {
        result = .failure(error as? LaunchFetchError ?? .network(String(describing: error)))
      }
      self.finish(source, id, result)
    }
    return try await join(source, request)
  }

  private var nextWaiter = 1

  private func join(_ source: String, _ request: Request) async throws -> Snapshot {
    let waiter = nextWaiter
    nextWaiter += 1
    let requestID = request.id
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        if requests[source]?.id != requestID {
          // Detached before this caller could wait for it.
          continuation.resume(returning: snapshot(source))
        } else if Task.isCancelled {
          if request.waiters.isEmpty { detach(source, request, restoring: request.previous) }
          continuation.resume(throwing: CancellationError())
        } else {
          request.waiters[waiter] = continuation
        }
      }
    } onCancel: {
      Task { await self.leave(source, requestID, waiter) }
    }
  }

  /// One waiter leaves (the design's `cancelRefresh`); when the last one
  /// leaves, the request is detached and cancelled and the previous
  /// snapshot put back, cooldown included.
  private func leave(_ source: String, _ requestID: Int, _ waiter: Int) {
    guard let request = requests[source], request.id == requestID,
      let continuation = request.waiters.removeValue(forKey: waiter)
    else { return }
    if request.waiters.isEmpty { detach(source, request, restoring: request.previous) }
    continuation.resume(throwing: CancellationError())
  }

  /// Ends `request`'s ownership of `source` at once (a new refresh need not
  /// wait for cancelled transport), cancels its work and puts `snapshot`
  /// in place; the request's completion will be dropped.
  private func detach(_ source: String, _ request: Request, restoring snapshot: Snapshot) {
    requests[source] = nil
    request.task?.cancel()
    snapshots[source] = snapshot
  }

  /// A request's completion (the design's `completeRefresh`); dropped
  /// unless it is the current request's. The cooldown the request started
  /// stays, whatever the outcome, except for a fetch that ended cancelled:
  /// that puts the previous snapshot back.
  private func finish(_ source: String, _ requestID: Int, _ result: Result<[Launch], LaunchFetchError>) {
    guard let request = requests[source], request.id == requestID else {
      droppedCompletions += 1
      return
    }
    requests[source] = nil
    var next = snapshot(source)
    switch result {
    case .success(let launches):
      next.launches = launches
      next.fetchedAt = now()
      next.phase = .loaded
      reminderBook.update(source: source, launches: launches)
    case .failure(.cancelled):
      next = request.previous
    case .failure(let error):
      next.phase = .failed(error)
    }
    snapshots[source] = next
    for continuation in request.waiters.values { continuation.resume(returning: next) }
  }

  // MARK: Next launch

  /// The next launch at the clock's current time: the earliest future exact
  /// time across sources that have not failed; otherwise the earliest launch
  /// whose time is unknown. A launch whose exact time has passed is never
  /// next.
  public func nextLaunch() -> Launch? {
    let time = now()
    let candidates = sources.compactMap { snapshots[$0] }.filter { snapshot in
      if case .failed = snapshot.phase { return false }
      return true
    }.flatMap(\.launches)
    if let exact = candidates.filter({ ($0.plannedTime ?? -.infinity) > time }).min(by: { $0.plannedTime! < $1.plannedTime! }) {
      return exact
    }
    return candidates.filter { $0.plannedTime == nil }.min { $0.sortTime < $1.sortTime }
  }

  /// Every launch the schedule knows, by id.
  public func launch(id: String) -> Launch? {
    snapshots.values.lazy.flatMap(\.launches).first { $0.id == id }
  }

  // MARK: Reminders

  /// Sets a reminder `minutesBefore` (5, 15 or 60) a launch's exact time.
  public func remind(_ launchID: String, minutesBefore: Int) throws(ReminderError) -> Reminder {
    for source in sources {
      if let launch = snapshots[source]?.launches.first(where: { $0.id == launchID }) {
        return try reminderBook.add(launch, source: source, minutesBefore: minutesBefore, now: now())
      }
    }
    throw ReminderError.unknownLaunch(launchID)
  }

  /// Every reminder, in the order set.
  public var reminders: [Reminder] { reminderBook.reminders }

  /// Marks the reminders due now as delivered and returns them.
  public func takeDueReminders() -> [Reminder] { reminderBook.takeDue(now: now()) }

  /// When the next pending reminder is due.
  public var nextReminderDue: Double? { reminderBook.nextDue }
}
