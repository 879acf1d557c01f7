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
    write(Self.line(prefix, step) { $0.append(contentsOf: " started\n".utf8) })
  }

  public func attemptFailed(_ step: LuaString, attempt: Int, error: String, retryingAfter delay: Double) {
    write(Self.line(prefix, step) { $0.append(contentsOf: " attempt \(attempt) failed: \(error); retrying\n".utf8) })
  }

  public func stepReruns(_ step: LuaString, reason: String) {
    write(Self.line(resumePrefix, step) { $0.append(contentsOf: ": \(reason)\n".utf8) })
  }

  public func stepFinished(_ report: StepReport) {
    write(Self.line(prefix, report.name) { Self.ending(of: report, to: &$0) })
  }

  /// The line that says how a step ended.
  static func line(workflow: LuaString, _ report: StepReport) -> String {
    String(
      decoding: line(Array("[".utf8) + workflow.bytes + Array("] step ".utf8), report.name) { ending(of: report, to: &$0) },
      as: UTF8.self)
  }

  /// `prefix`, the step's name and what `rest` appends, as UTF-8: a name
  /// that is not UTF-8 prints with replacement characters. Built as bytes:
  /// a run of 20,000 steps prints 40,000 lines.
  private static func line(_ prefix: [UInt8], _ step: LuaString, _ rest: (inout [UInt8]) -> Void) -> [UInt8] {
    var bytes = prefix
    bytes.reserveCapacity(prefix.count + step.bytes.count + 32)
    bytes.append(contentsOf: step.bytes)
    rest(&bytes)
    if bytes.allSatisfy({ $0 < 0x80 }) { return bytes }
    return Array(String(decoding: bytes, as: UTF8.self).utf8)
  }

  private static func ending(of report: StepReport, to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: " "))
    bytes.append(contentsOf: report.status.rawValue.utf8)
    switch report.status {
    case .succeeded, .reused:
      bytes.append(contentsOf: " in ".utf8)
      DurationText.append(report.duration, to: &bytes)
    case .failed:
      bytes.append(contentsOf: ": ".utf8)
      bytes.append(contentsOf: (report.detail ?? "?").utf8)
    case .skipped:
      if let detail = report.detail { bytes.append(contentsOf: " (\(detail))".utf8) }
    }
    bytes.append(UInt8(ascii: "\n"))
  }
}
