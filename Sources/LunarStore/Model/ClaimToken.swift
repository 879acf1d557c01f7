/// The fencing token of one claim of a job: a store-wide number, larger for
/// every later claim. Only the holder of a job's latest token may heartbeat
/// or complete it, so a worker whose lease expired (and whose job was
/// claimed again) cannot finish it a second time.
///
/// Claims of the jobs of one queue are numbered in the order they were made,
/// so the tokens of a queue's jobs also record the order they started in.
public struct ClaimToken: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The number.
  public var rawValue: Int64

  /// The token numbered `rawValue`.
  public init(_ rawValue: Int64) { self.rawValue = rawValue }

  public static func < (lhs: ClaimToken, rhs: ClaimToken) -> Bool { lhs.rawValue < rhs.rawValue }

  public var description: String { String(rawValue) }
}
