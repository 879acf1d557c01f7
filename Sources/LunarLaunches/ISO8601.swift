/// ISO 8601 / RFC 3339 times without Foundation: the proleptic Gregorian
/// calendar through days-from-civil arithmetic, in UTC.
public enum ISO8601 {
  /// Seconds since the epoch for `text`, or nil when it is not an ISO 8601
  /// time.
  ///
  /// Accepted: `YYYY-MM-DDTHH:MM`, optionally `:SS` and a fraction
  /// (`.123`, any number of digits), then `Z` or an offset `±HH:MM`
  /// (`±HHMM` too). The separator may be `T`, `t` or a space; `Z` may be
  /// lower case. A date alone, a time without a zone, or out-of-range
  /// fields (month 13, February 30, hour 24, minute 60) are refused; second
  /// 60 (a leap second) is allowed and counts as the next second.
  public static func parse(_ text: String) -> Double? {
    var scanner = Scanner(bytes: Array(text.utf8))
    guard let year = scanner.digits(4), scanner.take(UInt8(ascii: "-")),
      let month = scanner.digits(2), scanner.take(UInt8(ascii: "-")),
      let day = scanner.digits(2),
      scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")),
      let hour = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
      let minute = scanner.digits(2)
    else { return nil }
    var second = 0
    var fraction = 0.0
    if scanner.take(UInt8(ascii: ":")) {
      guard let seconds = scanner.digits(2) else { return nil }
      second = seconds
      if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
        var scale = 0.1
        var count = 0
        while let digit = scanner.digit() {
          fraction += Double(digit) * scale
          scale /= 10
          count += 1
        }
        guard count > 0 else { return nil }
      }
    }
    var offset = 0
    if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
      offset = 0
    } else if let sign = scanner.sign() {
      guard let offsetHours = scanner.digits(2) else { return nil }
      _ = scanner.take(UInt8(ascii: ":"))
      guard let offsetMinutes = scanner.digits(2), offsetHours <= 23, offsetMinutes <= 59 else { return nil }
      offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
    } else {
      return nil
    }
    guard scanner.atEnd,
      (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day),
      hour <= 23, minute <= 59, second <= 60
    else { return nil }
    let days = daysFromCivil(year: year, month: month, day: day)
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
    return Double(seconds) + fraction
  }

  /// `time` (seconds since the epoch) as `YYYY-MM-DDTHH:MM:SSZ`, fractions
  /// dropped.
  public static func format(_ time: Double) -> String {
    guard time.isFinite, time.magnitude < 1e14 else { return "\(time)" }
    let date = UTCDate(time)
    return "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))T"
      + "\(pad(date.hour, 2)):\(pad(date.minute, 2)):\(pad(date.second, 2))Z"
  }

  /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's
  /// days_from_civil).
  static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let shiftedMonth = month > 2 ? month - 3 : month + 9
    let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The date `days` after 1970-01-01 (civil_from_days).
  static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  static func daysInMonth(year: Int, month: Int) -> Int {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  static func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  /// English month abbreviations, January first.
  static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

  private struct Scanner {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func take(_ byte: UInt8) -> Bool {
      guard index < bytes.count, bytes[index] == byte else { return false }
      index += 1
      return true
    }

    mutating func digit() -> Int? {
      guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
      defer { index += 1 }
      return Int(bytes[index] - UInt8(ascii: "0"))
    }

    /// Exactly `count` digits.
    mutating func digits(_ count: Int) -> Int? {
      var value = 0
      for _ in 0..<count {
        guard let digit = digit() else { return nil }
        value = value * 10 + digit
      }
      return value
    }

    mutating func sign() -> Int? {
      if take(UInt8(ascii: "+")) { return 1 }
      if take(UInt8(ascii: "-")) { return -1 }
      return nil
    }
  }
}

/// A time's calendar fields in UTC.
struct UTCDate {
  let year: Int
  let month: Int
  let day: Int
  let hour: Int
  let minute: Int
  let second: Int

  /// `time` is clamped to ±1e14 seconds (years ±3 million); NaN reads as 0.
  init(_ time: Double) {
    let whole = time.isNaN ? 0 : Int(min(max(time, -1e14), 1e14).rounded(.down))
    let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
    let secondOfDay = whole - days * 86_400
    (year, month, day) = ISO8601.civilFromDays(days)
    hour = secondOfDay / 3600
    minute = secondOfDay % 3600 / 60
    second = secondOfDay % 60
  }

  /// "Jan", "Feb", ...
  var monthName: String { ISO8601.monthNames[month - 1] }
}
