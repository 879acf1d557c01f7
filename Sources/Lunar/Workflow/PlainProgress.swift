import LuaKit

/// One greppable line per event, for pipes and files:
/// `[report] step fetch succeeded in 0.12s`.
public final class PlainProgress: WorkflowReporter {
  private let workflow: String
  private let write: (String) -> Void

  /// Lines about `workflow`, each given to `write` with its newline.
  public init(workflow: LuaString, write: @escaping (String) -> Void) {
    self.workflow = workflow.lossyString
    self.write = write
  }

  public func stepStarted(_ step: LuaString, at time: Double) {
    write("[\(workflow)] step \(step.lossyString) started\n")
  }

  public func attemptFailed(_ step: LuaString, attempt: Int, error: String, retryingAfter delay: Double) {
    write("[\(workflow)] step \(step.lossyString) attempt \(attempt) failed: \(error); retrying\n")
  }

  public func stepFinished(_ report: StepReport) {
    write(Self.line(workflow: workflow, report))
  }

  /// The line that says how a step ended.
  static func line(workflow: String, _ report: StepReport) -> String {
    var text = "[\(workflow)] step \(report.name.lossyString) \(report.status.rawValue)"
    switch report.status {
    case .succeeded, .reused: text += " in " + DurationText.format(report.duration)
    case .failed: text += ": " + (report.detail ?? "?")
    case .skipped: if let detail = report.detail { text += " (\(detail))" }
    }
    return text + "\n"
  }
}
