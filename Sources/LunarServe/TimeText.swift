import LunarStore

#if canImport(Glibc)
import Glibc
#endif

/// Times and durations as the pages show them (UTC, to the second).
enum TimeText {
  /// "2026-12-02 19:30:12 UTC".
  static func moment(_ time: StoreTimestamp) -> String {
    var seconds = time_t(time.microseconds / 1_000_000)
    var parts = tm()
    guard gmtime_r(&seconds, &parts) != nil else { return "?" }
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
      + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
  }

  /// "0.25s", "12.0s", "3m 20s", "2h 5m".
  static func duration(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds >= 0 else { return "?" }
    if seconds < 10 { return String(Int((seconds * 100).rounded())).withDecimals(2) + "s" }
    if seconds < 60 { return String(Int((seconds * 10).rounded())).withDecimals(1) + "s" }
    let whole = Int(seconds)
    if whole < 3600 { return "\(whole / 60)m \(whole % 60)s" }
    return "\(whole / 3600)h \(whole % 3600 / 60)m"
  }

  /// From `start` to `end`, or to `now` while it runs.
  static func span(_ start: StoreTimestamp?, _ end: StoreTimestamp?, now: StoreTimestamp) -> String {
    guard let start else { return "" }
    return duration(start.seconds(until: end ?? now))
  }
}

extension String {
  /// A count of hundredths or tenths ("125", 2) as a decimal ("1.25").
  fileprivate func withDecimals(_ places: Int) -> String {
    let padded = String(repeating: "0", count: Swift.max(0, places + 1 - count)) + self
    return padded.dropLast(places) + "." + padded.suffix(places)
  }
}
