/// A process's hold on a running run: the run's fencing token and when the
/// hold ends unless a heartbeat extends it. Only the holder of a run's latest
/// token may record its steps, heartbeat or finish it, so a process whose
/// lease expired and whose run was taken over (`RunStore.takeOver`) cannot
/// commit a step a second time.
public struct RunLease: Sendable, Equatable {
  /// The run held.
  public var run: RunID
  /// The holder's fencing token: 1 for the process that began the run, one
  /// more for each take-over.
  public var token: ClaimToken
  /// When the hold ends unless renewed.
  public var expiresAt: StoreTimestamp

  /// A lease of `run` with `token`, until `expiresAt`.
  public init(run: RunID, token: ClaimToken, expiresAt: StoreTimestamp) {
    self.run = run
    self.token = token
    self.expiresAt = expiresAt
  }

  /// How long a run is held without a heartbeat, by default; its owner
  /// heartbeats every `defaultHeartbeat`.
  public static let defaultDuration: Duration = .seconds(10)
  /// How often an owner renews its lease (and looks for a cancellation).
  public static let defaultHeartbeat: Duration = .seconds(1)
}

/// What a heartbeat of a run's owner learns: its lease's new end, and a
/// cancellation someone asked for (`lunar runs cancel`), if any.
public struct RunHeartbeat: Sendable, Equatable {
  /// The lease's new end.
  public var expiresAt: StoreTimestamp
  /// Who asked to cancel the run (`request`), or nil.
  public var cancelRequest: String?

  /// A heartbeat's answer.
  public init(expiresAt: StoreTimestamp, cancelRequest: String?) {
    self.expiresAt = expiresAt
    self.cancelRequest = cancelRequest
  }
}

/// What `RunStore.requestCancel` did.
public enum CancelRequestOutcome: Sendable, Equatable {
  /// The request is recorded; the run's owner sees it at its next heartbeat.
  case requested
  /// The run's lease had expired (its owner is gone): it is recorded as
  /// cancelled at once.
  case cancelledNow
}
