import LuaKit
import Lunar

/// Turns results into output. `progress` is called as each file finishes;
/// `report` returns the final text.
public protocol SpecReporter: Sendable {
  /// Text to print right away when a file finishes (may be empty).
  func progress(_ file: SpecFileResult) -> String
  /// The whole report, ending with the summary where the format allows.
  func report(_ files: [SpecFileResult], seconds: Double) -> String
}

/// The output formats `lunar test -o` accepts.
public enum SpecOutputFormat: String, Sendable, CaseIterable {
  case plain, tap, junit, json

  /// What a report in this format looks like, so `--output-file` replaces
  /// an earlier report but never another file.
  public var reportKind: FileOutput.Kind {
    switch self {
    case .plain: Self.plainKind
    case .tap: .starting(with: ["TAP version 13\n"], name: "a TAP report")
    // Reports as busted writes them, or as Lunar wrote them before.
    case .junit:
      .starting(
        with: ["\n<testsuites ", #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + #"<testsuites name="lunar test""#],
        name: "a JUnit report")
    case .json: .starting(with: [#"{"successes":"#, #"{"summary":"#], name: "a Lunar JSON report")
    }
  }

  /// True for the formats that report what busted's handlers do (where
  /// each test was declared and each failure raised), which a run then
  /// collects (`SpecOptions.details`).
  public var needsDetails: Bool { self == .junit || self == .json }

  /// A plain report ends with its summary line; a `--list` has one
  /// `file.lua:LINE: name` line per test.
  private static let plainKind = FileOutput.Kind("a plain Lunar test report") { head, tail in
    let last = String(decoding: tail, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    if SpecSummary.looksLikeSummary(last) { return true }
    let lines = String(decoding: head, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    return !lines.isEmpty && lines.allSatisfy { line in
      guard let range = line.firstRange(of: ".lua:") else { return false }
      let rest = line[range.upperBound...]
      let digits = rest.prefix { $0.isASCII && $0.isNumber }
      return !digits.isEmpty && rest.dropFirst(digits.count).hasPrefix(": ")
    }
  }

  /// A reporter for this format; `terminal` enables colour and progress,
  /// `seed` is a shuffled run's (busted's reports name it).
  public func reporter(terminal: Bool, seed: Int64? = nil) -> any SpecReporter {
    switch self {
    case .plain: PlainReporter(colour: terminal)
    case .tap: TAPReporter()
    case .junit: JUnitReporter(seed: seed)
    case .json: JSONReporter(seed: seed)
    }
  }
}

/// The default format: a progress line on a terminal, then each failure,
/// error and pending test with its position, then the summary line.
public struct PlainReporter: SpecReporter {
  let colour: Bool

  public init(colour: Bool) { self.colour = colour }

  private func paint(_ text: String, _ code: String) -> String {
    colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
  }

  public func progress(_ file: SpecFileResult) -> String {
    guard colour else { return "" }
    return file.results.map { result in
      switch result.status {
      case .success: paint("●", "32")
      case .failure: paint("◼", "31")
      case .error: paint("✱", "35")
      case .pending: paint("◌", "33")
      case .listed: ""
      }
    }.joined()
  }

  public func report(_ files: [SpecFileResult], seconds: Double) -> String {
    let all = files.flatMap(\.results)
    if all.contains(where: { $0.status == .listed }) {
      return all.map { "\($0.position ?? "?"): \($0.name)" }.joined(separator: "\n") + "\n"
    }
    var out = colour && !all.isEmpty ? "\n" : ""
    for (status, title, code) in [
      (SpecResult.Status.pending, "Pending", "33"), (.failure, "Failure", "31"), (.error, "Error", "35"),
    ] {
      for result in all where result.status == status {
        out += "\n" + paint("\(title) → \(result.position ?? "?"):", code) + " " + result.name + "\n"
        if let message = result.message, !message.isEmpty { out += message + "\n" }
        // A failure's message says it all; an error's traceback says where.
        if status == .error, let traceback = result.traceback, !traceback.isEmpty { out += traceback + "\n" }
      }
    }
    let summary = SpecSummary(files)
    out += "\n" + String(format3: seconds) + " seconds\n"
    out += paint(summary.description, summary.succeeded ? "32" : "31") + "\n"
    return out
  }
}

/// TAP version 13: one `ok`/`not ok` line per result, YAML details for
/// failures, `# SKIP` for pending, the summary as a final comment.
public struct TAPReporter: SpecReporter {
  public init() {}

  public func progress(_ file: SpecFileResult) -> String { "" }

  public func report(_ files: [SpecFileResult], seconds: Double) -> String {
    let all = files.flatMap(\.results)
    var lines = ["TAP version 13", "1..\(all.count)"]
    for (index, result) in all.enumerated() {
      let number = index + 1
      let name = result.name.replacingOccurrences(of: "#", with: "\\#")
      switch result.status {
      case .success, .listed:
        lines.append("ok \(number) - \(name)")
      case .pending:
        lines.append("ok \(number) - \(name) # SKIP \(result.message ?? "pending")")
      case .failure, .error:
        lines.append("not ok \(number) - \(name)")
        lines.append("  ---")
        lines.append("  severity: \(result.status == .failure ? "fail" : "error")")
        if let position = result.position { lines.append("  at: \(yamlQuote(position))") }
        lines.append("  message: \(yamlQuote(result.message ?? ""))")
        lines.append("  ...")
      }
    }
    lines.append("# \(SpecSummary(files))")
    return lines.joined(separator: "\n") + "\n"
  }

  private func yamlQuote(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t") + "\""
  }
}

extension String {
  /// Seconds with three decimals (`0.042`).
  init(format3 value: Double) {
    // A test on the virtual clock may take any time, even one no integer holds.
    guard value.isFinite, abs(value) < 1e15 else {
      self = LuaValue.number(value).description
      return
    }
    let milliseconds = Int64((value * 1000).rounded())
    let fraction = String(milliseconds % 1000)
    self = "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
  }

  /// Every occurrence of `target` replaced (no Foundation here).
  func replacingOccurrences(of target: String, with replacement: String) -> String {
    guard !target.isEmpty else { return self }
    var out = ""
    var rest = Substring(self)
    while let range = rest.firstRange(of: target) {
      out += rest[..<range.lowerBound] + replacement
      rest = rest[range.upperBound...]
    }
    return out + rest
  }
}
