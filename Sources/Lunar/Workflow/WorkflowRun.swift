import LuaKit
import LunarStore

/// One run of a workflow, on the loop thread: the runner. The dispatcher
/// decides which steps start; each attempt of a step is a task running the
/// Lua body workflow.lua gives (condition, input, action); retries, timeouts
/// and the store's commits are kept here; reporters hear every event. Per
/// step it does constant work plus the step's edges. A step that fans out
/// (`map`) adds its children as steps past the declared ones, each run,
/// retried, recorded and resumed on its own.
final class WorkflowRun {
  /// What a step's Lua body returns first: how its attempt went.
  enum BodyOutcome: Int64 {
    /// The action ran and returned; `accept` has its output.
    case ran = 1
    /// `prepare` gave an earlier run's output.
    case reused = 2
    /// Its condition (`if`) was false.
    case skipped = 3
    /// Its condition or input (`with`) raised; the message follows. Not retried.
    case failedBeforeRunning = 4
  }

  /// The workflow's name.
  let workflow: LuaString
  /// Every step, in declaration order, then the children of the steps that
  /// fanned out, in the order they did.
  private(set) var steps: [WorkflowStep]
  private let plan: WorkflowPlan
  private var dispatcher: StepDispatcher
  /// The dispatcher's decisions' buffer, kept between calls of `advance`.
  private var spareDecisions: [StepDispatcher.Decision] = []
  /// Held strongly (it holds no run strongly): an unowned reference was
  /// checked at each of a step's several uses.
  private let scheduler: Scheduler
  private let clock: RuntimeClock
  private let reporters: [any WorkflowReporter]
  private let recorder: RunRecorder?
  /// The most bytes kept of a step attempt's log; nil when logs are not kept.
  private let logLimit: Int?
  /// The logs of the attempts running now, by step.
  private var logs: [Int: StepLog] = [:]
  /// The timer that stores what running attempts printed meanwhile.
  private var logFlush: Int?
  /// `body(position, attempt)`, positions from 1.
  private let body: LuaReference
  /// `record(position, message)`: tells the Lua side (`ctx.steps`) a step failed.
  private let record: LuaReference
  /// A thread that is never resumed, whose stack the runner pushes on to spawn tasks.
  private let launcher: LuaReference
  private let launcherThread: LuaThread

  private var attempts: [Int]
  /// Attempts a step made in the run this one resumes, before the one
  /// whose durable job it waits for again: its attempts go on from there.
  private var earlierAttempts: [Int]
  private var startedAt: [Double?]
  private var reports: [StepReport?]
  /// Outputs `accept` took from an attempt that has not ended yet.
  private var accepted: [[LuaValue]?]
  /// Outputs of finished steps, kept for their dependents' fingerprints (with a store only).
  private var outputs: [[LuaValue]?]
  private var fingerprints: [Fingerprint?]
  /// Each step's code fingerprint (workflow.lua's `step_code`); nil without a store.
  private var codes: [Fingerprint?]
  /// The steps that fanned out, by position.
  private var fanOuts: [Int: FanOut] = [:]

