import LuaKit

/// Where workflow runs are recorded: runs, and the steps of each with their
/// outputs, durable once a call returns: in a SQLite file
/// (`SQLiteRunStore`) or on a PostgreSQL server (`PostgresRunStore`),
/// behind this one protocol.
///
/// Every call is synchronous and may block on I/O or on another process's
/// lock (up to the store's busy timeout).
public protocol RunStore: Sendable {
  /// Where the store is, for messages (`sqlite:/home/ada/.local/state/lunar/lunar.db`).
  var location: String { get }

  /// Records a new run, status `running`, held by its process (token 1)
  /// until `run.startedAt + run.lease`, and returns its id.
  func beginRun(_ run: NewRun) throws(StoreError) -> RunID

  /// Records the results of several steps of `run` and chunks of their
  /// logs in one transaction: all of them are durable when this returns, or
  /// none is. A step recorded again (a retry) replaces its earlier record;
  /// log chunks are only ever added. With an `owner` token, the commit is
  /// fenced: it is refused unless that token is still the run's and the run
  /// is running.
  /// - Throws: `.staleOwner` (nothing recorded) for a token that is no
  ///   longer the run's; `.noSuchRun`.
  func recordSteps(_ steps: [StepRecord], logs: [StepLogChunk], of run: RunID, owner: ClaimToken?) throws(StoreError)

  /// The stored log chunks of `run` (of step `step` and attempt `attempt`
  /// if given) stored after the chunk `after` (0 for all), in the order
  /// they were stored.
  func stepLogs(of run: RunID, step: LuaString?, attempt: Int?, after: Int64) throws(StoreError) -> [StepLogChunk]

  /// Extends the lease of the owner `owner` of `run` to `now + lease`, and
  /// says whether someone asked to cancel the run.
  /// - Throws: `.staleOwner` when `owner` no longer holds the run (it was
  ///   taken over, or it finished); `.noSuchRun`.
  /// Records the steps `running` now, for `runs show` of a run that stops.
  func heartbeat(_ run: RunID, owner: ClaimToken, lease: Duration, running: [LuaString], at now: StoreTimestamp)
    throws(StoreError) -> RunHeartbeat

  /// Takes over `run` for the process `pid` on `host` if its owner's lease
  /// expired before `now` (or it has none: a run of an older Lunar), in one
  /// atomic step: the run's token becomes one more than its last, so the
  /// old owner's commits are refused from then on. Nil when the run is not
  /// running or its lease is still held (someone else took it first).
  /// - Throws: `.noSuchRun`.
  func takeOver(_ run: RunID, host: String, pid: Int32, lease: Duration, at now: StoreTimestamp) throws(StoreError)
    -> RunLease?

  /// Takes `run` over from the holder of `token` (a worker that claimed it
  /// hands it to the process it starts), whatever its lease, and names its
  /// workflow and plan as that process loaded them: the token becomes one
  /// more, for the process `pid` on `host`, until `now + lease`. Nil when
  /// `token` no longer holds the run or it is not running.
  /// - Throws: `.noSuchRun`.
  func adopt(
    _ run: RunID, from token: ClaimToken, workflow: LuaString, plan: RunPlan, host: String, pid: Int32, lease: Duration,
    at now: StoreTimestamp
  ) throws(StoreError) -> RunLease?

  /// Parks `run`, held by `owner`: it only waits (sleeps, signals), so its
  /// process leaves it. It is `parked` until `wakeAt` (nil: until a signal)
  /// or until one of the signals its waits are `awaiting` is there (even
  /// one sent before it parked, which they had not seen yet); then a worker
  /// takes it again (`SubmittedRunStore.claimDueParkedRun`). A signal a
  /// wait already took, or one nothing waits for yet, does not wake it.
  /// - Throws: `.staleOwner` for a token that no longer holds the run; `.noSuchRun`.
  func park(_ run: RunID, owner: ClaimToken, wakeAt: StoreTimestamp?, awaiting: [LuaString], at now: StoreTimestamp)
    throws(StoreError)

