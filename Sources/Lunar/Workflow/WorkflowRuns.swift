import CLuaShim
import LuaKit
import LunarStore

#if canImport(Glibc)
import Glibc
#endif

/// The runtime's workflow runs, found from an event posted to the loop.
final class WorkflowRunsComponent: RuntimeComponent {
  /// The runs, once the workflow plugin is installed.
  weak var runs: WorkflowRuns?

  init(core: RuntimeCore) {}
}

/// The workflow runs of one runtime, from `begin` (the definition read, the
/// plan made, the store opened and the earlier run found) to their end, and
/// the stores they record in, each opened once on first use.
final class WorkflowRuns {
  /// Why a run cannot begin, as the caller of `workflow.run` sees it.
  struct BeginError: Error, CustomStringConvertible {
    let description: String
  }

  private struct Begun {
    let workflow: LuaString
    let steps: [WorkflowStep]
    /// What the dispatcher needs of `steps`, made once for the check and the run.
    let dispatcherSteps: [StepDispatcher.Step]
    let plan: WorkflowPlan
    let jobs: Int
    let reporters: [any WorkflowReporter]
    let live: LiveProgress?
    let recorder: RunRecorder?
    let earlierOutputs: [Int: [LuaValue]]
    let forced: Set<Int>
  }

  private unowned let runtime: RuntimeCore
  private let options: WorkflowRunOptions
  private var begun: [Int: Begun] = [:]
  private var running: [Int: WorkflowRun] = [:]
  private var nextID = 1
  private var stores: [String: any RunStore] = [:]

  /// The runs of `runtime`, with the workflow plugin's `options`.
  init(runtime: RuntimeCore, options: WorkflowRunOptions) {
    self.runtime = runtime
    self.options = options
    runtime.component(WorkflowRunsComponent.self).runs = self
  }

  /// Reads a run of `workflow`: its `steps` as workflow.lua describes them
  /// (see `WorkflowStep.read`) and `options` (`only`/`from` as positions
  /// from 1, `jobs`, `progress`, `quiet`, `journal`). Returns the run's id
  /// and, for `--from`, the earlier run's outputs of the steps before it:
  /// `{ [name] = { output = value } }`.
  func begin(workflow: LuaString, steps: [WorkflowStep], options: LuaValue) throws(BeginError) -> (Int, LuaTable) {
    if self.options.servesSteps {
      // Else every worker would run the whole workflow beside the run.
      throw BeginError(
        description:
          "workflow \"\(workflow.lossyString)\": a file run with --processes must return its workflow, not run it (its workers load the file)"
      )
    }
    let dispatcherSteps = WorkflowStep.dispatcherSteps(steps)
    if let conflict = StepDispatcher.queueOrderConflict(in: dispatcherSteps) {
      let step = steps[conflict]
      throw BeginError(
        description:
          "workflow \"\(workflow.lossyString)\": step \"\(step.name.lossyString)\" can never start: queue \"\(step.queue?.lossyString ?? "")\" runs its steps in declaration order, and it needs a step declared after it in that queue"
      )
    }
    let selection: WorkflowPlan.Selection
    if let only = options["only"].integerValue {
      selection = .only(Int(only) - 1)
    } else if let from = options["from"].integerValue {
      selection = .from(Int(from) - 1)
    } else {
      selection = .all
    }
    let plan = WorkflowPlan(needs: steps.map(\.needs), selection: selection)
    var forced = Set<Int>()
    for name in self.options.force {
      guard let position = steps.firstIndex(where: { $0.name == name }) else {
        throw BeginError(
          description: "--force: no step \"\(name.lossyString)\" in workflow \"\(workflow.lossyString)\"")
      }
      forced.insert(position)
    }
    let (recorder, earlier) = try record(workflow, steps: steps, selection: selection, options: options)
    // A submitted resume's forced steps, checked before it was adopted.
    for name in recorder?.forced ?? [] {
      if let position = steps.firstIndex(where: { $0.name == name }) { forced.insert(position) }
    }
    var earlierTable = LuaTable()
    for (position, output) in earlier { earlierTable[.string(steps[position].name)] = .table(["output": output.first ?? .nil]) }

    var reporters: [any WorkflowReporter] = []
    var live: LiveProgress?
    if options["quiet"] != .boolean(true) {
      let write = Self.writeToStandardOutput
      if options["progress"] == .string("terminal") {
        let clock = runtime.clock
        let view = LiveProgress(workflow: workflow, total: plan.selectedCount, now: { clock.now }, write: write)
        live = view
        reporters.append(view)
      } else {
        reporters.append(PlainProgress(workflow: workflow, writeUTF8: Self.writeUTF8ToStandardOutput))
      }
      reporters.append(RunSummaryTable(detail: self.options.summary, write: write))
    }
    let id = nextID
    nextID += 1
    begun[id] = Begun(
      workflow: workflow, steps: steps, dispatcherSteps: dispatcherSteps, plan: plan,
      jobs: options["jobs"].integerValue.map { Int(clamping: $0) } ?? defaultJobs(options, recorded: recorder != nil),
      reporters: reporters,
      live: live, recorder: recorder, earlierOutputs: earlier, forced: forced)
    return (id, earlierTable)
  }