  /// A step that fanned out: its children's positions, and what is known
  /// of how they ended.
  private struct FanOut {
    let children: Range<Int>
    var unfinished: Int
    var failed: [Int] = []
    /// What stands for the outputs of the steps it needs in each child's fingerprint.
    var needsFingerprint: Fingerprint?
    /// Completed when the last child has ended; the step's body waits for it.
    let wait: Wait
  }
  /// Steps `--force` reruns.
  private let forced: Set<Int>
  /// Why a step of a resumed run runs again rather than being reused.
  private var rerunReasons: [String?]
  /// Attempts the resumed run made of a step it left failed: this run's
  /// attempts of it are numbered on from there, with a budget of their own.
  private var resumedAttempts: [Int]
  /// Coroutines of steps that are done, which no Lua code saw, for the
  /// next steps to run on (a new coroutine per step was a fifth of a
  /// no-op step's cost: its stack and call frames allocated, grown, freed).
  /// Let go when the run finishes.
  private var spareThreads: [ReusableThread] = []
  /// The most coroutines kept: about as many as run at once.
  static let spareThreadLimit = 8
  /// Steps' running tasks, by position, to cancel them with the run.
  private var live: [LuaTask?]
  /// How many of `live` are running.
  private var liveCount = 0
  private let runStartedAt: Double
  private var commitScheduled = false
  private var abandoned = false
  private var finished = false
  /// Why the run is being cancelled, once it is: no step starts or retries
  /// from then on, running ones are cancelled, and the run ends when the
  /// last of them has.
  private(set) var cancellation: RunCancellation?
  /// The retry timers waiting, by step.
  private var retryTimers: [Int: Int] = [:]
  /// The steps waiting in a sleep or a wait now, with when the wait ends
  /// (seconds since the epoch; nil: only a signal ends it).
  private var waiting: [Int: Double?] = [:]
  /// The steps waiting for a signal, with its name: if the run parks, that
  /// signal wakes it, and no other (not one a wait already took).
  private var awaitedSignals: [Int: LuaString] = [:]
  /// Whether the run parks when all it does is wait (a run a worker
  /// handed over, on the real clock).
  var parks = false
  /// Whether `workflow.run`'s host call returns each step's status,
  /// attempts and rerun reason, or only whether the run succeeded and
  /// which steps failed it (a workflow a main chunk returned: nobody reads them).
  var returnsStepResults = true
  /// The shortest wait a run parks for: a shorter one is waited out here.
  static let parkingThreshold = 2.0
  /// Failures being told to the Lua side (`fail`), not concluded yet.
  private var failing = 0
  /// The steps running now, for the watch's heartbeats.
  let runningSteps = RunningSteps()
  /// The wait of the code that called `workflow.run`, completed with the results.
  let wait: Wait
  /// Called once when the run ends.
  var onFinish: (() -> Void)?

  /// A run of `steps` selected by `plan`, at most `jobs` at once, whose
  /// attempts run `body` on tasks spawned from `launcher`'s stack;
  /// `earlierOutputs` are the outputs of unselected steps (`--from`);
  /// `dispatcherSteps` are `WorkflowStep.dispatcherSteps(steps)`.
  init(
    workflow: LuaString, steps: [WorkflowStep], dispatcherSteps: [StepDispatcher.Step], plan: WorkflowPlan, jobs: Int,
    scheduler: Scheduler, clock: RuntimeClock,
    reporters: [any WorkflowReporter], recorder: RunRecorder?, logLimit: Int?, earlierOutputs: [Int: [LuaValue]],
    codes: [Fingerprint?] = [], forced: Set<Int> = [],
    body: LuaReference, record: LuaReference, launcher: LuaReference, launcherThread: LuaThread
  ) {
    self.workflow = workflow
    self.steps = steps
    self.plan = plan
    dispatcher = StepDispatcher(steps: dispatcherSteps, plan: plan, jobs: jobs)
    self.scheduler = scheduler
    self.clock = clock
    self.reporters = reporters
    self.recorder = recorder
    self.logLimit = recorder == nil ? nil : logLimit
    self.body = body
    self.record = record
    self.launcher = launcher
    self.launcherThread = launcherThread
    attempts = Array(repeating: 0, count: steps.count)
    live = Array(repeating: nil, count: steps.count)
    earlierAttempts = Array(repeating: 0, count: steps.count)
    startedAt = Array(repeating: nil, count: steps.count)
    reports = Array(repeating: nil, count: steps.count)
    accepted = Array(repeating: nil, count: steps.count)
    outputs = Array(repeating: nil, count: steps.count)
    for (position, output) in earlierOutputs { outputs[position] = output }
    fingerprints = Array(repeating: nil, count: steps.count)
    self.codes = codes.count == steps.count ? codes : Array(repeating: nil, count: steps.count)
    self.forced = forced
    rerunReasons = Array(repeating: nil, count: steps.count)
    resumedAttempts = Array(repeating: 0, count: steps.count)
    if let recorder, recorder.resumes != nil {
      for (position, step) in steps.enumerated() {
        if let earlier = recorder.previous[step.name], earlier.status == .failed {
          resumedAttempts[position] = earlier.attempts
          earlierAttempts[position] = earlier.attempts
        }
        if recorder.lostAttempts.contains(step.name) {
          resumedAttempts[position] += 1
          earlierAttempts[position] += 1
        }
      }
    }
    runStartedAt = clock.now
    wait = Wait(subject: "workflow \(workflow.lossyString)")
    wait.onCancel = { [weak self] in self?.abandon() }
  }

