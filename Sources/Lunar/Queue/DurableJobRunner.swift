import LuaKit
import LunarStore

/// Runs jobs a `DurableWorker` (`lunar worker`) claimed from a durable queue: each job's
/// action (`lunar.action`, a plugin's, or Swift's) with its decoded input,
/// as a task on the loop, its context's `attempt` the job's. Loop thread
/// only.
final class DurableJobRunner: RuntimeComponent {
  private unowned let core: RuntimeCore
  /// `lunar.actions`' job runner, which it hands over when it loads.
  private var runJob: LuaReference?
  /// The tasks of the jobs running now.
  private var tasks: [JobID: LuaTask] = [:]

  init(core: RuntimeCore) { self.core = core }

  /// Keeps `runner`, `lunar.actions`' function that runs a job's action.
  func keep(_ runner: LuaReference) { runJob = runner }

  /// Starts `job`; `finish` gets how it ended, on the loop.
  func start(_ job: ClaimedJob, finish: @escaping (JobOutcome) -> Void) {
    let state = core.state
    let L = state.L
    let base = state.top
    defer { state.top = base }
    let input: LuaValue
    do {
      input = try LuaValueCodec.decode(job.input).first ?? .nil
    } catch {
      finish(Self.failure("its input cannot be read: \(error)"))
      return
    }
    do {
      if runJob == nil {
        // worker.lua: requiring lunar.actions hands its job runner over.
        try state.load(bytes: PackageResources.worker_lua, name: "=lunar.worker")
        try state.call(arguments: 0, results: 0)
      }
      guard let runJob else { throw DurableQueueError("lunar.actions did not hand over its job runner") }
      runJob.push(on: state)
      state.push(job.action)
      try state.push(input)
      state.push(Int64(job.attempt))
    } catch {
      finish(Self.failure("\(error)"))
      return
    }
    let label = "job \(job.queue.lossyString)#\(job.sequence)"
    let scheduler = core.scheduler
    let task = scheduler.prepare(on: L, function: base + 1, arguments: 3, label: .text(label))
    task.observed = true
    tasks[job.id] = task
    task.onFinish.append { [unowned self, unowned scheduler] task in
      tasks[job.id] = nil
      scheduler.forgetFailure(of: task)
      finish(Self.outcome(of: task, action: job.action, on: state))
    }
    scheduler.start(task)
  }

  /// Stops the jobs `ids` that still run, as a deadline stops a task: one
  /// that waits fails where it waits, one that runs at its next step, and
  /// again at every step after, so no `pcall` keeps it going.
  func cancel(_ ids: [JobID], message: String) {
    for id in ids {
      guard let task = tasks[id] else { continue }
      core.scheduler.setDeadline(task, after: 0, message: message)
    }
  }

  /// How the finished `task` ended, as the store keeps it: its one output,
  /// encoded, or its error message. An output the store would refuse
  /// fails the job instead (else the job would stay unfinished, claimed
  /// again and again, and hold its queue).
  private static func outcome(of task: LuaTask, action: LuaString, on state: LuaState) -> JobOutcome {
    guard task.status == .done else { return failure(task.errorMessage ?? task.status.rawValue) }
    let base = state.top
    defer { state.top = base }
    let count = task.pushOutcome(on: state.L)
    let bytes: [UInt8]
    do {
      let output = count > 0 ? try state.value(at: base + 1, root: "output") : .nil
      bytes = try LuaValueCodec.encode([output], root: "output")
    } catch {
      return failure("its output cannot be stored: \(error)")
    }
    guard bytes.count <= QueueLimits.maximumValueBytes else {
      return failure(
        "action '\(action.lossyString)' returned too much: its output is \(bytes.count) bytes, over the \(QueueLimits.maximumValueText) limit")
    }
    return .succeeded(output: bytes)
  }

  /// A failure with `message`, cut to what the store keeps, with a note
  /// saying so at its end.
  static func failure(_ message: String) -> JobOutcome {
    let bytes = Array(message.utf8)
    guard bytes.count > QueueLimits.maximumValueBytes else { return .failed(error: bytes) }
    let note = Array(" ... (error cut: it was \(bytes.count) bytes, over the \(QueueLimits.maximumValueText) limit)".utf8)
    return .failed(error: bytes.prefix(QueueLimits.maximumValueBytes - note.count) + note)
  }
}

extension Runtime {
  /// Runs the action of `job`, claimed from a durable queue, with its
  /// input, and returns how it ended (an unknown action is a failure that
  /// says so). The action's context has `attempt`: the job's claims so far.
  public func run(_ job: ClaimedJob) async -> JobOutcome {
    await withCheckedContinuation { continuation in start(job) { continuation.resume(returning: $0) } }
  }

  /// Starts the action of `job` as `run` does, without awaiting it:
  /// `finish` gets how it ended, on the loop thread (so it should only hand
  /// the outcome on), or at once if the runtime has stopped. A thread that
  /// runs jobs one after another waits on no task this way.
  public func start(_ job: ClaimedJob, finish: @escaping @Sendable (JobOutcome) -> Void) {
    let posted = inbox.post { core in core.component(DurableJobRunner.self).start(job, finish: finish) }
    if !posted { finish(.failed(error: Array("the runtime has stopped".utf8))) }
  }

  /// Cancels the jobs `ids` started with `start`, from any thread: each
  /// fails with `message` (its `finish` is called as for any end) where it
  /// waits or computes, since the runtime is interrupted too (a job that
  /// computes holds the loop, which would never see the cancellation).
  func cancelJobs(_ ids: [JobID], message: String) {
    inbox.post { core in core.component(DurableJobRunner.self).cancel(ids, message: message) }
    interrupt()
  }
}
