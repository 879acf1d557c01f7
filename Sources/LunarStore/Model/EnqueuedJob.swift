import LuaKit

/// A job just submitted: its number in the store and its place in its queue.
public struct EnqueuedJob: Sendable, Hashable {
  /// Its number in the store.
  public var id: JobID
  /// Its queue's name.
  public var queue: LuaString
  /// Its place in its queue: 1 for the first job ever submitted to it,
  /// one more for each next one, whichever process submits it.
  public var sequence: Int64

  /// Job `id`, number `sequence` of `queue`.
  public init(id: JobID, queue: LuaString, sequence: Int64) {
    self.id = id
    self.queue = queue
    self.sequence = sequence
  }
}
