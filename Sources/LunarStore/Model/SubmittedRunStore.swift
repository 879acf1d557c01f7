import LuaKit

/// Where submitted runs wait for workers: a run recorded `queued`, taken
/// by one worker with one atomic change to `running`.
public protocol SubmittedRunStore: Sendable {
  /// Where the store is, for messages.
  var location: String { get }

  /// Records `submission` as a queued run; with a key another submission
  /// already used, returns that submission's run instead (`isNew` false).
  func submit(_ submission: RunSubmission) throws(StoreError) -> SubmittedRun

  /// The submitted run `id`, or nil if there is none or it was not submitted.
  func submittedRun(_ id: RunID) throws(StoreError) -> SubmittedRun?

  /// Takes the oldest queued run a worker may start, marking it `running`
  /// on `host`/`pid` and held by the caller (one more fencing token, until
  /// `time + lease`) in one statement, or nil if none waits. A queued run of
  /// a `queue-one` schedule waits while another run of its schedule runs.
  func claimQueuedRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError) -> SubmittedRun?

  /// Takes over the oldest submitted run whose owner's lease expired before
  /// `time` (its worker or its process died), as `claimQueuedRun` takes a
  /// queued one: one more fencing token, so the old owner's commits are
  /// refused from then on. Nil if no submitted run lost its owner.
  func takeOverExpiredRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError)
    -> SubmittedRun?

  /// Takes the oldest parked run that is due at `time` (its `wakeAt`
  /// passed, or a signal was sent to it since it parked), as
  /// `claimQueuedRun` takes a queued one; nil if none is due.
  func claimDueParkedRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError) -> SubmittedRun?
}