  /// How many steps run at once when the run's options do not say: one
  /// per `--processes` worker (each step is one job in flight, and a
  /// worker is free for it), else 4.
  private func defaultJobs(_ options: LuaValue, recorded: Bool) -> Int {
    let queues = processQueues(options, recorded: recorded)
    return queues.isEmpty ? 4 : queues.count
  }

  /// The queues of the `--processes` workers that run the steps of a run
  /// with `options` (`_processes`: the workflow the file returns), which
  /// must be `recorded` in the store they share; empty if none.
  func processQueues(_ options: LuaValue, recorded: Bool) -> [LuaString] {
    options["_processes"] == .boolean(true) && recorded ? self.options.processQueues : []
  }

  /// Starts run `id`, whose attempts run `body`; returns it (the caller
  /// waits on its `wait`). `codes` are the steps' code texts (workflow.lua's `step_code`,
  /// by position), given for a run recorded in a store.
  func start(
    _ id: Int, body: LuaReference, record: LuaReference, launcher: LuaReference, launcherThread: LuaThread,
    codes: [LuaString] = [], returnsStepResults: Bool = true
  ) throws(LuaArgumentError) -> WorkflowRun {
    guard let begun = begun.removeValue(forKey: id) else { throw LuaArgumentError.invalid(1, "no such workflow run") }
    let fingerprints = codes.map { code in Fingerprint(code: code) }
    let run = WorkflowRun(
      workflow: begun.workflow, steps: begun.steps, dispatcherSteps: begun.dispatcherSteps, plan: begun.plan, jobs: begun.jobs,
      scheduler: runtime.scheduler,
      clock: runtime.clock, reporters: begun.reporters, recorder: begun.recorder,
      logLimit: options.storesLogs ? max(0, options.logLimit) : nil, earlierOutputs: begun.earlierOutputs,
      codes: fingerprints, forced: begun.forced,
      body: body, record: record, launcher: launcher, launcherThread: launcherThread)
    run.parks = begun.recorder?.parks == true && !runtime.clock.isVirtual
    run.returnsStepResults = returnsStepResults
    running[id] = run
    let ticker = begun.live.map { tick($0) }
    let watch = watch(id, recorder: begun.recorder, running: run.runningSteps)
    run.onFinish = { [unowned self] in
      running[id] = nil
      ticker?.stop()
      watch?.stop()
    }
    run.start()
    return run
  }

  /// Whether run `id`, begun and not started, is recorded in a store.
  func records(_ id: Int) -> Bool { begun[id]?.recorder != nil }

  /// The running run `id`.
  func run(_ id: Int) throws(LuaArgumentError) -> WorkflowRun {
    guard let run = running[id] else { throw LuaArgumentError.invalid(1, "no such workflow run") }
    return run
  }

  /// Cancels run `id`, if it still runs, for `reason`.
  func cancel(_ id: Int, _ reason: RunCancellation) {
    running[id]?.cancel(reason)
  }

  /// The watch over run `id`: its lease's heartbeats (with a store) and,
  /// under `lunar run`, the stop signals; nil if there is neither.
  private func watch(_ id: Int, recorder: RunRecorder?, running: RunningSteps) -> RunWatch? {
    guard recorder != nil || runtime.configuration.catchesStopSignals else { return nil }
    let inbox = runtime.inbox
    return RunWatch(
      store: recorder?.store, run: recorder?.run, token: recorder?.token ?? ClaimToken(0), running: running, lease: options.lease
    ) { reason in
      inbox.post { core in core.component(WorkflowRunsComponent.self).runs?.cancel(id, reason) }
    }
  }

  // MARK: The store

