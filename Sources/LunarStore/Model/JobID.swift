/// A job's number in its store: positive, never reused, across all queues.
public struct JobID: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The number.
  public var rawValue: Int64

  /// The job numbered `rawValue`.
  public init(_ rawValue: Int64) { self.rawValue = rawValue }

  public static func < (lhs: JobID, rhs: JobID) -> Bool { lhs.rawValue < rhs.rawValue }

  public var description: String { String(rawValue) }
}
