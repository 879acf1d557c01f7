#if canImport(Glibc)
import Glibc
#endif

/// The JUnit XML busted's junit output handler writes: one `<testsuite>`
/// for the run, a `<testcase>` per test (its class name is where it was
/// declared, `file.lua:LINE`) with a `<failure>`, `<error>` or `<skipped>`
/// holding the message and traceback, and an `<error>` in the suite for
/// each failure outside a test (a hook, a block's body, a file).
public struct JUnitReporter: SpecReporter {
  /// The `--seed` of a shuffled run, which busted prints in each failure.
  let seed: Int64?

  public init(seed: Int64? = nil) { self.seed = seed }

  public func progress(_ file: SpecFileResult) -> String { "" }

  public func report(_ files: [SpecFileResult], seconds: Double) -> String {
    let entries = BustedEntry.all(files)
    var tests = 0, failures = 0, errors = 0, skipped = 0
    // Files that could not be loaded are errors of the run, outside its suite.
    let loadFailures = entries.filter(\.isLoadFailure)
    var body = ""
    for entry in entries where !entry.isLoadFailure {
      let result = entry.result
      // busted counts a failure outside a test as an error of the suite.
      guard entry.element.descriptor == "it" || entry.element.descriptor == "pending" else {
        errors += 1
        body += "\t\t" + node("error", text: text(entry, seeded: false)) + "\n"
        continue
      }
      tests += 1
      let position = entry.elementTrace.map { "\($0.trace.shortSource):\($0.trace.currentLine)" } ?? result.position ?? ""
      let testcase = "<testcase" + attributes([
        ("classname", position), ("name", result.name), ("time", String(format2: result.duration)),
      ])
      let outcome: String?
      switch result.status {
      case .failure:
        failures += 1
        outcome = node("failure", text: text(entry, seeded: true))
      case .error:
        errors += 1
        outcome = node("error", text: text(entry, seeded: true))
      case .pending:
        skipped += 1
        // busted's handler adds the seed to skips too.
        outcome = node("skipped", text: text(entry, seeded: true))
      case .success, .listed:
        outcome = nil
      }
      if let outcome {
        body += "\t\t\(testcase)>\n\t\t\t\(outcome)\n\t\t</testcase>\n"
      } else {
        body += "\t\t\(testcase)/>\n"
      }
    }
    func counts(errors: Int) -> [(String, String)] {
      [("tests", String(tests)), ("failures", String(failures)), ("errors", String(errors)), ("skip", String(skipped))]
    }
    let time = String(format2: seconds)
    // busted's XML writer starts every tag, the first too, on a new line.
    var out = "\n<testsuites" + attributes(counts(errors: errors + loadFailures.count) + [("time", time)]) + ">\n"
    for entry in loadFailures {
      out += "\t" + node("error", text: text(entry, seeded: false)) + "\n"
    }
    out += "\t<testsuite" + attributes([("name", "Run 1 of 1")] + counts(errors: errors) + [
      ("timestamp", Self.timestamp(SpecClock.epochNow() - seconds)), ("time", time),
    ]) + ">\n"
    out += body
    out += "\t</testsuite>\n</testsuites>\n"
    return out
  }

  /// The text busted puts in a failure, error or skip: the seed of a
  /// shuffled run, the message, and the traceback of where it was raised.
  private func text(_ entry: BustedEntry, seeded: Bool) -> String {
    var out = ""
    if seeded, let seed { out += "Random seed: \(seed)\n" }
    out += entry.message ?? ""
    if entry.raised || entry.result.status != .pending, let traceback = entry.trace?.trace.traceback {
      out += traceback
    }
    return out
  }

  /// `<name>text</name>`, or `<name/>` without text.
  private func node(_ name: String, text: String) -> String {
    text.isEmpty ? "<\(name)/>" : "<\(name)>\(xml(text))</\(name)>"
  }

  private func attributes(_ pairs: [(String, String)]) -> String {
    pairs.map { " \($0.0)='\(xml($0.1))'" }.joined()
  }

  private func xml(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if scalar.value < 0x20 { out += "?" } else { out.unicodeScalars.append(scalar) }
      }
    }
    return out
  }

  /// `2026-01-31T12:00:00`, in UTC, as busted's `os.date('!%Y-%m-%dT%H:%M:%S')`.
  static func timestamp(_ epoch: Double) -> String {
    var seconds = time_t(epoch.isFinite && abs(epoch) < 1e15 ? epoch : 0)
    var parts = tm()
    guard gmtime_r(&seconds, &parts) != nil else { return "1970-01-01T00:00:00" }
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : String(n) }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
  }
}

extension String {
  /// Seconds with two decimals (`0.04`), as busted's junit handler writes them.
  init(format2 value: Double) {
    guard value.isFinite, abs(value) < 1e15 else {
      self = String(format3: value)
      return
    }
    let hundredths = Int64((value * 100).rounded())
    let fraction = String(abs(hundredths) % 100)
    self = (hundredths < 0 ? "-" : "") + "\(abs(hundredths) / 100)." + (fraction.count < 2 ? "0" : "") + fraction
  }
}
