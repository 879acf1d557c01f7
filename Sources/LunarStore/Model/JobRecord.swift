import LuaKit

/// A queued job as the store holds it, for `lunar queue show` and for a
/// handle looked up again.
public struct JobRecord: Sendable, Hashable {
  /// Its number in the store.
  public var id: JobID
  /// Its queue's name.
  public var queue: LuaString
  /// Its place in its queue.
  public var sequence: Int64
  /// The named action it runs.
  public var action: LuaString
  /// The action's input: LuaValueCodec bytes.
  public var input: [UInt8]
  /// What its failure does to its queue.
  public var policy: QueuePolicy
  /// Where it stands.
  public var status: JobStatus
  /// How many times it was claimed.
  public var attempts: Int
  /// The worker of its latest claim.
  public var worker: WorkerID?
  /// The token of its latest claim: claims of one queue's jobs are numbered
  /// in the order they were made.
  public var claim: ClaimToken?
  /// When it was submitted.
  public var enqueuedAt: StoreTimestamp
  /// When its latest claim was made.
  public var startedAt: StoreTimestamp?
  /// When its lease ends, while it is running.
  public var leaseExpiresAt: StoreTimestamp?
  /// When it succeeded, failed or was cancelled.
  public var finishedAt: StoreTimestamp?
  /// What it returned (LuaValueCodec bytes), once it succeeded.
  public var output: [UInt8]?
  /// Its error's bytes, once it failed.
  public var error: [UInt8]?

  /// A record with every part given.
  public init(
    id: JobID, queue: LuaString, sequence: Int64, action: LuaString, input: [UInt8], policy: QueuePolicy,
    status: JobStatus, attempts: Int, worker: WorkerID?, claim: ClaimToken?, enqueuedAt: StoreTimestamp,
    startedAt: StoreTimestamp?, leaseExpiresAt: StoreTimestamp?, finishedAt: StoreTimestamp?, output: [UInt8]?,
    error: [UInt8]?
  ) {
    self.id = id
    self.queue = queue
    self.sequence = sequence
    self.action = action
    self.input = input
    self.policy = policy
    self.status = status
    self.attempts = attempts
    self.worker = worker
    self.claim = claim
    self.enqueuedAt = enqueuedAt
    self.startedAt = startedAt
    self.leaseExpiresAt = leaseExpiresAt
    self.finishedAt = finishedAt
    self.output = output
    self.error = error
  }
}

extension JobRecord {
  /// The `job` columns both queue stores read a record from, in this order:
  /// id, queue, sequence, action, input, policy, status, attempts, worker,
  /// claim, then the four times, output and error.
  static let columns = [
    "id", "queue", "sequence", "action", "input", "policy", "status", "attempts", "worker", "claim", "enqueued_at",
    "started_at", "lease_expires_at", "finished_at", "output", "error",
  ].joined(separator: ", ")

  /// Job `id`'s policy and status from their columns' text.
  /// - Throws: `.badValue` naming `store` for a value this Lunar does not know.
  static func decode(policy: String, status: String, of id: JobID, in store: String) throws(StoreError)
    -> (QueuePolicy, JobStatus)
  {
    guard let known = QueuePolicy(rawValue: policy) else {
      throw StoreError(.badValue, "store \(store): job \(id) has an unknown policy '\(policy)'")
    }
    guard let state = JobStatus(rawValue: status) else {
      throw StoreError(.badValue, "store \(store): job \(id) has an unknown status '\(status)'")
    }
    return (known, state)
  }
}
