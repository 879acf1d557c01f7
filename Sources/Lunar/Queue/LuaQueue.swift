import LuaKit
import LunarStore

/// An ordered queue on a runtime's loop thread: jobs are tasks (Lua
/// functions run as coroutines, or Swift work), started strictly one after
/// another in submission order. The handles are ordinary task handles.
/// Lua's handle keeps it alive, and so does its running job (whose end
/// starts the next): a queue nobody can reach and with no jobs is freed.
public final class LuaQueue {
  /// The queue's name (in traces, job labels and messages), as Lua's bytes.
  public let name: LuaString
  /// What happens to waiting jobs when one fails.
  public let policy: QueuePolicy
  unowned let core: RuntimeCore
  private let registry: LiveObjects<LuaQueue>
  private var registration = 0
  private let waiting = Deque<(task: LuaTask, start: () -> Void, sequence: Int)>()
  /// The job running now.
  public private(set) var running: (task: LuaTask, sequence: Int)?
  private var nextSequence = 1
  /// The last job submitted (drain waits for it).
  private(set) var lastJob: LuaTask?

  init(name: LuaString, policy: QueuePolicy, core: RuntimeCore) {
    self.name = name
    self.policy = policy
    self.core = core
    registry = core.component(QueueSystem.self).live
    registration = registry.add(self)
  }

  deinit { registry.remove(registration) }

  /// Jobs waiting plus the one running.
  public var length: Int { waiting.count + (running == nil ? 0 : 1) }

  /// The label the next job will get (`calc#3`).
  func nextLabel() -> String { "\(name)#\(nextSequence)" }

  /// Queues a prepared task whose work `start` begins.
  public func submit(_ task: LuaTask, start: @escaping () -> Void) {
    let sequence = nextSequence
    nextSequence += 1
    task.defersCancellation = true
    lastJob = task
    waiting.append((task, start, sequence))
    emit("job.submitted", sequence)
    if running == nil { startNext() }
  }

  /// Queues Swift work as a job; its value becomes the handle's result.
  @discardableResult
  public func submit(label: String? = nil, work: @escaping @Sendable () async throws -> LuaValue) -> LuaTask {
    let task = core.scheduler.makeTask(label: .text(label ?? nextLabel()), origin: "swift")
    task.status = .pending
    submit(task) { [unowned core] in core.runSwiftWork(task, work) }
    return task
  }

  private func startNext() {
    while let job = waiting.popFirst() {
      if job.task.cancelRequested {
        // Its turn has come: it reports cancelled now, never having run.
        core.scheduler.finishCancelledBeforeStart(job.task)
        emit("job.cancelled", job.sequence)
        continue
      }
      running = (job.task, job.sequence)
      emit("job.started", job.sequence)
      // Strong: the running job keeps its queue (and so the jobs after it).
      job.task.onFinish.append { [self] task in self.finished(task, job.sequence) }
      job.start()
      return
    }
  }

  private func finished(_ task: LuaTask, _ sequence: Int) {
    running = nil
    switch task.status {
    case .done: emit("job.finished", sequence)
    case .cancelled: emit("job.cancelled", sequence)
    default: emit("job.failed", sequence, error: task.errorMessage)
    }
    if task.status == .failed && policy == .stop {
      for job in waiting { job.task.cancelRequested = true }
    }
    startNext()
  }

  private func emit(_ kind: String, _ sequence: Int, error: String? = nil) {
    let trace = core.trace
    guard trace.isEnabled else { return }
    var fields: [TraceEvent.Field] = [.init("queue", .string(name)), .init("seq", .integer(Int64(sequence)))]
    if let error { fields.append(.init("error", .string(LuaString(error)))) }
    trace.emit(kind, fields)
  }
}
