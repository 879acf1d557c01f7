import LuaKit

/// What a worker asks of a claim, checked once: who claims, from which
/// queues (every queue if nil), and for how long a lease.
struct ClaimRequest {
  let worker: WorkerID
  let queues: [LuaString]?
  let leaseMicroseconds: Int64

  /// - Throws: `.badValue` for an unusable worker name or lease.
  init(worker: WorkerID, queues: [LuaString]?, lease: Duration) throws(StoreError) {
    try QueueLimits.check(worker: worker)
    self.worker = worker
    self.queues = queues
    self.leaseMicroseconds = try QueueLimits.microseconds(of: lease)
  }

  /// True when no queue is named: there is nothing to claim.
  var isEmpty: Bool { queues?.isEmpty == true }
}