  /// Says why each step of a resumed run runs again, then starts the
  /// steps that need nothing.
  func start() {
    if let recorder, let resumed = recorder.resumes {
      let reasons = ResumeReasons(
        steps: steps, plan: plan, previous: recorder.previous, codes: codes, forced: forced, resumed: resumed)
      rerunReasons = reasons.reasons
      for group in plan.groups {
        for step in group { if let reason = rerunReasons[step] { reportRerun(step, reason) } }
      }
    }
    advance()
  }

  /// Why each selected step reruns (nil: reused unless its input changed),
  /// by position; for `workflow.execute`'s results.
  var reasons: [String?] { rerunReasons }

  private func reportRerun(_ step: Int, _ reason: String) {
    for reporter in reporters { reporter.stepReruns(steps[step].name, reason: reason) }
    if scheduler.trace.isEnabled {
      scheduler.trace.emit(
        "workflow.step.reruns",
        [.init("workflow", .string(workflow)), .init("step", .string(steps[step].name)), .init("reason", .string(LuaString(reason)))])
    }
  }

  // MARK: Called by the step's Lua body

  /// Called by an attempt that is about to run its action with `input`:
  /// the step has started. Returns the output of an earlier run to reuse
  /// instead, when the store has one for the same inputs.
  func prepare(_ step: Int, input: LuaValue) throws(LuaValueCodecError) -> [LuaValue]? {
    if let recorder {
      var identity: [LuaValue] = [.string(steps[step].uses ?? steps[step].name), input]
      if let parent = dispatcher.parent(of: step) {
        // One fingerprint of the needs' outputs stands for them: a fan-out
        // of n children encodes them once, not n times. The other items
        // are not part of it: a child is reused when items are added.
        identity.append(.string(LuaString(bytes: try needsFingerprint(of: parent).bytes)))
      } else {
        identity.append(contentsOf: needsIdentity(of: step))
      }
      let fingerprint = try Fingerprint(of: identity)
      fingerprints[step] = fingerprint
      if recorder.resumes != nil && rerunReasons[step] == nil {
        // A need that ran again (its input changed) reruns its dependents.
        if let need = steps[step].needs.first(where: { plan.selected[$0] && rerunReasons[$0] != nil }) {
          rerunReasons[step] = "needs \(steps[need].name.lossyString)"
        } else if let output = recorder.reusableOutput(of: steps[step].name, fingerprint: fingerprint, code: codes[step]) {
          accepted[step] = output
          return output
        } else {
          rerunReasons[step] = "input changed"
        }
        if let reason = rerunReasons[step] { reportRerun(step, reason) }
      } else if recorder.resumes == nil,
        let output = recorder.reusableOutput(of: steps[step].name, fingerprint: fingerprint, code: codes[step])
      {
        accepted[step] = output
        return output
      }
    }
    markStarted(step)
    return nil
  }

  /// The outputs of the steps `step` needs, each after its count of values.
  private func needsIdentity(of step: Int) -> [LuaValue] {
    var identity: [LuaValue] = []
    for need in steps[step].needs {
      let output = outputs[need] ?? []
      identity.append(.integer(Int64(output.count)))
      identity.append(contentsOf: output)
    }
    return identity
  }

  /// The fingerprint of the outputs step `parent`, which fans out, needs;
  /// made once, for its first child.
  private func needsFingerprint(of parent: Int) throws(LuaValueCodecError) -> Fingerprint {
    if let fingerprint = fanOuts[parent]?.needsFingerprint { return fingerprint }
    let fingerprint = try Fingerprint(of: needsIdentity(of: parent))
    fanOuts[parent]?.needsFingerprint = fingerprint
    return fingerprint
  }

  /// Whether the body calls `prepare`, which says the step started; for
  /// the others, `launch` says it.
  private func bodyPrepares(_ step: Int) -> Bool { recorder != nil || steps[step].hasCondition }

