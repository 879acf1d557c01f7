import Foundation

/// Which ticks of a schedule are due at `now`: the ticks after its last
/// decided tick up to `now`, of which the newest always starts and the
/// older ones only inside the catch-up window. Pure: the clock is an input.
public struct TickPlan: Sendable, Equatable {
  /// The ticks to decide, oldest first (each starts a run unless the overlap policy skips it).
  public var ticks: [Date]
  /// The newest tick up to `now`: every tick up to it counts as decided.
  public var newest: Date?

  /// At most this many ticks are decided by one plan (the newest of them):
  /// a long catch-up window over a busy schedule is cut.
  public static let limit = 10_000

  /// The plan for `cron` in `zone` whose ticks after `last` are undecided,
  /// at `now`, with missed ticks up to `catchup` seconds old still run
  /// (nil: only the newest missed tick).
  public init(cron: CronExpression, zone: TimeZone, last: Date, now: Date, catchup: TimeInterval?) {
    guard last < now else {
      (ticks, newest) = ([], nil)
      return
    }
    // Searched from a window before `now`, widened until it finds a tick
    // or reaches `last`: a long downtime is not walked tick by tick.
    var window = max(catchup ?? 0, 60)
    var found: [Date] = []
    while true {
      let from = max(last, now.addingTimeInterval(-window))
      found = []
      var cursor = from
      while let tick = cron.next(after: cursor, in: zone), tick <= now {
        found.append(tick)
        if found.count > Self.limit { found.removeFirst(found.count - Self.limit) }
        cursor = tick
      }
      if !found.isEmpty || from == last { break }
      window *= 8
    }
    newest = found.last
    let oldest = catchup.map { now.addingTimeInterval(-$0) }
    ticks = found.filter { tick in tick == found.last || oldest.map { tick >= $0 } ?? false }
  }
}
