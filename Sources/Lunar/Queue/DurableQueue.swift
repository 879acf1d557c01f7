import LuaKit
import LunarStore

/// A queue in the run's store (`queue.new{ name =, durable = true }`): its
/// jobs are named actions with value inputs, run by `lunar worker`
/// processes in strict submission order, surviving this process.
final class DurableQueue {
  /// The queue's name, as Lua's bytes.
  let name: LuaString
  /// What a failed job does to the queue (`stop` halts it until resumed).
  let policy: QueuePolicy
  /// The store holding it.
  let store: any QueueStore

  init(name: LuaString, policy: QueuePolicy, store: any QueueStore) {
    self.name = name
    self.policy = policy
    self.store = store
  }

  /// Why `input` cannot be a job's input; a function (or other value of
  /// one Lua state) is told that closures cannot cross processes.
  static func inputProblem(_ error: LuaConversionError) -> String {
    guard case .cannotCross = error.reason else { return error.description }
    return "\(error) (a durable job's input must be a value: closures cannot cross processes)"
  }

  /// Submits `action` with `input` to the end of the queue; its first
  /// claim is attempt `firstAttempt` (a workflow step's, on a retry).
  func submit(action: LuaString, input: LuaValue, firstAttempt: Int = 1) throws -> DurableJobHandle {
    let bytes: [UInt8]
    do {
      bytes = try LuaValueCodec.encode([input], root: "input")
    } catch {
      throw LuaArgumentError.invalid(3, error.description)
    }
    do {
      let job = try store.enqueue(queue: name, action: action, input: bytes, policy: policy, firstAttempt: firstAttempt, at: .now)
      return DurableJobHandle(store: store, id: job.id, queue: job.queue, sequence: job.sequence)
    } catch {
      throw DurableQueueError("submit to durable queue \(name.quoted): \(error.message)")
    }
  }
}
