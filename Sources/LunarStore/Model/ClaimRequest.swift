import LuaKit

/// What a worker asks of a claim, checked once: who claims, from which
/// queues (every queue if nil), for how long a lease, and after how many
/// lost leases a job is abandoned.
struct ClaimRequest {
  let worker: WorkerID
  let queues: [LuaString]?
  let leaseMicroseconds: Int64
  let lostLeaseLimit: Int

  /// - Throws: `.badValue` for an unusable worker name, lease or limit.
  init(worker: WorkerID, queues: [LuaString]?, lease: Duration, lostLeaseLimit: Int) throws(StoreError) {
    try QueueLimits.check(worker: worker)
    guard lostLeaseLimit >= 1 else {
      throw StoreError(.badValue, "the limit of lost leases must be at least 1, got \(lostLeaseLimit)")
    }
    self.worker = worker
    self.queues = queues
    self.leaseMicroseconds = try QueueLimits.microseconds(of: lease)
    self.lostLeaseLimit = lostLeaseLimit
  }

  /// True when no queue is named: there is nothing to claim.
  var isEmpty: Bool { queues?.isEmpty == true }
}
