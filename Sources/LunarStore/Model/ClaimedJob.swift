import LuaKit

/// A job a worker has claimed: what to run, and the token that proves the
/// claim is still its own when it heartbeats or completes.
public struct ClaimedJob: Sendable, Hashable {
  /// Its number in the store.
  public var id: JobID
  /// Its queue's name.
  public var queue: LuaString
  /// Its place in its queue.
  public var sequence: Int64
  /// The named action to run.
  public var action: LuaString
  /// The action's input: LuaValueCodec bytes, as submitted.
  public var input: [UInt8]
  /// The job's first attempt (1, or a workflow step's attempt for a
  /// retried durable step) on its first claim; one more for each claim after
  /// a worker holding it was lost and its lease expired (the action may
  /// have run, or partly run, before).
  public var attempt: Int
  /// The fencing token of this claim.
  public var token: ClaimToken
  /// When the lease ends unless the worker heartbeats.
  public var leaseExpiresAt: StoreTimestamp

  /// A claim of job `id` with every part given.
  public init(
    id: JobID, queue: LuaString, sequence: Int64, action: LuaString, input: [UInt8], attempt: Int, token: ClaimToken,
    leaseExpiresAt: StoreTimestamp
  ) {
    self.id = id
    self.queue = queue
    self.sequence = sequence
    self.action = action
    self.input = input
    self.attempt = attempt
    self.token = token
    self.leaseExpiresAt = leaseExpiresAt
  }
}
