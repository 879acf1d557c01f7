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

  /// The moments a store may hold, in microseconds: from 0001-01-01 to
  /// 9999-12-31 UTC, as far as dates are written with four digits. Any two
  /// are less than 2^63 µs apart, so their difference never overflows.
  public static let storable: ClosedRange<Int64> = -62_135_596_800_000_000...253_402_300_799_999_999

  /// Seconds from `self` to `later` (computed in floating point when the
  /// difference would not fit in 64 bits).
  public func seconds(until later: StoreTimestamp) -> Double {
    let (difference, overflow) = later.microseconds.subtractingReportingOverflow(microseconds)
    guard !overflow else { return (Double(later.microseconds) - Double(microseconds)) / 1_000_000 }
    return Double(difference) / 1_000_000
  }

  public static func < (lhs: StoreTimestamp, rhs: StoreTimestamp) -> Bool { lhs.microseconds < rhs.microseconds }
}
