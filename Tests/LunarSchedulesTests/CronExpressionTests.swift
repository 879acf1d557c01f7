import Foundation
import Testing

@testable import LunarSchedules

@Suite struct CronExpressionTests {
  let utc = TimeZone(identifier: "UTC")!
  let newYork = TimeZone(identifier: "America/New_York")!
  let london = TimeZone(identifier: "Europe/London")!

  /// The instant of `text` (ISO 8601 with an offset).
  func instant(_ text: String) -> Date {
    let formatter = ISO8601DateFormatter()
    return formatter.date(from: text)!
  }

  func next(_ cron: String, _ after: String, _ zone: TimeZone) throws -> String? {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = zone
    return try CronExpression(cron).next(after: instant(after), in: zone).map { formatter.string(from: $0) }
  }

  @Test func fieldsNamesRangesStepsLists() throws {
    #expect(try next("*/15 9-17 * JAN-mar mon-FRI", "2026-01-02T17:50:00Z", utc) == "2026-01-05T09:00:00Z")
    #expect(try next("0 0 1,15 * *", "2026-02-01T00:00:00Z", utc) == "2026-02-15T00:00:00Z")
    #expect(try next("30 5 10/10 * *", "2026-02-21T00:00:00Z", utc) == "2026-03-10T05:30:00Z")
    #expect(try next("0 0 * * 7", "2026-12-01T00:00:00Z", utc) == "2026-12-06T00:00:00Z")
    #expect(try next("0 0 * * FRI-SUN", "2026-12-06T00:00:00Z", utc) == "2026-12-11T00:00:00Z")
    #expect(try next("0 0 29 2 *", "2026-01-01T00:00:00Z", utc) == "2028-02-29T00:00:00Z")
    // A listed day past the month's end (31) does not skip the next month's first days.
    #expect(try next("42 */7 */5 * *", "2019-02-27T14:33:53Z", utc) == "2019-03-01T00:42:00Z")
  }

  @Test func leadingSecondsField() throws {
    #expect(try next("*/20 * * * * *", "2026-12-02T01:00:45Z", utc) == "2026-12-02T01:01:00Z")
    #expect(try next("5 0 12 * * *", "2026-12-02T12:00:05Z", utc) == "2026-12-03T12:00:05Z")
  }

  @Test func macros() throws {
    #expect(try next("@hourly", "2026-12-02T01:30:00Z", utc) == "2026-12-02T02:00:00Z")
    #expect(try next("@DAILY", "2026-12-02T01:30:00Z", utc) == "2026-12-03T00:00:00Z")
    #expect(try next("@weekly", "2026-12-02T01:30:00Z", utc) == "2026-12-06T00:00:00Z")
    #expect(try next("@monthly", "2026-12-02T01:30:00Z", utc) == "2027-01-01T00:00:00Z")
    #expect(try next("@yearly", "2026-12-02T01:30:00Z", utc) == "2027-01-01T00:00:00Z")
    #expect(try CronExpression("@annually") == CronExpression("@annually"))
  }

  /// Both day fields restricted: either matches (the 13th, or any Friday).
  @Test func dayOfMonthOrDayOfWeek() throws {
    #expect(try next("0 0 13 * 5", "2026-12-02T00:00:00Z", utc) == "2026-12-04T00:00:00Z")
    #expect(try next("0 0 13 * 5", "2026-12-11T00:00:00Z", utc) == "2026-12-13T00:00:00Z")
    // One restricted: only it counts.
    #expect(try next("0 0 13 * *", "2026-12-02T00:00:00Z", utc) == "2026-12-13T00:00:00Z")
    #expect(try next("0 0 * * 5", "2026-12-05T00:00:00Z", utc) == "2026-12-11T00:00:00Z")
  }

  /// On the spring-forward day 02:30 does not exist: the tick comes at
  /// 03:30 (read with the offset before the change), once.
  @Test func springForward() throws {
    #expect(try next("30 2 * * *", "2026-03-08T01:00:00-05:00", newYork) == "2026-03-08T03:30:00-04:00")
    #expect(try next("30 2 * * *", "2026-03-08T03:30:00-04:00", newYork) == "2026-03-09T02:30:00-04:00")
    #expect(try next("30 1 * * *", "2026-03-29T00:00:00Z", london) == "2026-03-29T02:30:00+01:00")
  }

  /// On the fall-back day 01:30 comes twice: the tick is its first
  /// occurrence only, and an hourly tick is not repeated in the second.
  @Test func fallBack() throws {
    #expect(try next("30 1 * * *", "2026-11-01T00:00:00-04:00", newYork) == "2026-11-01T01:30:00-04:00")
    #expect(try next("30 1 * * *", "2026-11-01T01:30:00-04:00", newYork) == "2026-11-02T01:30:00-05:00")
    #expect(try next("30 * * * *", "2026-11-01T01:30:00-04:00", newYork) == "2026-11-01T02:30:00-05:00")
    // From inside the repeated hour, ticks of its first pass are past.
    #expect(try next("20 1 * * *", "2026-11-01T01:10:00-05:00", newYork) == "2026-11-02T01:20:00-05:00")
    // A daily tick keeps its wall time across the change.
    #expect(try next("0 12 * * *", "2026-10-31T12:00:00-04:00", newYork) == "2026-11-01T12:00:00-05:00")
  }

  @Test func errorsNameTheFieldAndTheText() {
    func message(_ text: String) -> String {
      do {
        _ = try CronExpression(text)
        return "accepted"
      } catch {
        return error.description
      }
    }
    #expect(message("61 * * * *") == "cron: minute field '61': 61 is out of range 0-59")
    #expect(message("* 24 * * *") == "cron: hour field '24': 24 is out of range 0-23")
    #expect(message("* * 0 * *") == "cron: day-of-month field '0': 0 is out of range 1-31")
    #expect(message("* * * FOO *") == "cron: month field 'FOO': 'FOO' is not a number 1-12 or a name JAN-DEC")
    #expect(message("* * * * 1-8") == "cron: day-of-week field '1-8': 8 is out of range 0-7")
    #expect(message("*/0 * * * *") == "cron: minute field '*/0': the step '0' is not a positive number")
    #expect(message("5-1 * * * *") == "cron: minute field '5-1': the range 5-1 runs backwards")
    #expect(message("1,,2 * * * *") == "cron: minute field '1,,2': an empty item in the list")
    #expect(message("* * * *") == "cron: '* * * *': has 4 fields; cron needs 5 (minute hour day-of-month month day-of-week) or 6 (a leading second)")
    #expect(message("@fortnightly").hasPrefix("cron: '@fortnightly': unknown macro"))
    #expect(message("0 0 30 2 *") == "cron: day-of-month field '30': no day it names falls in the months '2'")
    #expect(message("0 0 30 2 MON") == "accepted")
  }
}
