import LuaKit

/// One greppable line per event, for pipes and files:
/// `[report] step fetch succeeded in 0.12s`.
public final class PlainProgress: WorkflowReporter {
  /// `[report] step `, the start of every line.
  private let prefix: [UInt8]
  /// `[report] resume: `, the start of a line that says why a step reruns.
  private let resumePrefix: [UInt8]
  /// Takes each line as UTF-8.
  private let write: ([UInt8]) -> Void
  /// The line being made, its storage kept from line to line: a run of
  /// 20,000 steps prints 40,000 lines.
  private var line: [UInt8] = []

  /// Lines about `workflow`, each given to `write` with its newline.
  public convenience init(workflow: LuaString, write: @escaping (String) -> Void) {
    self.init(workflow: workflow, writeUTF8: { write(String(decoding: $0, as: UTF8.self)) })
  }

  /// Lines about `workflow`, each given to `writeUTF8` as UTF-8 bytes with
  /// its newline: no text is made of a line that is ASCII.
  init(workflow: LuaString, writeUTF8: @escaping ([UInt8]) -> Void) {
    prefix = Array("[".utf8) + workflow.bytes + Array("] step ".utf8)
    resumePrefix = Array("[".utf8) + workflow.bytes + Array("] resume: ".utf8)
    write = writeUTF8
  }

  public func stepStarted(_ step: LuaString, at time: Double) {
    writeLine(prefix, step) { $0.append(contentsOf: Self.started) }
  }

  public func attemptFailed(_ step: LuaString, attempt: Int, error: String, retryingAfter delay: Double) {
    writeLine(prefix, step) { $0.append(contentsOf: " attempt \(attempt) failed: \(error); retrying\n".utf8) }
  }

  public func stepReruns(_ step: LuaString, reason: String) {
    writeLine(resumePrefix, step) { $0.append(contentsOf: ": \(reason)\n".utf8) }
  }

  public func stepFinished(_ report: StepReport) {
    writeLine(prefix, report.name) { Self.ending(of: report, to: &$0) }
  }

  /// Writes the line of `step` that `rest` ends, made in the kept line.
  private func writeLine(_ prefix: [UInt8], _ step: LuaString, _ rest: (inout [UInt8]) -> Void) {
    line.removeAll(keepingCapacity: true)
    write(Self.make(&line, prefix, step, rest))
  }

  /// The line that says how a step ended.
  static func line(workflow: LuaString, _ report: StepReport) -> String {
    var bytes: [UInt8] = []
    let prefix = Array("[".utf8) + workflow.bytes + Array("] step ".utf8)
    return String(decoding: make(&bytes, prefix, report.name) { ending(of: report, to: &$0) }, as: UTF8.self)
  }

  /// `prefix`, the step's name and what `rest` appends, as UTF-8, made in
  /// `bytes`: a name that is not UTF-8 prints with replacement characters.
  private static func make(
    _ bytes: inout [UInt8], _ prefix: [UInt8], _ step: LuaString, _ rest: (inout [UInt8]) -> Void
  ) -> [UInt8] {
    bytes.append(contentsOf: prefix)
    bytes.append(contentsOf: step.bytes)
    rest(&bytes)
    if bytes.allSatisfy({ $0 < 0x80 }) { return bytes }
    return Array(String(decoding: bytes, as: UTF8.self).utf8)
  }

  // Each line's words after the name, as bytes once: a literal's UTF-8
  // view is appended byte by byte.
  private static let started = Array(" started\n".utf8)
  private static let succeededIn = Array(" succeeded in ".utf8)
  private static let reusedIn = Array(" reused in ".utf8)
  private static let failedWith = Array(" failed: ".utf8)
  private static let skipped = Array(" skipped".utf8)

  private static func ending(of report: StepReport, to bytes: inout [UInt8]) {
    switch report.status {
    case .succeeded, .reused:
      bytes.append(contentsOf: report.status == .succeeded ? succeededIn : reusedIn)
      DurationText.append(report.duration, to: &bytes)
    case .failed:
      bytes.append(contentsOf: failedWith)
      bytes.append(contentsOf: (report.detail ?? "?").utf8)
    case .skipped:
      bytes.append(contentsOf: skipped)
      if let detail = report.detail { bytes.append(contentsOf: " (\(detail))".utf8) }
    }
    bytes.append(UInt8(ascii: "\n"))
  }
}
