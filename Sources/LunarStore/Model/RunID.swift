/// A run's number in its store: positive, never reused.
public struct RunID: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The number.
  public var rawValue: Int64

  /// The run numbered `rawValue`.
  public init(_ rawValue: Int64) { self.rawValue = rawValue }

  public static func < (lhs: RunID, rhs: RunID) -> Bool { lhs.rawValue < rhs.rawValue }

  public var description: String { String(rawValue) }
}
