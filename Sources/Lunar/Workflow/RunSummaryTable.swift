import LuaKit

/// The table printed when a run ends: each step's status, attempts and
/// duration, then one line for the whole run.
public final class RunSummaryTable: WorkflowReporter {
  private let write: (String) -> Void

  /// A summary given to `write`.
  public init(write: @escaping (String) -> Void) { self.write = write }

  public func runFinished(_ report: RunReport) {
    write(Self.text(report))
  }

  /// The summary of `report`. Built as bytes: a run of 20,000 steps
  /// prints 20,000 rows.
  static func text(_ report: RunReport) -> String {
    let names = report.steps.map(\.name.lossyString)
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
    for (index, step) in report.steps.enumerated() {
      row(names[index], widths[index], step.status.rawValue, String(step.attempts), DurationText.format(step.duration))
    }
    var text = String(decoding: bytes, as: UTF8.self)
    let continued = report.steps.filter { $0.status == .failed && $0.continuesOnError }.count
    let outcome = report.succeeded ? "succeeded" : "failed"
    let note = continued == 0 ? "" : " (\(continued) step\(continued == 1 ? "" : "s") failed and continued)"
    text += "workflow \(report.workflow.lossyString): \(outcome) in \(DurationText.format(report.duration))\(note)\n"
    return text
  }
}
