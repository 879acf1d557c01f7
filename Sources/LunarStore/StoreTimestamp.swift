import Glibc

/// A moment on the wall clock, in microseconds since 1970-01-01 UTC: how the
/// store keeps runs' and steps' times (as SQLite integers).
public struct StoreTimestamp: Sendable, Hashable, Comparable {
  /// Microseconds since 1970-01-01 00:00 UTC.
  public var microseconds: Int64

  /// The moment `microseconds` after 1970-01-01 UTC.
  public init(microseconds: Int64) { self.microseconds = microseconds }

  /// The current wall-clock time.
  public static var now: StoreTimestamp {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return StoreTimestamp(microseconds: Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000)
  }

  /// Seconds from `self` to `later`.
  public func seconds(until later: StoreTimestamp) -> Double {
    Double(later.microseconds - microseconds) / 1_000_000
  }

  public static func < (lhs: StoreTimestamp, rhs: StoreTimestamp) -> Bool { lhs.microseconds < rhs.microseconds }
}