  /// The recorder of a run of `workflow` (nil without a store) and, for
  /// `--from`, the earlier run's outputs of the steps before the selection.
  private func record(
    _ workflow: LuaString, steps: [WorkflowStep], selection: WorkflowPlan.Selection, options: LuaValue
  ) throws(BeginError) -> (RunRecorder?, [Int: [LuaValue]]) {
    let configured = self.options
    var location = runtime.configuration.store
    var resume = configured.resume
    if let journal = options["journal"].stringValue {
      location = StoreLocation(.sqlite(path: journal))
      resume = .last
    }
    guard let location else { return (nil, [:]) }
    do {
      let store = try open(location)
      if let handover = configured.adopt {
        return (try adopt(handover, of: workflow, steps: steps, selection: selection, store: store), [:])
      }
      var previous: RunRecord?
      switch resume {
      case .last?: previous = try store.lastRun(workflow: workflow, file: nil)
      case let reference?: previous = try store.resolve(reference, workflow: workflow)
      case nil: break
      }
      if case .from(let position) = selection, previous == nil {
        previous = try store.lastRun(workflow: workflow, file: nil)
        guard previous != nil else {
          throw StoreError(
            .noSuchRun,
            "--from \(steps[position].name.lossyString): no earlier run of workflow \"\(workflow.lossyString)\" in \(store.location) to take the outputs of the steps before it from"
          )
        }
      }
      if resume != nil, let held = previous, held.isHeld(), !Self.processIsGone(held) {
        throw StoreError(
          .runHeld,
          "run \(held.id) is still running: held by process \(held.pid) on \(held.host) since \(Self.localTime(held.ownedSince ?? held.startedAt)); wait for it to end, or cancel it with 'lunar runs cancel \(held.id)'"
        )
      }
      let previousSteps = try previous.map { run throws(StoreError) in try store.steps(of: run.id) } ?? []
      var earlier: [Int: [LuaValue]] = [:]
      var carried: [StepRecord] = []
      if case .from = selection {
        let positions = Dictionary(steps.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        for step in previousSteps where step.status == .succeeded || step.status == .reused {
          guard let position = positions[step.name], let output = step.output else { continue }
          earlier[position] = output
          carried.append(
            StepRecord(
              name: step.name, position: position, status: .reused, attempts: 0, fingerprint: step.fingerprint,
              code: step.code, output: output))
        }
      }
      var run = NewRun(
        workflow: workflow, file: configured.scriptFile ?? "", arguments: configured.scriptArguments,
        resumedFrom: previous?.id, lease: configured.lease)
      let plan = WorkflowPlan(needs: steps.map(\.needs), selection: selection)
      // The steps carried from before --from are in the plan too: its graph
      // shows what they feed.
      let carriedPositions = Set(carried.map(\.position))
      run.plan = RunPlan.keeping(names: steps.map(\.name), needs: steps.map(\.needs)) {
        plan.selected[$0] || carriedPositions.contains($0)
      }
      // A resumed run waits again for the durable jobs its steps left.
      let previousJobs = try resume == nil ? [] : previous.map { run throws(StoreError) in try store.stepJobs(of: run.id) } ?? []
      let recorder = try RunRecorder(
        store: store, run: run, previous: resume == nil ? [] : previousSteps, previousJobs: previousJobs)
      // The steps before --from are part of this run too, as reused: a
      // later resume finds every output in it.
      if !carried.isEmpty { try store.recordSteps(carried, of: recorder.run) }
      return (recorder, earlier)
    } catch let error as StoreError {
      throw BeginError(description: error.message)
    } catch {
      throw BeginError(description: "\(error)")
    }
  }

  /// The recorder of the run `handover` names, adopted from the worker
  /// that claimed it: every step of the workflow is planned, and the run's
  /// committed steps are reused; a submitted resume (`lunar submit
  /// --resume RUN`) reuses the steps of RUN it has not recorded itself.
  private func adopt(
    _ handover: RunHandover, of workflow: LuaString, steps: [WorkflowStep], selection: WorkflowPlan.Selection,
    store: any RunStore
  ) throws(StoreError) -> RunRecorder {
    guard selection == .all else {
      throw StoreError(.badValue, "run \(handover.run) was handed over to run whole: --only and --from do not apply")
    }
    let handed = try store.run(handover.run)
    let running = handed?.running ?? []
    var resumed: RunRecorder.Resumed?
    // A resume this file cannot make is the run's end, said in the store
    // (with the worker's token, before this process adopts it).
    func refuse(_ why: String) throws(StoreError) -> StoreError {
      try store.finishRun(handover.run, status: .failed, stoppedBy: "refused: \(why)", owner: handover.token, at: .now)
      return StoreError(.badValue, "run \(handover.run): \(why)")
    }
    if let earlier = handed?.resumedFrom {
      guard let record = try store.run(earlier) else {
        throw try refuse("it resumes run \(earlier), which is no longer in \(store.location)")
      }
      guard record.workflow == workflow else {
        throw try refuse(
          "it resumes run \(earlier), a run of workflow \"\(record.workflow.lossyString)\", but its file returns workflow \"\(workflow.lossyString)\""
        )
      }
      if let missing = handed?.force.first(where: { name in !steps.contains { $0.name == name } }) {
        throw try refuse("it forces step \(missing.quoted), which workflow \"\(workflow.lossyString)\" has no more")
      }
      resumed = RunRecorder.Resumed(
        run: earlier, steps: try store.steps(of: earlier), jobs: try store.stepJobs(of: earlier), forced: handed?.force ?? [])
    }
    guard
      let lease = try store.adopt(
        handover.run, from: handover.token, workflow: workflow,
        plan: RunPlan.keeping(names: steps.map(\.name), needs: steps.map(\.needs)) { _ in true }, host: NewRun.currentHost,
        pid: getpid(), lease: options.lease, at: .now)
    else {
      let now = try store.run(handover.run)
      throw StoreError(
        .staleOwner,
        "run \(handover.run) is no longer held with token \(handover.token.rawValue): \(now.map { "it is \($0.status.rawValue), held with token \($0.ownerToken.rawValue) by process \($0.pid) on \($0.host)" } ?? "it is gone")"
      )
    }
    return try RunRecorder(
      store: store, adopted: lease, steps: try store.steps(of: handover.run), jobs: try store.stepJobs(of: handover.run),
      running: running, resumed: resumed)
  }

  private func open(_ location: StoreLocation) throws(StoreError) -> any RunStore {
    if let store = stores[location.description] { return store }
    let store: any RunStore
    if let kept = options.keptStores {
      store = try kept.store(at: location)
    } else {
      store = try location.openRunStore()
    }
    stores[location.description] = store
    return store
  }

  /// True for a run of this host whose process no longer exists: its
  /// lease is not really held, whatever its end says.
  private static func processIsGone(_ run: RunRecord) -> Bool {
    run.host == NewRun.currentHost && run.pid > 0 && kill(run.pid, 0) != 0 && errno == ESRCH
  }

  /// `time` on this machine's clock: `2026-12-01 11:58:48`.
  private static func localTime(_ time: StoreTimestamp) -> String {
    var seconds = time_t(time.microseconds / 1_000_000)
    var parts = tm()
    guard localtime_r(&seconds, &parts) != nil else { return "?" }
    var buffer = [CChar](repeating: 0, count: 64)
    let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  // MARK: Output

  private static func writeToStandardOutput(_ text: String) {
    var text = text
    text.withUTF8 { bytes in writeUTF8ToStandardOutput(bytes) }
  }

  private static func writeUTF8ToStandardOutput(_ bytes: [UInt8]) {
    bytes.withUnsafeBufferPointer { writeUTF8ToStandardOutput($0) }
  }

  private static func writeUTF8ToStandardOutput(_ bytes: UnsafeBufferPointer<UInt8>) {
    // Flushed within 30 ms, even into a pipe or a file: a killed run
    // loses at most its last 30 ms of lines.
    bytes.withMemoryRebound(to: CChar.self) { lunar_writeprogress($0.baseAddress, $0.count) }
  }

  /// Moves `view`'s spinner on every tenth of a second (real time) until stopped.
  private func tick(_ view: LiveProgress) -> Ticker {
    let ticker = Ticker()
    let timers = runtime.scheduler.timers
    let clock = runtime.clock
    func schedule() {
      ticker.timer = timers.schedule(at: clock.deadline(after: 0.1)) { [weak ticker] in
        guard let ticker, !ticker.stopped else { return }
        view.tick()
        schedule()
      }
    }
    if !clock.isVirtual { schedule() }
    ticker.cancel = { [weak ticker] in
      if let timer = ticker?.timer { timers.cancel(timer) }
    }
    return ticker
  }

  /// A repeating timer's stop switch.
  private final class Ticker {
    var timer: Int?
    var stopped = false
    var cancel: (() -> Void)?

    func stop() {
      stopped = true
      cancel?()
    }
  }
}
