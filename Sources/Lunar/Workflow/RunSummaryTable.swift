import LuaKit

/// The table printed when a run ends: each step's status, attempts and
/// duration, then one line for the whole run. A big run's summary stays
/// readable: the counts by status, then only the failed, retried and
/// slowest steps (`--summary full` prints every row).
public final class RunSummaryTable: WorkflowReporter {
  /// How many rows a summary shows.
  public enum Detail: String, Sendable {
    /// Every step up to `shortenedAbove` steps; above, the counts and the
    /// steps worth a look.
    case automatic
    /// A row for every step, however many.
    case full
  }

  /// Runs with more steps than this get the short summary.
  public static let shortenedAbove = 20
  /// How many of the slowest steps a short summary shows.
  public static let slowestShown = 5
  /// How many failed or retried steps a short summary shows (each).
  public static let listedAtMost = 20

  private let write: (String) -> Void
  private let detail: Detail

  /// A summary given to `write`.
  public init(detail: Detail = .automatic, write: @escaping (String) -> Void) {
    self.detail = detail
    self.write = write
  }

  public func runFinished(_ report: RunReport) {
    write(Self.text(report, detail: detail))
  }

  /// The summary of `report`. Built as bytes: a run of 20,000 steps
  /// prints 20,000 rows with `.full`.
  static func text(_ report: RunReport, detail: Detail = .automatic) -> String {
    guard detail == .full || report.steps.count <= shortenedAbove else { return shortText(report) }
    return table(report.steps) + outcomeLine(report)
  }

  /// Counts by status, then the failed, retried and slowest steps: one
  /// pass over the steps, none of them copied but those shown.
  private static func shortText(_ report: RunReport) -> String {
    let steps = report.steps
    let order: [StepReport.Status] = [.succeeded, .reused, .failed, .skipped]
    var counts = [Int](repeating: 0, count: order.count)
    var failed: [StepReport] = []
    var retried: [StepReport] = []
    var retriedCount = 0
    for step in steps {
      switch step.status {
      case .succeeded: counts[0] += 1
      case .reused: counts[1] += 1
      case .failed:
        counts[2] += 1
        if failed.count < listedAtMost { failed.append(step) }
      case .skipped: counts[3] += 1
      }
      if step.attempts > 1 {
        retriedCount += 1
        if retried.count < listedAtMost { retried.append(step) }
      }
    }
    let countText = zip(order, counts).compactMap { status, count in count == 0 ? nil : "\(count) \(status.rawValue)" }
    var text = "\n\(steps.count) steps: \(countText.joined(separator: ", "))\n"
    func section(_ title: String, _ chosen: [StepReport], of total: Int) {
      guard !chosen.isEmpty else { return }
      let more = total > chosen.count ? " (\(chosen.count) of \(total))" : ""
      text += "\n\(title)\(more):\n" + table(chosen)
    }
    section("failed", failed, of: counts[2])
    section("retried", retried, of: retriedCount)
    let ran = steps.lazy.filter { $0.status == .succeeded || $0.status == .failed }
    section("slowest", slowest(ran, count: slowestShown), of: counts[0] + counts[2])
    text += "(lunar run --summary full prints every step)\n"
    return text + outcomeLine(report)
  }

  /// The `count` steps of `steps` that took longest, longest first, the
  /// earlier of equals first: picked in one pass, not by sorting them all.
  static func slowest(_ steps: some Sequence<StepReport>, count: Int) -> [StepReport] {
    guard count > 0 else { return [] }
    var top: [StepReport] = []
    top.reserveCapacity(count + 1)
    for step in steps {
      // An equal duration never displaces an earlier step.
      guard top.count < count || step.duration > top[top.count - 1].duration else { continue }
      top.insert(step, at: top.firstIndex { step.duration > $0.duration } ?? top.count)
      if top.count > count { top.removeLast() }
    }
    return top
  }

  /// The run's last line: how it ended, in how long.
  private static func outcomeLine(_ report: RunReport) -> String {
    let continued = report.steps.reduce(0) { $0 + ($1.status == .failed && $1.continuesOnError ? 1 : 0) }
    let outcome =
      report.cancelledBy.map {
        switch $0 {
        case "request": "cancelled by request"
        case "parked": "parked in the store until it is due"
        default: "cancelled by \($0)"
        }
      }
      ?? (report.succeeded ? "succeeded" : "failed")
    let note = continued == 0 ? "" : " (\(continued) step\(continued == 1 ? "" : "s") failed and continued)"
    return "workflow \(report.workflow.lossyString): \(outcome) in \(DurationText.format(report.duration))\(note)\n"
  }

  /// A row per step of `steps`, under a header, after a blank line.
  private static func table(_ steps: [StepReport]) -> String {
    let names = steps.map(\.name.lossyString)
    let widths = names.map(\.count)
    let width = widths.reduce(4, max)
    var bytes: [UInt8] = []
    bytes.reserveCapacity((width + 36) * (names.count + 2))
    func cell(_ text: String, _ characters: Int, width: Int, right: Bool = false) {
      let padding = repeatElement(UInt8(ascii: " "), count: max(0, width - characters))
      if right { bytes.append(contentsOf: padding) }
      bytes.append(contentsOf: text.utf8)
      if !right { bytes.append(contentsOf: padding) }
    }
    func row(_ name: String, _ nameWidth: Int, _ status: String, _ attempts: String, _ duration: String) {
      cell(name, nameWidth, width: width)
      bytes.append(contentsOf: "  ".utf8)
      cell(status, status.utf8.count, width: 9)
      bytes.append(contentsOf: "  ".utf8)
      cell(attempts, attempts.utf8.count, width: 8, right: true)
      bytes.append(contentsOf: "  ".utf8)
      cell(duration, duration.utf8.count, width: 9, right: true)
      bytes.append(UInt8(ascii: "\n"))
    }
    bytes.append(UInt8(ascii: "\n"))
    row("step", 4, "status", "attempts", "duration")
    for (index, step) in steps.enumerated() {
      row(names[index], widths[index], step.status.rawValue, String(step.attempts), DurationText.format(step.duration))
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
