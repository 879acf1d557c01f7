import LuaKit
import LunarStore

/// The handle of a job in a durable queue: `submit` returns it at once and
/// `queue.job(name, sequence)` finds it again, in this process or another.
/// Every answer is read from the store, so it tells what the workers did.
final class DurableJobHandle {
  /// The store holding the job.
  let store: any QueueStore
  /// The job's number in the store.
  let id: JobID
  /// Its queue's name.
  let queue: LuaString
  /// Its place in its queue, from 1.
  let sequence: Int64

  /// How often a waiting `await` looks at the store again.
  static let pollInterval: Duration = .milliseconds(25)

  init(store: any QueueStore, id: JobID, queue: LuaString, sequence: Int64) {
    self.store = store
    self.id = id
    self.queue = queue
    self.sequence = sequence
  }

  /// `deploys#3`, for waits and messages.
  var label: String { "\(queue.lossyString)#\(sequence)" }

  /// The job as the store has it now.
  func record() throws(DurableQueueError) -> JobRecord {
    do {
      guard let record = try store.job(id) else {
        throw DurableQueueError("durable job \(label): no job \(id) in \(store.location)")
      }
      return record
    } catch let error as DurableQueueError {
      throw error
    } catch {
      throw DurableQueueError("durable job \(label): \(error)")
    }
  }

  /// The record once the job has finished, looking every `pollInterval`
  /// (real time); nil when cancelled. Runs on Swift's pool: each look is
  /// one short read.
  static func finalRecord(store: any QueueStore, id: JobID, label: String) async -> Result<JobRecord, DurableQueueError>? {
    while !Task.isCancelled {
      do {
        guard let record = try store.job(id) else {
          return .failure(DurableQueueError("durable job \(label): no job \(id) in \(store.location)"))
        }
        if record.status.isFinal { return .success(record) }
      } catch {
        return .failure(DurableQueueError("durable job \(label): \(error.message)"))
      }
      do { try await Task.sleep(for: pollInterval) } catch { return nil }
    }
    return nil
  }

  /// The status names of the in-process handles, so code reads either kind.
  static func statusName(_ status: JobStatus) -> String {
    switch status {
    case .waiting: "pending"
    case .running: "running"
    case .succeeded: "done"
    case .failed: "failed"
    case .cancelled: "cancelled"
    }
  }
}

/// The Lua face of `DurableJobHandle`: `await`, `result`, `cancel`,
/// `status`, `sequence`, `queue`, `id`.
enum DurableJobHandleClass {
  static func make(runtime: RuntimeCore) -> LuaClass<DurableJobHandle> {
    var handle = LuaClass<DurableJobHandle>(name: "lunar.durable_job")
    handle.describe = { "durable job \($0.label)" }

    // h:await() -> the output, or the job's error raised
    handle.method("await") { [unowned runtime] job, call in
      try wait(call, for: job, runtime: runtime) { record in
        switch record.status {
        case .succeeded: return output(of: record, label: job.label)
        case .cancelled: return runtime.scheduler.cancelledFailure()
        default: return .failure { L in LuaThread(L).push(LuaString(bytes: record.error ?? [])) }
        }
      }
    }

    // h:result() -> true, output | false, err
    handle.method("result") { [unowned runtime] job, call in
      try wait(call, for: job, runtime: runtime) { record in
        switch record.status {
        case .succeeded:
          let values = output(of: record, label: job.label)
          if values.failed { return values }
          return .values { L in
            LuaThread(L).push(true)
            let count = values.push(L)
            return count == WaitResult.refused ? count : count + 1
          }
        case .cancelled:
          return .values { [unowned runtime] L in
            LuaThread(L).push(false)
            runtime.scheduler.pushCancelled(on: L)
            return 2
          }
        default:
          return .values { L in
            LuaThread(L).push(false)
            LuaThread(L).push(LuaString(bytes: record.error ?? []))
            return 2
          }
        }
      }
    }

    // h:cancel() -> true if the job had not started (it then never runs)
    handle.method("cancel") { job, call in
      do throws(StoreError) {
        try job.store.cancel(job: job.id, at: .now)
        call.push(true)
      } catch let error where error.kind == .notWaiting {
        call.push(false)
      } catch {
        throw DurableQueueError("durable job \(job.label): \(error.message)")
      }
      return .one
    }

    handle.method("status") { job, call in
      call.push(DurableJobHandle.statusName(try job.record().status))
      return .one
    }

    handle.property("sequence") { job, call in
      call.push(job.sequence)
      return .one
    }
    handle.property("queue") { job, call in
      call.push(job.queue)
      return .one
    }
    handle.property("id") { job, call in
      call.push(job.id.rawValue)
      return .one
    }
    handle.property("durable") { _, call in
      call.push(true)
      return .one
    }
    return handle
  }

  /// The job's output as the values a waiter gets.
  private static func output(of record: JobRecord, label: String) -> WaitResult {
    do {
      return .values(try LuaValueCodec.decode(record.output ?? []))
    } catch {
      return .failure(message: "durable job \(label): its output cannot be read: \(error)")
    }
  }

  /// Answers with `answer(record)` once the job has finished: at once if
  /// it has, else suspending the caller while Swift's pool polls the store.
  private static func wait(
    _ call: LuaCall, for job: DurableJobHandle, runtime: RuntimeCore,
    answer: @escaping (JobRecord) -> WaitResult
  ) throws -> LuaReturn {
    let scheduler = runtime.scheduler
    let now = try job.record()
    if now.status.isFinal { return scheduler.deliver(answer(now), on: call.L) }
    let wait = Wait(subject: "durable job \(job.label)")
    wait.awaitsSwiftWork = true
    let (store, id, label) = (job.store, job.id, job.label)
    let offLoopWork = runtime.offLoopWork
    let ticket = offLoopWork.start({ await DurableJobHandle.finalRecord(store: store, id: id, label: label) }) {
      [unowned scheduler] result in
      switch result {
      case .success(let record)?: scheduler.complete(wait, answer(record))
      case .failure(let error)?: scheduler.complete(wait, .failure(message: error.description))
      case nil: scheduler.complete(wait, scheduler.cancelledFailure())
      }
    }
    wait.onCancel = { [unowned offLoopWork] in offLoopWork.cancel(ticket) }
    return scheduler.suspend(call, on: wait)
  }
}

/// The userdata class of a runtime's durable job handles, made on first use.
final class DurableJobHandles: RuntimeComponent {
  let luaClass: LuaClass<DurableJobHandle>

  init(core: RuntimeCore) {
    luaClass = DurableJobHandleClass.make(runtime: core)
  }
}
