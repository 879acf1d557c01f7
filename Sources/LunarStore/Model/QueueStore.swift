import LuaKit

/// Durable ordered queues: jobs (a named action and its encoded input)
/// submitted to named queues, claimed and run by workers in any number of
/// processes and hosts, in a SQLite file (`SQLiteQueueStore`) or on a
/// PostgreSQL server (`PostgresQueueStore`), in the same store as the runs.
///
/// Order is strict per queue: `claim` only ever returns a queue's head, the
/// job whose every earlier job has finished (succeeded, failed or was
/// cancelled), so job N+1 never starts while job N waits or runs. Different
/// queues run in parallel. A worker holds a job for a lease it extends by
/// heartbeats; when a lease expires (the worker was lost) the job is the
/// head again and is claimed again, with its attempt counted, before its
/// successors. Each claim carries a fencing token: a stale worker's late
/// heartbeat or completion is refused, so a job finishes exactly once in
/// the store though its action may run more than once (at-least-once).
/// A job whose leases keep expiring (it ends every worker that runs it:
/// a crash, `os.exit`) is a poison job: once `lostLeaseLimit` of its
/// leases were lost, the claim that finds the last one expired fails it
/// as abandoned instead of running it again, and its queue goes on.
///
/// Every call is synchronous, may block on I/O or another process's lock,
/// and takes the time (`now`) from its caller, so leases follow the
/// caller's clock.
public protocol QueueStore: Sendable {
  /// Where the store is, for messages.
  var location: String { get }

  /// Submits a job running `action` with `input` (LuaValueCodec bytes) to
  /// the end of `queue` (created by its first job), with `policy` for its
  /// failure; its first claim is attempt `firstAttempt` (a workflow step's
  /// retry submits a job that goes on from the step's attempts). Sequence
  /// numbers are assigned atomically: concurrent submitters in any
  /// processes get distinct, increasing ones.
  /// - Throws: `.badValue` for an empty or overlong queue or action name or
  ///   an input over `QueueLimits.maximumValueBytes`.
  func enqueue(
    queue: LuaString, action: LuaString, input: [UInt8], policy: QueuePolicy, firstAttempt: Int, at now: StoreTimestamp
  ) throws(StoreError) -> EnqueuedJob

  /// Claims for `worker` the head of one of `queues` (of every queue if
  /// nil) that may start: a waiting head of a queue that is not halted, or a
  /// running head whose lease expired before `now`; the job is `running`
  /// until `now + lease`. Nil when there is none (or, on PostgreSQL, when
  /// every such head is being claimed by another worker at this moment).
  /// Among several queues, the head submitted first is taken. A head whose
  /// expired lease is its `lostLeaseLimit`th lost one is failed as
  /// abandoned (`QueueLimits.abandonment`), as a completion fails a job,
  /// and the claim looks further.
  /// - Throws: `.badValue` for an unusable worker name or lease, or a
  ///   `lostLeaseLimit` below 1.
  func claim(worker: WorkerID, queues: [LuaString]?, lease: Duration, lostLeaseLimit: Int, at now: StoreTimestamp)
    throws(StoreError) -> ClaimedJob?

  /// Extends the lease of `job` to `now + lease` and returns its new end.
  /// - Throws: `.staleClaim` when `token` is not the job's latest claim or
  ///   the job is no longer running; `.noSuchJob`.
  func heartbeat(job: JobID, token: ClaimToken, lease: Duration, at now: StoreTimestamp) throws(StoreError)
    -> StoreTimestamp

  /// Records how `job` ended; a failure of a job with policy `stop` halts
  /// its queue. A job whose lease expired but was not claimed again may
  /// still be completed by its token's holder.
  /// - Throws: `.staleClaim` (the store unchanged) when `token` is not the
  ///   job's latest claim or the job already finished; `.noSuchJob`;
  ///   `.badValue` for an output or error over `QueueLimits.maximumValueBytes`.
  func complete(job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp) throws(StoreError)

  /// Completes `job` as `complete` does, then claims for `worker` as
  /// `claim` does, in one transaction: a worker going from one job to the
  /// next commits once, not twice. Nothing is claimed when the completion
  /// is refused.
  func complete(
    job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp, thenClaimFor worker: WorkerID,
    queues: [LuaString]?, lease: Duration, lostLeaseLimit: Int
  ) throws(StoreError) -> ClaimedJob?

  /// Gives `job` back unfinished, for another claim to take at once (its
  /// worker is stopping and cancelled it): it waits again at its queue's
  /// head, its attempts counted, and its lease does not count as lost.
  /// - Throws: `.staleClaim` (the store unchanged) when `token` is not the
  ///   job's latest claim or the job is no longer running; `.noSuchJob`.
  func release(job: JobID, token: ClaimToken, at now: StoreTimestamp) throws(StoreError)

  /// Cancels `job` before it starts: it never runs, and the jobs after it
  /// may proceed.
  /// - Throws: `.notWaiting` for a job that started or finished (the store
  ///   unchanged); `.noSuchJob`.
  func cancel(job: JobID, at now: StoreTimestamp) throws(StoreError)

  /// Lets `queue`, halted by a failure, go on with its next job; true if it
  /// was halted.
  /// - Throws: `.noSuchQueue` for a queue no job was ever submitted to.
  func resume(queue: LuaString) throws(StoreError) -> Bool

  /// The job with `id`, or nil.
  func job(_ id: JobID) throws(StoreError) -> JobRecord?

  /// Job number `sequence` of `queue`, or nil.
  func job(queue: LuaString, sequence: Int64) throws(StoreError) -> JobRecord?

  /// Every queue, by name (its bytes), at a glance.
  func queues() throws(StoreError) -> [QueueSummary]

  /// The newest `limit` jobs of `queue`, newest first.
  func jobs(queue: LuaString, limit: Int) throws(StoreError) -> [JobRecord]
}

extension QueueStore {
  /// Claims as `claim(worker:queues:lease:lostLeaseLimit:at:)` does, with
  /// the default limit of lost leases (`QueueLimits.defaultLostLeaseLimit`).
  public func claim(worker: WorkerID, queues: [LuaString]?, lease: Duration, at now: StoreTimestamp) throws(StoreError)
    -> ClaimedJob?
  {
    try claim(worker: worker, queues: queues, lease: lease, lostLeaseLimit: QueueLimits.defaultLostLeaseLimit, at: now)
  }

  /// Completes and claims as `complete(...thenClaimFor:...lostLeaseLimit:)`
  /// does, with the default limit of lost leases.
  public func complete(
    job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp, thenClaimFor worker: WorkerID,
    queues: [LuaString]?, lease: Duration
  ) throws(StoreError) -> ClaimedJob? {
    try complete(
      job: job, token: token, outcome: outcome, at: now, thenClaimFor: worker, queues: queues, lease: lease,
      lostLeaseLimit: QueueLimits.defaultLostLeaseLimit)
  }
}

extension QueueStore {
  /// Submits a job whose first claim is attempt 1.
  public func enqueue(queue: LuaString, action: LuaString, input: [UInt8], policy: QueuePolicy, at now: StoreTimestamp)
    throws(StoreError) -> EnqueuedJob
  {
    try enqueue(queue: queue, action: action, input: input, policy: policy, firstAttempt: 1, at: now)
  }
}