  private func markStarted(_ step: Int) {
    let now = clock.now
    startedAt[step] = now
    let name = steps[step].name
    for reporter in reporters { reporter.stepStarted(name, at: now) }
    emit("workflow.step.started", step)
  }

  /// The deadline, in seconds since the epoch, of sleep step `step`: the
  /// one the run this one resumes recorded for it (same inputs), else
  /// `proposed`; recorded now, so that a later resume finds it too.
  func waitDeadline(_ step: Int, proposed: Double) throws(StoreError) -> Double {
    guard let recorder else { return proposed }
    return try recorder.waitDeadline(of: steps[step].name, fingerprint: fingerprints[step], proposed: proposed)
  }

  /// Step `step` waits until `deadline` (nil: for a signal only); a run
  /// that parks parks now if nothing else runs.
  func beginWait(_ step: Int, until deadline: Double?) {
    waiting[step] = .some(deadline)
    considerParking()
  }

  /// Step `step` stopped waiting.
  func endWait(_ step: Int) {
    waiting[step] = nil
    awaitedSignals[step] = nil
  }

  /// Parks the run when every running step waits, no other step can start
  /// and the nearest deadline is at least `parkingThreshold` away.
  private func considerParking() {
    guard parks, cancellation == nil, !finished, !abandoned, !waiting.isEmpty, failing == 0, retryTimers.isEmpty,
      !dispatcher.hasReady, liveCount == waiting.count, waiting.keys.allSatisfy({ live[$0] != nil }), !commitScheduled
    else { return }
    let deadlines = waiting.values.compactMap { $0 }
    let wakeAt = deadlines.min()
    if let wakeAt, wakeAt - clock.now < Self.parkingThreshold { return }
    cancel(.parked(wakeAt: wakeAt))
  }

  /// The value of signal `name` sent to this run (or the one it resumes),
  /// or nil if none was or the run is not recorded in a store; `step`
  /// waits for it.
  func signal(_ name: LuaString, for step: Int) throws(StoreError) -> LuaValue?? {
    guard let recorder else { return nil }
    let sent = try recorder.signal(name)
    if sent == nil { awaitedSignals[step] = name }
    return sent
  }

  /// The durable job an interrupted run that this one resumes left `step`
  /// waiting for, if the step's inputs are the same (called on its first
  /// attempt here, after `prepare`): the step waits for it again, and its
  /// attempts go on from that run's.
  func unfinishedJob(_ step: Int) -> StepJob? {
    guard let recorder, let fingerprint = fingerprints[step],
      let job = recorder.unfinishedJob(of: steps[step].name, fingerprint: fingerprint)
    else { return nil }
    earlierAttempts[step] = job.attempt - 1
    // The interrupted run's attempt goes on: its budget is that run's.
    resumedAttempts[step] = 0
    attempts[step] = job.attempt
    return job
  }

  /// Records that `step`'s attempt `attempt` (of this run) submitted the
  /// durable job `job`, before it waits: a resumed run waits for it again.
  func submitted(_ step: Int, attempt: Int, job: JobID) throws(StoreError) {
    try recorder?.record(
      StepJob(name: steps[step].name, attempt: earlierAttempts[step] + attempt, job: job, fingerprint: fingerprints[step]))
  }

  /// Takes the output of an attempt whose action returned.
  func accept(_ step: Int, output: [LuaValue]) {
    accepted[step] = output
  }

  // MARK: Running

  private func advance() {
    guard !abandoned else { return }
    if cancellation != nil {
      if liveCount == 0 && failing == 0 && retryTimers.isEmpty && !commitScheduled { finish() }
      return
    }
    // Taken, so a decision that runs Swift code cannot share the buffer.
    var decisions = spareDecisions
    spareDecisions = []
    dispatcher.next(into: &decisions)
    for decision in decisions {
      switch decision {
      case .start(let step):
        launch(step, attempt: 1)
      case .skip(let step, let cause):
        conclude(step, .skipped, detail: "needs \(steps[cause].name.lossyString)", decided: true)
      }
    }
    decisions.removeAll(keepingCapacity: true)
    spareDecisions = decisions
    if dispatcher.isFinished { finish() } else if !waiting.isEmpty { considerParking() }
  }

