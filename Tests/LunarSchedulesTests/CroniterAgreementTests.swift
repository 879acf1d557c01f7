import Foundation
import Testing
import TestSupport

@testable import LunarSchedules

/// The next ticks of random cron expressions from random instants agree
/// with croniter's (Debian's python3-croniter), in UTC and in two zones
/// with daylight-saving changes.
@Suite struct CroniterAgreementTests {
  /// One case: the expression in Lunar's form (seconds first) and in
  /// croniter's (seconds last), a zone and an instant.
  struct Case {
    var lunar: String
    var croniter: String
    var zone: String
    var after: Double
  }

  static let zones = ["UTC", "Europe/London", "America/New_York"]
  static let python = "/usr/bin/python3"

  /// Reads JSON lines {"expr", "zone", "t"} and writes {"next"} (or
  /// {"error"}) for each. In UTC croniter is asked directly. In a zone with
  /// daylight-saving changes croniter is asked for the next matching wall
  /// time (a naive datetime: croniter 1.3.5's own zone handling moves ticks
  /// by an hour across a change, see docs/schedules.md), and Python's
  /// zoneinfo reads that wall time with fold=0, skipping ticks not after t.
  static let script = """
    import sys, json
    from datetime import datetime, timezone
    from zoneinfo import ZoneInfo
    from croniter import croniter
    for line in sys.stdin:
        case = json.loads(line)
        try:
            t = case["t"]
            if case["zone"] == "UTC":
                start = datetime.fromtimestamp(t, timezone.utc)
                answer = croniter(case["expr"], start).get_next(float)
            else:
                zone = ZoneInfo(case["zone"])
                wall = datetime.fromtimestamp(t, zone).replace(tzinfo=None)
                ticks = croniter(case["expr"], wall)
                while True:
                    tick = ticks.get_next(datetime).replace(tzinfo=zone, fold=0).timestamp()
                    if tick > t:
                        break
                answer = tick
            print(json.dumps({"next": answer}))
        except Exception as error:
            print(json.dumps({"error": str(error)}))
    """

  @Test func nextTicksAgreeWithCroniter() async throws {
    let probe = try await ProgramRun.run(Self.python, ["-c", "import croniter, zoneinfo"])
    if probe.status != 0 {
      if ProcessInfo.processInfo.environment["LUNAR_SKIP_CRONITER"] == "1" {
        print("CroniterAgreementTests: skipped: python3-croniter is not installed and LUNAR_SKIP_CRONITER=1")
        return
      }
      Issue.record(
        "python3-croniter is missing (\(probe.stderr.trimmingCharacters(in: .whitespacesAndNewlines))): run scripts/bootstrap, or set LUNAR_SKIP_CRONITER=1 to skip"
      )
      return
    }
    var random = SplitMix64(seed: 29)
    let cases = (0..<12_000).map { index in Self.randomCase(&random, zone: Self.zones[index % Self.zones.count]) }
    let input = try TemporaryFile()
    var lines = ""
    for item in cases {
      let line = try JSONSerialization.data(withJSONObject: ["expr": item.croniter, "zone": item.zone, "t": item.after])
      lines += String(decoding: line, as: UTF8.self) + "\n"
    }
    try input.handle.write(contentsOf: Data(lines.utf8))
    let scriptFile = try TemporaryFile()
    try scriptFile.handle.write(contentsOf: Data(Self.script.utf8))
    let outcome = try await ProgramRun.run(
      "/bin/sh", ["-c", "exec \"$0\" \"$1\" < \"$2\"", Self.python, scriptFile.url.path, input.url.path], timeout: 600)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let answers = outcome.stdout.split(separator: "\n")
    #expect(answers.count == cases.count)
    var disagreements = 0
    for (item, answer) in zip(cases, answers) {
      let json = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
      let expected = (json?["next"] as? Double).map { Int64($0) }
      let expression = try CronExpression(item.lunar)
      let zone = try #require(TimeZone(identifier: item.zone))
      let ours = expression.next(after: Date(timeIntervalSince1970: item.after), in: zone)
        .map { Int64($0.timeIntervalSince1970) }
      if ours != expected {
        disagreements += 1
        if disagreements <= 20 {
          Issue.record(
            "'\(item.lunar)' in \(item.zone) after \(Date(timeIntervalSince1970: item.after)) (\(item.after)): Lunar \(ours.map { "\(Date(timeIntervalSince1970: Double($0)))" } ?? "none"), croniter \(expected.map { "\(Date(timeIntervalSince1970: Double($0)))" } ?? "none: \(json?["error"] ?? "")")"
          )
        }
      }
    }
    #expect(disagreements == 0, "\(disagreements) of \(cases.count) cases disagree")
  }