  /// Asks the owner of `run` to cancel it, `by` whom (`request`); a run
  /// whose lease expired is recorded as cancelled at once.
  /// - Throws: `.runNotCancellable` for a run that already finished (the
  ///   message says how); `.noSuchRun`.
  func requestCancel(_ run: RunID, by: String, at now: StoreTimestamp) throws(StoreError) -> CancelRequestOutcome

  /// Records that step `job.name` of `run` waits for a durable job,
  /// replacing any earlier record of that step; durable when this returns.
  /// - Throws: `.noSuchRun` for a run the store does not have.
  func recordStepJob(_ job: StepJob, of run: RunID) throws(StoreError)

  /// The durable jobs the steps of `run` waited for, by step name.
  func stepJobs(of run: RunID) throws(StoreError) -> [StepJob]

  /// Records how `run` ended (for a cancelled run, what stopped it) and
  /// ends its lease; fenced by `owner` as `recordSteps` is.
  /// - Throws: `.staleOwner` for an owner token that is no longer the run's; `.noSuchRun`.
  func finishRun(_ run: RunID, status: RunStatus, stoppedBy: String?, owner: ClaimToken?, at time: StoreTimestamp)
    throws(StoreError)

  /// The run with `id`, or nil.
  func run(_ id: RunID) throws(StoreError) -> RunRecord?

  /// The newest run, of `workflow` if given (and of `file` if given), or nil.
  func lastRun(workflow: LuaString?, file: String?) throws(StoreError) -> RunRecord?

  /// The recorded steps of `run`, in declaration order.
  func steps(of run: RunID) throws(StoreError) -> [StepRecord]

  /// The newest `limit` runs that `filter` lets through, newest first, with
  /// the counts of their steps.
  func runs(_ filter: RunFilter, limit: Int) throws(StoreError) -> [RunSummary]
}

extension RunStore {
  /// The newest `limit` runs, of `workflow` if given, newest first.
  public func runs(workflow: LuaString?, limit: Int) throws(StoreError) -> [RunSummary] {
    try runs(RunFilter(workflow: workflow), limit: limit)
  }

  /// A heartbeat that records no step as running.
  public func heartbeat(_ run: RunID, owner: ClaimToken, lease: Duration, at now: StoreTimestamp) throws(StoreError)
    -> RunHeartbeat
  {
    try heartbeat(run, owner: owner, lease: lease, running: [], at: now)
  }

  /// Records steps of `run` without fencing (a run no lease guards: tests,
  /// the steps carried over by `--from`).
  public func recordSteps(_ steps: [StepRecord], of run: RunID) throws(StoreError) {
    try recordSteps(steps, logs: [], of: run, owner: nil)
  }

  /// Records steps of `run` and their logs, without fencing.
  public func recordSteps(_ steps: [StepRecord], logs: [StepLogChunk], of run: RunID) throws(StoreError) {
    try recordSteps(steps, logs: logs, of: run, owner: nil)
  }

  /// Records steps of `run`, fenced by `owner`, with no logs.
  public func recordSteps(_ steps: [StepRecord], of run: RunID, owner: ClaimToken?) throws(StoreError) {
    try recordSteps(steps, logs: [], of: run, owner: owner)
  }

  /// Records how `run` ended, without fencing.
  public func finishRun(_ run: RunID, status: RunStatus, at time: StoreTimestamp) throws(StoreError) {
    try finishRun(run, status: status, stoppedBy: nil, owner: nil, at: time)
  }

  /// The run `reference` names (of `workflow`, for `last`, if given), or an
  /// error that says there is none.
  public func resolve(_ reference: RunReference, workflow: LuaString? = nil) throws(StoreError) -> RunRecord {
    switch reference {
    case .last:
      if let run = try lastRun(workflow: workflow, file: nil) { return run }
      let which = workflow.map { " of workflow '\($0.lossyString)'" } ?? ""
      throw StoreError(.noSuchRun, "no runs\(which) in \(location)")
    case .id(let id):
      if let run = try run(id) { return run }
      throw StoreError(.noSuchRun, "no run \(id) in \(location)")
    }
  }
}
