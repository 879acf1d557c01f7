import Foundation

/// A cron expression: five fields (minute hour day-of-month month
/// day-of-week) or six with a leading seconds field, with names
/// (`JAN`-`DEC`, `SUN`-`SAT`), ranges, steps, lists and the `@hourly`-style
/// macros. When both day fields are restricted a day matches if either
/// does (Vixie cron's and croniter's rule). `next(after:in:)` gives the
/// next tick in a time zone; docs/schedules.md says what daylight-saving
/// changes do to ticks.
public struct CronExpression: Sendable, Hashable, CustomStringConvertible {
  /// The expression as written.
  public let text: String
  /// True when it has the leading seconds field.
  public let hasSeconds: Bool
  let second: CronField
  let minute: CronField
  let hour: CronField
  let dayOfMonth: CronField
  let month: CronField
  let dayOfWeek: CronField

  /// The macros and what they stand for.
  static let macros: [String: String] = [
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
  ]

  /// Parses `text`.
  /// - Throws: `CronError` naming the field and the text it refuses.
  public init(_ text: String) throws(CronError) {
    self.text = text
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    var source = Substring(trimmed)
    if trimmed.hasPrefix("@") {
      guard let expansion = Self.macros[trimmed.lowercased()] else {
        throw CronError(
          field: nil, text: trimmed,
          reason: "unknown macro (known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)")
      }
      source = Substring(expansion)
    }
    let fields = source.split(whereSeparator: { $0 == " " || $0 == "\t" })
    guard fields.count == 5 || fields.count == 6 else {
      throw CronError(
        field: nil, text: trimmed,
        reason: "has \(fields.count) field\(fields.count == 1 ? "" : "s"); cron needs 5 (minute hour day-of-month month day-of-week) or 6 (a leading second)")
    }
    hasSeconds = fields.count == 6
    let rest = fields.suffix(5).map { $0 }
    second = hasSeconds ? try CronField.parse(fields[0], as: .second) : CronField(bits: 1, isRestricted: true)
    minute = try CronField.parse(rest[0], as: .minute)
    hour = try CronField.parse(rest[1], as: .hour)
    dayOfMonth = try CronField.parse(rest[2], as: .dayOfMonth)
    month = try CronField.parse(rest[3], as: .month)
    dayOfWeek = try CronField.parse(rest[4], as: .dayOfWeek)
    // A day of month no chosen month has never comes: refused now rather
    // than searched for forever.
    if dayOfMonth.isRestricted && !dayOfWeek.isRestricted {
      let possible = (1...12).contains { m in
        month.contains(m) && (1...CivilTime.daysIn(year: 2000, month: m)).contains { dayOfMonth.contains($0) }
      }
      if !possible {
        throw CronError(
          field: "day-of-month", text: String(rest[2]), reason: "no day it names falls in the months '\(rest[3])'")
      }
    }
  }

  public var description: String { text }

  /// Whether the day `time` falls on matches the day fields.
  func dayMatches(_ time: CivilTime) -> Bool {
    let byMonth = dayOfMonth.contains(time.day)
    let byWeek = dayOfWeek.contains(time.weekday)
    if dayOfMonth.isRestricted && dayOfWeek.isRestricted { return byMonth || byWeek }
    return byMonth && byWeek
  }