  /// A random expression (sometimes with seconds, sometimes a macro) and
  /// an instant, a third of them within three hours of a daylight-saving
  /// change of `zone`.
  static func randomCase(_ random: inout SplitMix64, zone: String) -> Case {
    let withSeconds = random.below(4) == 0
    var fields: [String]
    if random.below(20) == 0 {
      let macros = ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]
      let macro = macros[random.below(macros.count)]
      fields = [macro]
      return Case(lunar: macro, croniter: macro, zone: zone, after: randomInstant(&random, zone: zone))
    }
    let minute = field(&random, range: 0...59, names: [])
    let hour = field(&random, range: 0...23, names: [])
    let months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    let month = field(&random, range: 1...12, names: months, nameBase: 1)
    // Days up to 28 only: croniter 1.3.5 jumps past the next month's first
    // days from a day after the month's last listed one (`*/5` from
    // February 27 gives March 6, not March 1; see CronExpressionTests).
    let dayOfMonth = field(&random, range: 1...28, names: [], openEnded: false)
    // croniter 1.3.5 reads day 7 as Sunday only with five fields.
    let days = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
    // croniter 1.3.5 reads day 7 as Sunday only with five fields, and
    // `*/S` and `N/S` run to 7: six-field cases keep to explicit 0-6.
    let dayOfWeek = field(&random, range: withSeconds ? 0...6 : 0...7, names: days, nameBase: 0, openEnded: !withSeconds)
    fields = [minute, hour, dayOfMonth, month, dayOfWeek]
    if withSeconds {
      let second = field(&random, range: 0...59, names: [])
      return Case(
        lunar: ([second] + fields).joined(separator: " "), croniter: (fields + [second]).joined(separator: " "),
        zone: zone, after: randomInstant(&random, zone: zone))
    }
    let text = fields.joined(separator: " ")
    return Case(lunar: text, croniter: text, zone: zone, after: randomInstant(&random, zone: zone))
  }

  /// One field: `*`, a value, a range, a step, or a list of those.
  static func field(
    _ random: inout SplitMix64, range: ClosedRange<Int>, names: [String], nameBase: Int = 0, openEnded: Bool = true
  ) -> String {
    func value() -> Int { range.lowerBound + random.below(range.count) }
    func written(_ v: Int) -> String {
      let index = v - nameBase
      if !names.isEmpty, index >= 0, index < names.count, random.below(3) == 0 {
        return random.below(2) == 0 ? names[index] : names[index].lowercased()
      }
      return String(v)
    }
    func item() -> String {
      switch random.below(7) {
      case 0 where openEnded: return "*/\(1 + random.below(max(2, range.count / 2)))"
      case 1, 2: return written(value())
      case 3:
        let (a, b) = (value(), value())
        return "\(written(min(a, b)))-\(written(max(a, b)))"
      case 4:
        let (a, b) = (value(), value())
        return "\(written(min(a, b)))-\(written(max(a, b)))/\(1 + random.below(5))"
      case 5 where openEnded: return "\(value())/\(1 + random.below(10))"
      default: return "*"
      }
    }
    switch random.below(5) {
    case 0: return "*"
    case 1: return (0..<(2 + random.below(3))).map { _ in item() }.joined(separator: ",")
    default: return item()
    }
  }

  /// An instant from 2000 to 2036, with a fraction of a second sometimes.
  static func randomInstant(_ random: inout SplitMix64, zone: String) -> Double {
    let start = 946_684_800.0  // 2000-01-01
    let span = 37.0 * 365 * 86_400
    var instant = start + Double(random.below(Int(span)))
    if zone != "UTC", random.below(3) == 0, let tz = TimeZone(identifier: zone),
      let change = tz.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: instant))
    {
      instant = change.timeIntervalSince1970 + Double(random.below(6 * 3600)) - 3 * 3600
    }
    if random.below(4) == 0 { instant += Double(random.below(1000)) / 1000 }
    return instant
  }
}
