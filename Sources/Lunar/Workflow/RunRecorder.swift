import LuaKit
import LunarStore

/// A workflow run's link to its store: the run's id, the steps waiting to be
/// committed, and the earlier run a resume takes outputs from. Steps that end
/// in the same turn of the loop are committed in one transaction (group
/// commit); the runner releases a step's dependents only after its commit.
final class RunRecorder {
  /// The store the run is recorded in.
  let store: any RunStore
  /// The run's id in the store.
  let run: RunID
  /// This process's fencing token for the run: every commit carries it.
  let token: ClaimToken
  /// The steps of the run this one resumes, by name; empty if none. For an
  /// adopted run, its own committed steps over those of the run it resumes.
  let previous: [LuaString: StepRecord]
  /// The run this one resumes, if any.
  let resumes: RunID?
  /// The durable jobs the resumed run's steps waited for, by step name.
  private let previousJobs: [LuaString: StepJob]
  /// True for a run a worker handed over (claimed or took over).
  private let continuesItself: Bool
  /// The steps of `previous` this run recorded itself (an adopted run's
  /// committed steps): one reused from them is already recorded as it is.
  private let ownSteps: Set<LuaString>
  /// The steps a submitted resume runs again anyway (`lunar submit --force`).
  let forced: [LuaString]
  /// The steps an adopted run's lost owner was running at its last
  /// heartbeat and never recorded: each lost one attempt.
  let lostAttempts: Set<LuaString>
  private var batch: [StepRecord] = []
  private var logs: [StepLogChunk] = []
  private var committed: [(StoreError?) -> Void] = []

  /// Begins recording `run` in `store`, resuming the steps of `previous`
  /// and the durable jobs `previousJobs` they waited for.
  convenience init(store: any RunStore, run: NewRun, previous: [StepRecord], previousJobs: [StepJob] = []) throws(StoreError) {
    let id = try store.beginRun(run)
    try self.init(
      store: store, run: id, token: ClaimToken(1), resumes: previous.isEmpty ? nil : run.resumedFrom, previous: previous,
      previousJobs: previousJobs, ownSteps: [], ownJobs: [], continuesItself: false, lostAttempts: [], forced: [])
  }

  /// What an adopted run resumes: a submission's earlier run (`lunar
  /// submit --resume RUN`), its steps and durable jobs, and the steps it
  /// runs again anyway.
  struct Resumed {
    var run: RunID
    var steps: [StepRecord]
    var jobs: [StepJob]
    var forced: [LuaString]
  }

  /// Goes on recording the run `lease` holds, adopted from the worker that
  /// claimed it or took it over: its committed `steps` are reused and the
  /// durable jobs `jobs` they waited for are waited for again; the steps
  /// its lost owner was `running` lost an attempt each. A submitted resume
  /// also reuses the steps of the run it `resumed` that it has not recorded.
  convenience init(
    store: any RunStore, adopted lease: RunLease, steps: [StepRecord], jobs: [StepJob], running: [LuaString],
    resumed: Resumed? = nil
  ) throws(StoreError) {
    let recorded = Set(steps.map(\.name))
    let fresh = steps.isEmpty && running.isEmpty
    try self.init(
      store: store, run: lease.run, token: lease.token, resumes: fresh ? resumed?.run : lease.run,
      previous: (resumed?.steps ?? []) + steps, previousJobs: (resumed?.jobs ?? []) + jobs, ownSteps: recorded,
      ownJobs: Set(jobs.map(\.name)),
      continuesItself: true, lostAttempts: Set(running.filter { !recorded.contains($0) }), forced: resumed?.forced ?? [])
  }