  private func launch(_ step: Int, attempt: Int) {
    attempts[step] = earlierAttempts[step] + attempt
    if attempt == 1 && !bodyPrepares(step) { markStarted(step) }
    let name = steps[step].name
    let thread = launcherThread
    body.push(on: thread.L)
    thread.push(step + 1)
    thread.push(attempt)
    // The attempt as ctx.attempt counts it: on from the resumed run's.
    thread.push(attempts[step])
    // The launcher has no frames: a step's task has no origin to find.
    let task = scheduler.spawn(
      on: thread.L, function: thread.top - 3, arguments: 3, label: .named("step ", name), origin: "",
      reusing: spareThreads.popLast())
    task.journalScope = name
    if let logLimit {
      let log = StepLog(step: name, position: recordedPosition(step), attempt: attempts[step], limit: logLimit)
      log.onPending = { [weak self] in self?.scheduleLogFlush() }
      task.stepLog = log
      logs[step] = log
    }
    thread.pop(4)
    live[step] = task
    liveCount += 1
    // Only the store's heartbeats read which steps run.
    if recorder != nil { runningSteps.started(step, name) }
    if let timeout = steps[step].timeout, !steps[step].fansOut {
      // Whether the attempt waits or computes (see Scheduler.setDeadline).
      let message = "step \"\(steps[step].name.lossyString)\": timed out after \(LuaValue.number(timeout).formattedSeconds)s"
      scheduler.setDeadline(task, after: timeout, message: message)
    }
    task.onFinish.append { [weak self] task in
      guard let self else { return }
      live[step] = nil
      liveCount -= 1
      if let left = task.leftThread {
        task.leftThread = nil
        if spareThreads.count < Self.spareThreadLimit && !finished { spareThreads.append(left) }
      }
      if !waiting.isEmpty { waiting[step] = nil }
      // A run that parks still needs the signal; one that goes on does not
      // (a wait that timed out).
      if case .parked? = cancellation {} else { awaitedSignals[step] = nil }
      if recorder != nil { runningSteps.ended(step) }
      attemptEnded(step, attempt, task)
    }
  }

  private func attemptEnded(_ step: Int, _ attempt: Int, _ task: LuaTask) {
    task.observed = true
    if !logs.isEmpty, let log = logs.removeValue(forKey: step), let recorder {
      // Committed with the step's record, or alone for an attempt retried.
      recorder.add(logs: log.finish())
      scheduleCommit()
    }
    if task.status == .done {
      let (outcome, message) = bodyOutcome(of: task)
      switch outcome {
      case .ran: succeed(step, output: accepted[step] ?? [], as: .succeeded)
      case .reused: succeed(step, output: accepted[step] ?? [], as: .reused)
      case .skipped: conclude(step, .skipped, detail: "condition false")
      case .failedBeforeRunning: fail(step, message ?? "failed")
      }
      return
    }
    let message = task.errorMessage ?? "failed"
    let counted = attempts[step]
    // A step the resumed run left failed has a budget of its own here.
    let spent = counted - resumedAttempts[step]
    // A step that fans out gives its retries to its children.
    let allowed = steps[step].fansOut ? 1 : steps[step].attempts
    guard spent < allowed, !abandoned, cancellation == nil else { return fail(step, message) }
    let delay = steps[step].backoff * Double(1 << min(max(spent - 1, 0), 52))
    for reporter in reporters { reporter.attemptFailed(steps[step].name, attempt: counted, error: message, retryingAfter: delay) }
    if scheduler.trace.isEnabled {
      scheduler.trace.emit(
        "workflow.step.attempt_failed",
        [
          .init("workflow", .string(workflow)), .init("step", .string(steps[step].name)),
          .init("attempt", .integer(Int64(counted))), .init("error", .string(LuaString(message))),
        ])
    }
    retryTimers[step] = scheduler.timers.schedule(at: clock.deadline(after: delay)) { [weak self] in
      guard let self else { return }
      retryTimers[step] = nil
      if abandoned { return fail(step, message) }
      launch(step, attempt: attempt + 1)
    }
  }

