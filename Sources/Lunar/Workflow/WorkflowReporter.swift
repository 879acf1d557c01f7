import LuaKit

/// Receives what a workflow run does, in order, on the loop thread: the
/// plain lines, the live terminal line and the summary are reporters.
public protocol WorkflowReporter: AnyObject {
  /// A step began running its action (never said of a reused or skipped step).
  func stepStarted(_ step: LuaString, at time: Double)
  /// An attempt failed and another follows after `delay` seconds.
  func attemptFailed(_ step: LuaString, attempt: Int, error: String, retryingAfter delay: Double)
  /// A step of a resumed run runs again, for `reason` (`code changed`),
  /// said before it starts.
  func stepReruns(_ step: LuaString, reason: String)
  /// A step fanned out (`map`) into `children` steps, each reported on its own.
  func stepFannedOut(_ step: LuaString, children: Int)
  /// A step ended.
  func stepFinished(_ report: StepReport)
  /// The run ended; every step has been reported.
  func runFinished(_ report: RunReport)
}

extension WorkflowReporter {
  public func stepStarted(_ step: LuaString, at time: Double) {}
  public func attemptFailed(_ step: LuaString, attempt: Int, error: String, retryingAfter delay: Double) {}
  public func stepReruns(_ step: LuaString, reason: String) {}
  public func stepFannedOut(_ step: LuaString, children: Int) {}
  public func stepFinished(_ report: StepReport) {}
  public func runFinished(_ report: RunReport) {}
}

/// How one step of a run ended.
public struct StepReport: Sendable, Equatable {
  /// How a step ended.
  public enum Status: String, Sendable {
    case succeeded, reused, failed, skipped
  }

  /// The step's name.
  public var name: LuaString
  /// How it ended.
  public var status: Status
  /// Attempts made (0 for a reused or skipped step).
  public var attempts: Int
  /// Seconds on the runtime clock from its start to its end.
  public var duration: Double
  /// The error of a failed step, or why a step was skipped.
  public var detail: String?
  /// A failure of this step lets the steps that need it run.
  public var continuesOnError = false

  /// A step's report.
  public init(name: LuaString, status: Status, attempts: Int, duration: Double, detail: String? = nil, continuesOnError: Bool = false) {
    self.name = name
    self.status = status
    self.attempts = attempts
    self.duration = duration
    self.detail = detail
    self.continuesOnError = continuesOnError
  }
}

/// How a whole run ended.
public struct RunReport: Sendable, Equatable {
  /// The workflow's name.
  public var workflow: LuaString
  /// Every step that was selected, in declaration order.
  public var steps: [StepReport]
  /// Seconds on the runtime clock the run took.
  public var duration: Double
  /// What cancelled the run (`SIGTERM`, `request`), if it was cancelled.
  public var cancelledBy: String?

  /// A run's report.
  public init(workflow: LuaString, steps: [StepReport], duration: Double, cancelledBy: String? = nil) {
    self.workflow = workflow
    self.steps = steps
    self.duration = duration
    self.cancelledBy = cancelledBy
  }

  /// The steps whose failure fails the run: failed, and not continuing on error.
  public var failedSteps: [LuaString] {
    // By index: a run of 20,000 steps copies none of them to look.
    var names: [LuaString] = []
    for index in steps.indices where failsTheRun(index) { names.append(steps[index].name) }
    return names
  }

  /// True when no step failed the run.
  public var succeeded: Bool { !steps.indices.contains(where: failsTheRun) }

  private func failsTheRun(_ index: Int) -> Bool { steps[index].status == .failed && !steps[index].continuesOnError }
}

/// Durations as the reports show them: `0.12s` under ten seconds, `12.3s` above.
public enum DurationText {
  /// `seconds` as `0.12s` or `12.3s`.
  public static func format(_ seconds: Double) -> String {
    var bytes: [UInt8] = []
    append(seconds, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends the text `format` gives, as UTF-8; a line of a large run is
  /// built without a string per piece.
  public static func append(_ seconds: Double, to bytes: inout [UInt8]) {
    guard seconds.isFinite, abs(seconds) < 1e15 else {
      bytes.append(contentsOf: (LuaValue.number(seconds).description + "s").utf8)
      return
    }
    let decimals = abs(seconds) < 10 ? 2 : 1
    let unit: Int64 = decimals == 2 ? 100 : 10
    let scaled = Int64((abs(seconds) * Double(unit)).rounded())
    if seconds < 0 && scaled > 0 { bytes.append(UInt8(ascii: "-")) }
    appendDigits(scaled / unit, to: &bytes)
    bytes.append(UInt8(ascii: "."))
    var fraction = scaled % unit
    var divisor = unit / 10
    while divisor > 0 {
      bytes.append(UInt8(ascii: "0") + UInt8(fraction / divisor))
      fraction %= divisor
      divisor /= 10
    }
    bytes.append(UInt8(ascii: "s"))
  }

  private static func appendDigits(_ value: Int64, to bytes: inout [UInt8]) {
    if value >= 10 { appendDigits(value / 10, to: &bytes) }
    bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
  }
}
