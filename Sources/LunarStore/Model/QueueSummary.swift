import LuaKit

/// One queue at a glance, for `lunar queue ls`.
public struct QueueSummary: Sendable, Hashable {
  /// The queue's name.
  public var name: LuaString
  /// How many jobs were ever submitted to it (the last sequence number).
  public var submitted: Int64
  /// How many of its jobs wait to start.
  public var waiting: Int
  /// Its running job, if one is (at most one is: order is strict).
  public var running: JobID?
  /// The worker running it.
  public var runningWorker: WorkerID?
  /// When that worker's lease on it ends unless it heartbeats: past, the
  /// worker has most likely died, and the next claim takes the job over.
  public var runningLeaseExpiresAt: StoreTimestamp?
  /// The failed job that halted the queue (policy `stop`), until it is resumed.
  public var haltedBy: JobID?
  /// When its oldest waiting job was submitted (its age is the time since).
  public var oldestWaitingSince: StoreTimestamp?

  /// A summary with every part given.
  public init(
    name: LuaString, submitted: Int64, waiting: Int, running: JobID?, runningWorker: WorkerID?, haltedBy: JobID?,
    oldestWaitingSince: StoreTimestamp?, runningLeaseExpiresAt: StoreTimestamp? = nil
  ) {
    self.name = name
    self.submitted = submitted
    self.waiting = waiting
    self.running = running
    self.runningWorker = runningWorker
    self.haltedBy = haltedBy
    self.oldestWaitingSince = oldestWaitingSince
    self.runningLeaseExpiresAt = runningLeaseExpiresAt
  }

  /// True while a failure keeps the queue from going on.
  public var isHalted: Bool { haltedBy != nil }
}
