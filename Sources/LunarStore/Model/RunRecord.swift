import LuaKit

/// A run as the store keeps it.
public struct RunRecord: Sendable, Equatable {
  /// Its number in the store.
  public var id: RunID
  /// The workflow's name, as bytes.
  public var workflow: LuaString
  /// The script file, as given on the command line.
  public var file: String
  /// The script's arguments.
  public var arguments: [String]
  /// Where it stands.
  public var status: RunStatus
  /// When it began.
  public var startedAt: StoreTimestamp
  /// When it ended; nil while running (or if its process died).
  public var finishedAt: StoreTimestamp?
  /// The run whose outputs it reused.
  public var resumedFrom: RunID?
  /// The machine that ran it.
  public var host: String
  /// The process that ran it (the latest owner's, after a take-over).
  public var pid: Int32
  /// The latest owner's fencing token (0 for a run an older Lunar began).
  public var ownerToken: ClaimToken
  /// Since when the latest owner holds it.
  public var ownedSince: StoreTimestamp?
  /// When its owner's lease ends; nil once finished (or for an older run).
  public var leaseExpiresAt: StoreTimestamp?
  /// Who asked to cancel it (`request`) and has not been answered yet.
  public var cancelRequest: String?
  /// For a cancelled run, what stopped it: a signal's name or `request`.
  public var stoppedBy: String?
  /// The steps it was to run, in declaration order, and what each needs (empty for an older run).
  public var plan: RunPlan
  /// The steps running at its owner's last heartbeat.
  public var running: [LuaString]
  /// For a parked run, when its earliest wait ends (nil: only a signal wakes it).
  public var wakeAt: StoreTimestamp?
  /// For a submitted resume, the steps it runs again anyway, with the
  /// steps that need them (`--force`); the others' outputs come from
  /// `resumedFrom` where unchanged.
  public var force: [LuaString]

  /// A record with every field given.
  public init(
    id: RunID, workflow: LuaString, file: String, arguments: [String], status: RunStatus,
    startedAt: StoreTimestamp, finishedAt: StoreTimestamp?, resumedFrom: RunID?, host: String, pid: Int32,
    ownerToken: ClaimToken = ClaimToken(0), ownedSince: StoreTimestamp? = nil, leaseExpiresAt: StoreTimestamp? = nil,
    cancelRequest: String? = nil, stoppedBy: String? = nil, plan: RunPlan = [], running: [LuaString] = [],
    wakeAt: StoreTimestamp? = nil, force: [LuaString] = []
  ) {
    self.wakeAt = wakeAt
    self.force = force
    self.plan = plan
    self.running = running
    self.ownerToken = ownerToken
    self.ownedSince = ownedSince
    self.leaseExpiresAt = leaseExpiresAt
    self.cancelRequest = cancelRequest
    self.stoppedBy = stoppedBy
    self.id = id
    self.workflow = workflow
    self.file = file
    self.arguments = arguments
    self.status = status
    self.startedAt = startedAt
    self.finishedAt = finishedAt
    self.resumedFrom = resumedFrom
    self.host = host
    self.pid = pid
  }

  /// True for a run recorded as running whose owner's lease ended before
  /// `now`: its process died (or stopped heartbeating) without recording
  /// its end. False for a run of an older Lunar, which has no lease.
  public func leaseExpired(at now: StoreTimestamp = .now) -> Bool {
    guard status == .running, let leaseExpiresAt else { return false }
    return leaseExpiresAt.microseconds <= now.microseconds
  }

  /// True for a running run whose owner's lease has not ended at `now`.
  public func isHeld(at now: StoreTimestamp = .now) -> Bool {
    guard status == .running, let leaseExpiresAt else { return false }
    return leaseExpiresAt.microseconds > now.microseconds
  }
}
