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

  /// Records a new run, status `running`, and returns its id.
  func beginRun(_ run: NewRun) throws(StoreError) -> RunID

  /// Records the results of several steps of `run` and chunks of their
  /// logs in one transaction: all of them are durable when this returns, or
  /// none is. A step recorded again (a retry) replaces its earlier record;
  /// log chunks are only ever added.
  func recordSteps(_ steps: [StepRecord], logs: [StepLogChunk], of run: RunID) throws(StoreError)

  /// The stored log chunks of `run` (of step `step` and attempt `attempt`
  /// if given) stored after the chunk `after` (0 for all), in the order
  /// they were stored.
  func stepLogs(of run: RunID, step: LuaString?, attempt: Int?, after: Int64) throws(StoreError) -> [StepLogChunk]

  /// Records that step `job.name` of `run` waits for a durable job,
  /// replacing any earlier record of that step; durable when this returns.
  /// - Throws: `.noSuchRun` for a run the store does not have.
  func recordStepJob(_ job: StepJob, of run: RunID) throws(StoreError)

  /// The durable jobs the steps of `run` waited for, by step name.
  func stepJobs(of run: RunID) throws(StoreError) -> [StepJob]

  /// Records how `run` ended.
  func finishRun(_ run: RunID, status: RunStatus, at time: StoreTimestamp) throws(StoreError)

  /// The run with `id`, or nil.
  func run(_ id: RunID) throws(StoreError) -> RunRecord?

  /// The newest run, of `workflow` if given (and of `file` if given), or nil.
  func lastRun(workflow: LuaString?, file: String?) throws(StoreError) -> RunRecord?

  /// The recorded steps of `run`, in declaration order.
  func steps(of run: RunID) throws(StoreError) -> [StepRecord]

  /// The newest `limit` runs, of `workflow` if given, newest first, with the
  /// counts of their steps.
  func runs(workflow: LuaString?, limit: Int) throws(StoreError) -> [RunSummary]
}

extension RunStore {
  /// Records the results of several steps of `run` in one transaction.
  public func recordSteps(_ steps: [StepRecord], of run: RunID) throws(StoreError) {
    try recordSteps(steps, logs: [], of: run)
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
