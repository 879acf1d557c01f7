/// One field of a cron expression: the set of values it matches, as bits
/// (bit `v` set when value `v` matches).
struct CronField: Sendable, Hashable {
  /// The values it matches.
  var bits: UInt64
  /// True when it does not match every value of its range: the rule that
  /// joins day of month and day of week asks this (as croniter does, a
  /// field is restricted by what it matches, not by how it is written).
  var isRestricted: Bool

  /// Whether `value` matches.
  func contains(_ value: Int) -> Bool { value >= 0 && value < 64 && bits & (1 << UInt64(value)) != 0 }

  /// The smallest matching value at or after `value`, or nil.
  func first(atOrAfter value: Int) -> Int? {
    guard value < 64 else { return nil }
    let rest = bits >> UInt64(max(value, 0))
    return rest == 0 ? nil : max(value, 0) + rest.trailingZeroBitCount
  }

  /// What a field of `kind` written as `text` matches.
  static func parse(_ text: Substring, as kind: CronFieldKind) throws(CronError) -> CronField {
    var bits: UInt64 = 0
    for item in text.split(separator: ",", omittingEmptySubsequences: false) {
      bits |= try parseItem(item, whole: text, as: kind)
    }
    if kind == .dayOfWeek && bits & (1 << 7) != 0 { bits = (bits | 1) & ~(1 << 7) }
    let all = (kind.range.lowerBound...min(kind.range.upperBound, kind == .dayOfWeek ? 6 : 63))
      .reduce(UInt64(0)) { $0 | (1 << UInt64($1)) }
    return CronField(bits: bits, isRestricted: bits != all)
  }

  /// The bits of one item of a list: `*`, `N`, `A-B`, each with an optional `/STEP`.
  private static func parseItem(_ item: Substring, whole: Substring, as kind: CronFieldKind) throws(CronError) -> UInt64 {
    func fail(_ reason: String) -> CronError { CronError(field: kind.name, text: String(whole), reason: reason) }
    guard !item.isEmpty else { throw fail("an empty item in the list") }
    let parts = item.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    var step = 1
    if parts.count == 2 {
      guard let number = Int(parts[1]), number > 0, number <= 1000 else {
        throw fail("the step '\(parts[1])' is not a positive number")
      }
      step = number
    }
    let body = parts[0]
    var low: Int
    var high: Int
    if body == "*" {
      low = kind.range.lowerBound
      high = kind == .dayOfWeek ? 6 : kind.range.upperBound
    } else {
      let bounds = body.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
      low = try value(bounds[0], whole: whole, as: kind)
      if bounds.count == 2 {
        high = try value(bounds[1], whole: whole, as: kind)
        // FRI-SUN: a range of days that ends on Sunday ends on day 7.
        if kind == .dayOfWeek && high == 0 && low > 0 { high = 7 }
        guard low <= high else { throw fail("the range \(body) runs backwards") }
      } else {
        // N/STEP runs from N to the end of the range, as croniter reads it.
        high = parts.count == 2 ? kind.range.upperBound : low
      }
    }
    var bits: UInt64 = 0
    for value in stride(from: low, through: high, by: step) { bits |= 1 << UInt64(value) }
    return bits
  }

  /// A number or a name (`JAN`, `mon`) in a field of `kind`, checked against its range.
  private static func value(_ text: Substring, whole: Substring, as kind: CronFieldKind) throws(CronError) -> Int {
    let number: Int
    if let parsed = Int(text), text.allSatisfy({ $0.isASCII && $0.isNumber }) {
      number = parsed
    } else if let index = kind.names.firstIndex(of: text.uppercased()) {
      number = index + (kind == .month ? 1 : 0)
    } else {
      let names = kind.names.isEmpty ? "" : " or a name \(kind.names.first ?? "")-\(kind.names.last ?? "")"
      throw CronError(
        field: kind.name, text: String(whole),
        reason: "'\(text)' is not a number \(kind.range.lowerBound)-\(kind.range.upperBound)\(names)")
    }
    guard kind.range.contains(number) else {
      throw CronError(
        field: kind.name, text: String(whole),
        reason: "\(number) is out of range \(kind.range.lowerBound)-\(kind.range.upperBound)")
    }
    return number
  }
}

/// Which field of a cron expression, with its range and names.
enum CronFieldKind: Sendable {
  case second, minute, hour, dayOfMonth, month, dayOfWeek

  /// The field's name in messages.
  var name: String {
    switch self {
    case .second: "second"
    case .minute: "minute"
    case .hour: "hour"
    case .dayOfMonth: "day-of-month"
    case .month: "month"
    case .dayOfWeek: "day-of-week"
    }
  }

  /// The values it may hold (day of week: 0 and 7 are Sunday).
  var range: ClosedRange<Int> {
    switch self {
    case .second, .minute: 0...59
    case .hour: 0...23
    case .dayOfMonth: 1...31
    case .month: 1...12
    case .dayOfWeek: 0...7
    }
  }

  /// The names it accepts, upper case, in order from its first value.
  var names: [String] {
    switch self {
    case .month: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    case .dayOfWeek: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
    default: []
    }
  }
}
