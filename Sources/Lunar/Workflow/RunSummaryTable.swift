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

  /// The summary of `report`.
  static func text(_ report: RunReport) -> String {
    let names = report.steps.map(\.name.lossyString)
    let width = names.reduce(4) { max($0, $1.count) }
    func row(_ name: String, _ status: String, _ attempts: String, _ duration: String) -> String {
      name.padding(to: width) + "  " + status.padding(to: 9) + "  " + attempts.leftPadded(to: 8, with: " ") + "  "
        + duration.leftPadded(to: 9, with: " ") + "\n"
    }
    var text = "\n" + row("step", "status", "attempts", "duration")
    for (name, step) in zip(names, report.steps) {
      text += row(name, step.status.rawValue, String(step.attempts), DurationText.format(step.duration))
    }
    let continued = report.steps.filter { $0.status == .failed && $0.continuesOnError }.count
    let outcome = report.succeeded ? "succeeded" : "failed"
    let note = continued == 0 ? "" : " (\(continued) step\(continued == 1 ? "" : "s") failed and continued)"
    text += "workflow \(report.workflow.lossyString): \(outcome) in \(DurationText.format(report.duration))\(note)\n"
    return text
  }
}

extension String {
  /// The string followed by spaces up to `width` characters.
  fileprivate func padding(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