  /// The first wall time at or after `start` that the expression matches;
  /// nil if none comes within 10 years (the parse refuses expressions that
  /// never match, and every other one matches within 8).
  func firstMatch(atOrAfter start: CivilTime) -> CivilTime? {
    var t = start
    let lastYear = start.year + 10
    while t.year <= lastYear {
      guard month.contains(t.month) else {
        if let next = month.first(atOrAfter: t.month + 1), next <= 12 {
          t = CivilTime(year: t.year, month: next, day: 1, hour: 0, minute: 0, second: 0)
        } else {
          t = CivilTime(year: t.year + 1, month: month.first(atOrAfter: 1) ?? 1, day: 1, hour: 0, minute: 0, second: 0)
        }
        continue
      }
      guard dayMatches(t) else {
        t = Self.nextDay(t)
        continue
      }
      guard hour.contains(t.hour) else {
        if let next = hour.first(atOrAfter: t.hour + 1), next <= 23 {
          t.hour = next
          (t.minute, t.second) = (0, 0)
        } else {
          t = Self.nextDay(t)
        }
        continue
      }
      guard minute.contains(t.minute) else {
        if let next = minute.first(atOrAfter: t.minute + 1), next <= 59 {
          t.minute = next
          t.second = 0
        } else {
          t = Self.nextHour(t)
        }
        continue
      }
      guard second.contains(t.second) else {
        if let next = second.first(atOrAfter: t.second + 1), next <= 59 {
          t.second = next
        } else {
          t.second = 0
          t = CivilTime(secondsSinceEpoch: t.secondsSinceEpoch + 60)
        }
        continue
      }
      return t
    }
    return nil
  }

  /// The next tick after `instant` in `zone`: the first wall time after
  /// `instant`'s wall time that the expression matches and whose instant
  /// is after `instant`. A wall time that a spring-forward change skips is
  /// read with the offset before the change (02:30 becomes 03:30 on a
  /// one-hour change); a wall time a fall-back change repeats is its first
  /// occurrence only. Nil only if no tick comes within 10 years.
  public func next(after instant: Date, in zone: TimeZone) -> Date? {
    let seconds = instant.timeIntervalSince1970
    guard seconds.isFinite, abs(seconds) < 1e13 else { return nil }
    let whole = Int64(seconds.rounded(.down))
    let wall = whole + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(whole))))
    var candidate = CivilTime(secondsSinceEpoch: wall + 1)
    // A fall-back change repeats an hour: a wall time of the repeat's first
    // pass may lie before `instant`; at most a day of such ticks is skipped.
    for _ in 0..<100_000 {
      guard let tick = firstMatch(atOrAfter: candidate) else { return nil }
      let at = Self.instant(of: tick, in: zone)
      if Double(at) > seconds { return Date(timeIntervalSince1970: Double(at)) }
      candidate = CivilTime(secondsSinceEpoch: tick.secondsSinceEpoch + 1)
    }
    return nil
  }

  /// The instant of wall time `time` in `zone`, in seconds since 1970: its
  /// first occurrence when a change repeats it, and read with the offset
  /// before the change when a change skips it (Python's `fold=0`).
  static func instant(of time: CivilTime, in zone: TimeZone) -> Int64 {
    let wall = time.secondsSinceEpoch
    func offset(_ at: Int64) -> Int64 { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(at)))) }
    let offsets = Set([offset(wall - 93_600), offset(wall - 50_400), offset(wall), offset(wall + 50_400), offset(wall + 93_600)])
    let exact = offsets.map { wall - $0 }.filter { offset($0) == wall - $0 }
    if let first = exact.min() { return first }
    // Skipped: the offset in force before the change gives the later reading.
    return offsets.map { wall - $0 }.max() ?? wall
  }

  private static func nextDay(_ t: CivilTime) -> CivilTime {
    if t.day < t.daysInMonth { return CivilTime(year: t.year, month: t.month, day: t.day + 1, hour: 0, minute: 0, second: 0) }
    if t.month < 12 { return CivilTime(year: t.year, month: t.month + 1, day: 1, hour: 0, minute: 0, second: 0) }
    return CivilTime(year: t.year + 1, month: 1, day: 1, hour: 0, minute: 0, second: 0)
  }

  private static func nextHour(_ t: CivilTime) -> CivilTime {
    if t.hour < 23 { return CivilTime(year: t.year, month: t.month, day: t.day, hour: t.hour + 1, minute: 0, second: 0) }
    return nextDay(t)
  }
}