  /// The body's first result and, for a failure before running, its message.
  private func bodyOutcome(of task: LuaTask) -> (BodyOutcome, String?) {
    let thread = launcherThread
    return thread.withStackScope {
      let top = thread.top
      let count = task.pushOutcome(on: thread.L)
      guard count >= 1 else { return (.failedBeforeRunning, "not enough memory") }
      let outcome = thread.integer(at: top + 1).flatMap(BodyOutcome.init(rawValue:)) ?? .failedBeforeRunning
      return (outcome, count >= 2 ? thread.string(at: top + 2) : nil)
    }
  }

  private func succeed(_ step: Int, output: [LuaValue], as status: StepReport.Status) {
    accepted[step] = nil
    guard let recorder else { return conclude(step, status) }
    outputs[step] = output
    let record = StepRecord(
      name: steps[step].name, position: recordedPosition(step), status: status == .reused ? .reused : .succeeded,
      attempts: status == .reused ? 0 : attempts[step], startedAt: startedAt[step].map(timestamp),
      finishedAt: timestamp(clock.now), fingerprint: fingerprints[step], code: codes[step], output: output)
    recorder.add(record) { [weak self] error in
      guard let self else { return }
      if let error {
        if error.kind == .staleOwner { cancel(.lostOwnership(error.message)) }
        fail(step, "step \"\(steps[step].name.lossyString)\": its output could not be recorded: \(error)")
      } else {
        conclude(step, status)
      }
    }
    scheduleCommit()
  }

  /// Tells the Lua side the step failed, then concludes it.
  private func fail(_ step: Int, _ message: String) {
    failing += 1
    let thread = launcherThread
    record.push(on: thread.L)
    thread.push(step + 1)
    thread.push(message)
    let task = scheduler.spawn(
      on: thread.L, function: thread.top - 2, arguments: 2, label: "record \(steps[step].name.lossyString)", traced: false)
    thread.pop(3)
    task.onFinish.append { [weak self] task in
      guard let self else { return }
      failing -= 1
      task.observed = true
      // A parked run's waiting steps did not fail: they wait again when
      // the run is taken again.
      if case .parked? = cancellation {
        conclude(step, .skipped, detail: "parked", records: false)
        return
      }
      if let recorder {
        recorder.add(
          StepRecord(
            name: steps[step].name, position: recordedPosition(step), status: .failed, attempts: attempts[step],
            startedAt: startedAt[step].map(timestamp), finishedAt: timestamp(clock.now), fingerprint: fingerprints[step],
            code: codes[step], error: LuaString(message))
        ) { _ in }
        scheduleCommit()
      }
      conclude(step, .failed, detail: message)
    }
  }

  /// Reports how a step ended and lets the dispatcher go on; `decided`
  /// steps were skipped by the dispatcher itself.
  private func conclude(
    _ step: Int, _ status: StepReport.Status, detail: String? = nil, decided: Bool = false, records: Bool = true
  ) {
    let duration = startedAt[step].map { clock.now - $0 } ?? 0
    let report = StepReport(
      name: steps[step].name, status: status, attempts: status == .reused || status == .skipped ? 0 : attempts[step],
      duration: duration, detail: detail, continuesOnError: steps[step].continuesOnError)
    reports[step] = report
    for reporter in reporters { reporter.stepFinished(report) }
    if scheduler.trace.isEnabled {
      var fields: [TraceEvent.Field] = [
        .init("workflow", .string(workflow)), .init("step", .string(steps[step].name)),
        .init("attempts", .integer(Int64(report.attempts))),
      ]
      if let detail, status == .failed { fields.append(.init("error", .string(LuaString(detail)))) }
      scheduler.trace.emit("workflow.step.\(status.rawValue)", fields)
    }
    if status == .skipped, records, let recorder {
      recorder.add(
        StepRecord(name: steps[step].name, position: recordedPosition(step), status: .skipped, attempts: report.attempts)
      ) { _ in }
      scheduleCommit()
    }
    guard !decided else { return }
    let outcome: StepDispatcher.Outcome =
      switch status {
      case .succeeded: .succeeded
      case .reused: .reused
      case .failed: .failed
      case .skipped: .skipped
      }
    dispatcher.finished(step, outcome)
    if let parent = dispatcher.parent(of: step) { childEnded(step, of: parent, outcome) }
    advance()
  }

