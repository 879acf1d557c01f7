/// A `lunar worker` process as it says it is alive: recorded when it
/// starts and at each of its heartbeats, removed when it stops, so a page
/// shows every worker, holding work or not, and a worker that stopped
/// heartbeating without saying goodbye (it most likely died).
public struct WorkerPresence: Sendable, Equatable {
  /// Its name (`host:pid`), as jobs and runs it holds name it.
  public var worker: WorkerID
  /// The machine it runs on.
  public var host: String
  /// Its process.
  public var pid: Int32
  /// What it serves, for people: `runs (4 at once)`, `queues build, deploy`.
  public var serves: String
  /// When it started.
  public var startedAt: StoreTimestamp
  /// Its latest heartbeat.
  public var seenAt: StoreTimestamp
  /// When it counts as lost unless it heartbeats again.
  public var expiresAt: StoreTimestamp

  /// A presence with every part given.
  public init(
    worker: WorkerID, host: String, pid: Int32, serves: String, startedAt: StoreTimestamp, seenAt: StoreTimestamp,
    expiresAt: StoreTimestamp
  ) {
    self.worker = worker
    self.host = host
    self.pid = pid
    self.serves = serves
    self.startedAt = startedAt
    self.seenAt = seenAt
    self.expiresAt = expiresAt
  }

  /// True once its last heartbeat's lease ended before `now`.
  public func isLost(at now: StoreTimestamp) -> Bool { expiresAt.microseconds <= now.microseconds }
}
