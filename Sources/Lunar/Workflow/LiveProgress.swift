import LuaKit

/// A terminal's live view: finished steps as lines above one line redrawn in
/// place with a spinner and the elapsed time of each running step. A redraw
/// costs what is running, never what exists.
public final class LiveProgress: WorkflowReporter {
  private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
  /// Erases the line the cursor is on.
  private static let clearLine = "\r\u{1B}[2K"

  private let workflow: String
  private let workflowName: LuaString
  /// The steps the run has: the planned ones, and the children of those that fanned out.
  private var total: Int
  private let now: () -> Double
  private let write: (String) -> Void
  /// Running steps in the order they started, with their start times.
  private var running: [(name: LuaString, since: Double)] = []
  private var finished = 0
  private var frame = 0

  /// A live view of `total` steps of `workflow`; `now` reads the clock that
  /// step durations are shown on.
  public init(workflow: LuaString, total: Int, now: @escaping () -> Double, write: @escaping (String) -> Void) {
    self.workflow = workflow.lossyString
    workflowName = workflow
    self.total = total
    self.now = now
    self.write = write
  }

  public func stepStarted(_ step: LuaString, at time: Double) {
    running.append((step, time))
    redraw()
  }

  public func stepReruns(_ step: LuaString, reason: String) {
    write(Self.clearLine + "[\(workflow)] resume: \(step.lossyString): \(reason)\n")
  }

  public func attemptFailed(_ step: LuaString, attempt: Int, error: String, retryingAfter delay: Double) {
    write(Self.clearLine + "[\(workflow)] step \(step.lossyString) attempt \(attempt) failed: \(error); retrying\n")
    redraw()
  }

  public func stepFannedOut(_ step: LuaString, children: Int) {
    total += children
    redraw()
  }

  public func stepFinished(_ report: StepReport) {
    if let index = running.firstIndex(where: { $0.name == report.name }) { running.remove(at: index) }
    finished += 1
    write(Self.clearLine + PlainProgress.line(workflow: workflowName, report))
    redraw()
  }

  public func runFinished(_ report: RunReport) {
    write(Self.clearLine)
  }

  /// Moves the spinner on and redraws the running steps (the runner calls
  /// this on a timer while steps run).
  public func tick() {
    frame = (frame + 1) % Self.frames.count
    redraw()
  }

  private func redraw() {
    let time = now()
    let spinner = Self.frames[frame]
    let parts = running.map { "\(spinner) \($0.name.lossyString) \(DurationText.format(time - $0.since))" }
    write(Self.clearLine + parts.joined(separator: "  ") + " (\(finished)/\(total))")
  }
}