  // MARK: Fan-out

  /// Where a step's records sit in the store: a child at its parent's
  /// declaration position (`runs show` lists it under the parent).
  private func recordedPosition(_ step: Int) -> Int { dispatcher.parent(of: step) ?? step }

  /// Step `parent`, running, fans out into `count` children, named
  /// `parent[1]`… and added at the positions from the one returned; they
  /// start once the step's body has gone on to `children(of:)`. Each is
  /// judged for a resume as a declared step is.
  func fanOut(_ parent: Int, count: Int) -> Int {
    let children = dispatcher.fanOut(parent, count: count, maxParallel: steps[parent].maxParallel)
    for index in 0..<count {
      let child = steps[parent].child(index + 1)
      steps.append(child)
      attempts.append(0)
      live.append(nil)
      startedAt.append(nil)
      reports.append(nil)
      accepted.append(nil)
      outputs.append(nil)
      fingerprints.append(nil)
      codes.append(codes[parent])
      var earlier = 0
      var reason: String?
      if let recorder, let resumed = recorder.resumes {
        let record = recorder.previous[child.name]
        if record?.status == .failed { earlier = record?.attempts ?? 0 }
        if recorder.lostAttempts.contains(child.name) { earlier += 1 }
        let rerunNeed = child.needs.first { plan.selected[$0] && rerunReasons[$0] != nil }
        reason = ResumeReasons.reason(
          earlier: record, code: codes[parent], forced: forced.contains(parent),
          rerunNeed: rerunNeed.map { steps[$0].name }, resumed: resumed)
      }
      earlierAttempts.append(earlier)
      resumedAttempts.append(earlier)
      rerunReasons.append(reason)
      if let reason { reportRerun(steps.count - 1, reason) }
    }
    for reporter in reporters { reporter.stepFannedOut(steps[parent].name, children: count) }
    let wait = Wait(subject: "the children of step \(steps[parent].name.lossyString)")
    fanOuts[parent] = FanOut(children: children, unfinished: count, wait: wait)
    if count == 0 { scheduler.complete(wait, .values([])) }
    // Started from the loop: the body names its children first.
    scheduler.later { [weak self] _ in self?.advance() }
    return children.lowerBound
  }

  /// What the body of a step that fanned out waits for: its last child's
  /// end; it fails if a child failed.
  func children(of parent: Int) -> Wait? { fanOuts[parent]?.wait }

  private func childEnded(_ child: Int, of parent: Int, _ outcome: StepDispatcher.Outcome) {
    guard var fan = fanOuts[parent] else { return }
    fan.unfinished -= 1
    if outcome == .failed || outcome == .skipped { fan.failed.append(child) }
    fanOuts[parent] = fan
    guard fan.unfinished == 0 else { return }
    if fan.failed.isEmpty { return scheduler.complete(fan.wait, .values([])) }
    let names = fan.failed.prefix(5).map { steps[$0].name.lossyString }.joined(separator: ", ")
    let more = fan.failed.count > 5 ? " and \(fan.failed.count - 5) more" : ""
    scheduler.complete(
      fan.wait,
      .failure(
        message: "step \"\(steps[parent].name.lossyString)\": \(fan.failed.count) of \(fan.children.count) "
          + "children failed: \(names)\(more)"))
  }

  /// The positions of the selected steps in report order: each declared
  /// step, then its children.
  private var reportOrder: [Int] {
    var order: [Int] = []
    order.reserveCapacity(steps.count)
    for position in plan.selected.indices where plan.selected[position] {
      order.append(position)
      if let fan = fanOuts[position] { order.append(contentsOf: fan.children) }
    }
    return order
  }

  private func scheduleCommit() {
    guard !commitScheduled, let recorder else { return }
    commitScheduled = true
    scheduler.later { [weak self] _ in
      guard let self else { return }
      commitScheduled = false
      recorder.commit()
      if cancellation != nil { advance() } else if !waiting.isEmpty { considerParking() }
    }
  }