  /// `previous` and `previousJobs` in order, a later one of a name over an
  /// earlier; `ownSteps` and `ownJobs` are already recorded for this run.
  private init(
    store: any RunStore, run: RunID, token: ClaimToken, resumes: RunID?, previous: [StepRecord], previousJobs: [StepJob],
    ownSteps: Set<LuaString>, ownJobs: Set<LuaString>, continuesItself: Bool, lostAttempts: Set<LuaString>, forced: [LuaString]
  ) throws(StoreError) {
    self.lostAttempts = lostAttempts
    self.store = store
    self.run = run
    self.token = token
    self.resumes = resumes
    self.continuesItself = continuesItself
    self.forced = forced
    var byName: [LuaString: StepRecord] = [:]
    for step in previous { byName[step.name] = step }
    self.previous = byName
    self.ownSteps = ownSteps
    var latest: [LuaString: StepJob] = [:]
    for job in previousJobs { latest[job.name] = job }
    var jobs: [LuaString: StepJob] = [:]
    // A step the resumed run finished needs its job no more; one it left
    // running, or recorded as failed when the run was stopped, may still
    // have its job waiting or running (or finished meanwhile).
    for job in latest.values where !(byName[job.name].map { $0.status == .succeeded || $0.status == .reused } ?? false) {
      jobs[job.name] = job
      // This run holds them from its start, so a run that resumes it
      // finds them even if it is interrupted before its steps do.
      if !ownJobs.contains(job.name) { try store.recordStepJob(job, of: run) }
    }
    self.previousJobs = jobs
  }

  /// The durable job the resumed run left step `name` waiting for, with
  /// the same fingerprint: the step had not ended when that run stopped.
  func unfinishedJob(of name: LuaString, fingerprint: Fingerprint) -> StepJob? {
    guard let job = previousJobs[name], job.fingerprint == fingerprint else { return nil }
    return job
  }

  /// Records, now, that a step of this run waits for a durable job.
  func record(_ job: StepJob) throws(StoreError) {
    try store.recordStepJob(job, of: run)
  }

  /// The earlier output of step `name` if it succeeded (or was reused) with
  /// the same input fingerprint and the same code.
  func reusableOutput(of name: LuaString, fingerprint: Fingerprint, code: Fingerprint?) -> [LuaValue]? {
    guard let step = previous[name], step.status == .succeeded || step.status == .reused,
      step.fingerprint == fingerprint, step.code == code
    else { return nil }
    return step.output
  }

  /// True while records wait for `commit`.
  var hasPending: Bool { !batch.isEmpty || !logs.isEmpty }

  /// Adds `record` to the next commit; `then` runs once it is durable, or
  /// with the error that kept it from being so.
  func add(_ record: StepRecord, then: @escaping (StoreError?) -> Void) {
    if record.status == .reused, ownSteps.contains(record.name) {
      then(nil)
      return
    }
    batch.append(record)
    committed.append(then)
  }

  /// Adds chunks of step logs to the next commit; a failure to store them
  /// does not fail the steps (the next commit's records say it).
  func add(logs chunks: [StepLogChunk]) {
    logs.append(contentsOf: chunks)
  }

  /// Commits every pending record (and log chunk) in one transaction, then runs their
  /// continuations, with the store's error if the commit failed.
  func commit() {
    let records = batch
    let chunks = logs
    let continuations = committed
    batch.removeAll(keepingCapacity: true)
    logs.removeAll()
    committed.removeAll(keepingCapacity: true)
    var failure: StoreError?
    do {
      try store.recordSteps(records, logs: chunks, of: run, owner: token)
    } catch {
      failure = error
    }
    for continuation in continuations { continuation(failure) }
  }

  /// Whether this run parks when it only waits: one a worker handed over.
  var parks: Bool { continuesItself }

  /// Parks the run until `wakeAt` (seconds since the epoch; nil: until a
  /// signal) or until one of the signals `awaiting` (its waits' names) is
  /// there, even one sent since a wait last read the store.
  func park(until wakeAt: Double?, awaiting: [LuaString]) throws(StoreError) {
    try store.park(
      run, owner: token, wakeAt: wakeAt.map { StoreTimestamp(microseconds: Int64(($0 * 1_000_000).rounded())) },
      awaiting: awaiting, at: .now)
  }

  /// Records how the run ended.
  func finish(_ status: RunStatus, stoppedBy: String? = nil) throws(StoreError) {
    try store.finishRun(run, status: status, stoppedBy: stoppedBy, owner: token, at: .now)
  }
}
