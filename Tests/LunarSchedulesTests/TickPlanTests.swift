import Foundation
import Testing

@testable import LunarSchedules

@Suite struct TickPlanTests {
  let utc = TimeZone(identifier: "UTC")!
  let base = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15T08:00:00Z, a whole hour

  func plan(_ cron: String, last: TimeInterval, now: TimeInterval, catchup: TimeInterval?) throws -> TickPlan {
    TickPlan(
      cron: try CronExpression(cron), zone: utc, last: base.addingTimeInterval(last), now: base.addingTimeInterval(now),
      catchup: catchup)
  }

  @Test func nothingDueBeforeTheNextTick() throws {
    let none = try plan("0 * * * *", last: 0, now: 3599, catchup: nil)
    #expect(none.ticks.isEmpty && none.newest == nil)
  }

  @Test func aTickDueNow() throws {
    let due = try plan("0 * * * *", last: 0, now: 3600, catchup: nil)
    #expect(due.ticks == [base.addingTimeInterval(3600)] && due.newest == base.addingTimeInterval(3600))
  }

  /// After ten hours down only the last missed tick runs by default.
  @Test func downtimeRunsTheLastMissedTick() throws {
    let due = try plan("0 * * * *", last: 0, now: 36_000 + 30, catchup: nil)
    #expect(due.ticks == [base.addingTimeInterval(36_000)])
  }

  /// With a catch-up window the missed ticks inside it run, oldest first.
  @Test func catchupWindow() throws {
    let due = try plan("0 * * * *", last: 0, now: 36_000 + 30, catchup: 3 * 3600)
    #expect(due.ticks == [28_800, 32_400, 36_000].map { base.addingTimeInterval($0) })
    #expect(due.newest == base.addingTimeInterval(36_000))
  }

  /// A year of downtime of an every-minute schedule is not walked minute by minute.
  @Test func longDowntimeOfABusySchedule() throws {
    let due = try plan("* * * * *", last: 0, now: 365 * 86_400 + 10, catchup: nil)
    #expect(due.ticks == [base.addingTimeInterval(365 * 86_400)])
  }

  /// A yearly schedule's last tick a year and a half ago: the search widens until it finds the missed one.
  @Test func rareTicksFarBack() throws {
    let due = try plan("0 0 1 7 *", last: 0, now: 500 * 86_400, catchup: nil)
    let formatter = ISO8601DateFormatter()
    #expect(due.ticks.map { formatter.string(from: $0) } == ["2027-07-01T00:00:00Z"])
  }
}