  /// Stores what the running attempts printed, soon: a step that runs
  /// long keeps its log up to the last flush across a crash, and
  /// `runs logs --follow` sees it.
  private func scheduleLogFlush() {
    guard logFlush == nil, !finished else { return }
    logFlush = scheduler.timers.schedule(at: clock.deadline(after: Self.logFlushInterval)) { [weak self] in
      guard let self, let recorder else { return }
      logFlush = nil
      for log in logs.values { recorder.add(logs: log.take()) }
      if recorder.hasPending { recorder.commit() }
    }
  }

  /// How long a running attempt's output waits before it is stored.
  static let logFlushInterval = 0.25

  /// Cancels the run for `reason`: running steps are cancelled where they
  /// wait (their `finally` and `<close>` run), waiting retries fail, no
  /// other step starts; the summary is printed and the run recorded as
  /// cancelled when the last running step has ended.
  func cancel(_ reason: RunCancellation) {
    guard cancellation == nil, !finished, !abandoned else { return }
    cancellation = reason
    for (step, timer) in retryTimers {
      scheduler.timers.cancel(timer)
      fail(step, reason.message)
    }
    retryTimers.removeAll()
    for case let task? in live { scheduler.cancel(task) }
    advance()
  }

  /// The code that called `workflow.run` was cancelled: stop the steps.
  private func abandon() {
    abandoned = true
    for case let task? in live { _ = scheduler.cancel(task) }
    finish()
  }

  private func finish() {
    guard !finished else { return }
    finished = true
    spareThreads.removeAll()
    let selected = reportOrder
    let report = RunReport(
      workflow: workflow,
      steps: selected.map {
        reports[$0]
          ?? StepReport(
            name: steps[$0].name, status: .skipped, attempts: attempts[$0], duration: 0,
            detail: cancellation == nil ? "interrupted" : "cancelled")
      },
      duration: clock.now - runStartedAt, cancelledBy: cancellation?.stoppedBy)
    if !abandoned {
      for reporter in reporters { reporter.runFinished(report) }
    }
    if let logFlush { scheduler.timers.cancel(logFlush) }
    logFlush = nil
    if let recorder {
      for log in logs.values { recorder.add(logs: log.finish()) }
      logs.removeAll()
      if recorder.hasPending { recorder.commit() }
      if case .parked(let wakeAt)? = cancellation {
        try? recorder.park(until: wakeAt, awaiting: Array(awaitedSignals.values))
      } else if let cancellation {
        try? recorder.finish(.cancelled, stoppedBy: cancellation.stoppedBy)
      } else {
        try? recorder.finish(abandoned ? .interrupted : report.succeeded ? .succeeded : .failed)
      }
    }
    scheduler.complete(wait, .values(results(report, perStep: returnsStepResults)))
    onFinish?()
  }

  /// What `workflow.run`'s host call returns: whether the run succeeded,
  /// the names of the steps that failed it, and each step's status (false
  /// if not selected), attempts and, in a resumed run, why it ran again
  /// (false if it did not), by position (children after the declared steps).
  func results(_ report: RunReport, perStep: Bool = true) -> [LuaValue] {
    let failed = LuaValue.table(LuaTable(array: report.failedSteps.map { .string($0) }))
    guard perStep else { return [.boolean(report.succeeded), failed] }
    var statuses = [LuaValue](repeating: .boolean(false), count: steps.count)
    var attempts = [LuaValue](repeating: .integer(0), count: steps.count)
    let reasons = rerunReasons.map { $0.map { LuaValue.string(LuaString($0)) } ?? .boolean(false) }
    for (position, step) in zip(reportOrder, report.steps) {
      statuses[position] = .string(LuaString(step.status.rawValue))
      attempts[position] = .integer(Int64(step.attempts))
    }
    return [
      .boolean(report.succeeded), failed, .table(LuaTable(array: statuses)), .table(LuaTable(array: attempts)),
      .table(LuaTable(array: reasons)),
    ]
  }

  private func timestamp(_ time: Double) -> StoreTimestamp {
    StoreTimestamp(microseconds: Int64(max(-9e15, min(9e15, (time * 1e6).rounded()))))
  }

  private func emit(_ kind: String, _ step: Int) {
    guard scheduler.trace.isEnabled else { return }
    scheduler.trace.emit(kind, [.init("workflow", .string(workflow)), .init("step", .string(steps[step].name))])
  }
}
