/// A wall-clock time with no time zone (year, month, day, hour, minute,
/// second), with the calendar arithmetic cron needs (proleptic Gregorian).
struct CivilTime: Sendable, Hashable, Comparable {
  var year: Int
  var month: Int
  var day: Int
  var hour: Int
  var minute: Int
  var second: Int

  /// The wall time `seconds` after 1970-01-01 00:00:00 (of no zone).
  init(secondsSinceEpoch seconds: Int64) {
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let rest = Int(seconds - days * 86_400)
    let (y, m, d) = Self.civil(fromDays: days)
    self.init(year: y, month: m, day: d, hour: rest / 3600, minute: rest / 60 % 60, second: rest % 60)
  }

  init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
    (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
  }

  /// Seconds after 1970-01-01 00:00:00 of the same (zone-less) calendar.
  var secondsSinceEpoch: Int64 {
    Self.days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
  }

  /// 0 for Sunday to 6 for Saturday.
  var weekday: Int {
    let days = Self.days(year: year, month: month, day: day)
    return Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday (4).
  }

  /// The number of days in this time's month.
  var daysInMonth: Int { Self.daysIn(year: year, month: month) }

  static func < (a: CivilTime, b: CivilTime) -> Bool { a.secondsSinceEpoch < b.secondsSinceEpoch }

  static func daysIn(year: Int, month: Int) -> Int {
    switch month {
    case 2: isLeap(year) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

  /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
  static func days(year: Int, month: Int, day: Int) -> Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let m = Int64(month)
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  /// The date `days` after 1970-01-01 (civil_from_days).
  static func civil(fromDays days: Int64) -> (Int, Int, Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), Int(m), Int(d))
  }
}
