import LuaKit
import LunarStore

/// Which steps `lunar runs show` lists (`--status`, `--step`) and whether
/// it shows their outputs (`--outputs`).
struct RunsShowFilter {
  /// Only steps that ended so.
  let status: StepStatus?
  /// Only the step of this name (its bytes).
  let step: LuaString?
  /// Show each step's output under it.
  let outputs: Bool

  /// The flags, for `runs`'s spec.
  static let specs = [
    OptionSpec(
      name: "status", value: "STATUS",
      help: "for show: only steps that ended so (succeeded, failed, skipped or reused)"),
    OptionSpec(name: "step", value: "NAME", help: "for show: only step NAME"),
    OptionSpec(name: "outputs", help: "for show: print each step's output too"),
  ]

  /// The filter the command line gives.
  init(_ parsed: ParsedArguments) throws(UsageError) {
    if let text = parsed.value("status") {
      guard let status = StepStatus(rawValue: text) else {
        let known = StepStatus.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        throw UsageError(message: "--status is one of \(known), got '\(RunText.printable(text))'", command: "runs")
      }
      self.status = status
    } else {
      status = nil
    }
    step = parsed.bytes("step")
    outputs = parsed.has("outputs")
  }

  /// Whether the filter keeps only some steps (`--status` or `--step`).
  var selects: Bool { status != nil || step != nil }

  /// The steps of `steps` the filter keeps, in their order.
  func apply(to steps: [StepRecord]) -> [StepRecord] {
    steps.filter { step in
      (status.map { step.status == $0 } ?? true) && (self.step.map { step.name == $0 } ?? true)
    }
  }
}
