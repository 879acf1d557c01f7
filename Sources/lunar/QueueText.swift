import LuaKit
import LunarStore

/// The pieces `lunar queue` prints of queues and their jobs: ages, jobs'
/// places, and what a job returned or raised.
enum QueueText {
  /// How long ago `time` was, to the second or coarser (`45s`, `4m 12s`,
  /// `3h 05m`, `2d 04h`): a wait's size at a glance.
  static func age(since time: StoreTimestamp, now: StoreTimestamp) -> String {
    // A time slightly ahead (another host's clock) reads as just now.
    let seconds = max(0, (now.microseconds - time.microseconds) / 1_000_000)
    func two(_ number: Int64) -> String { number < 10 ? "0\(number)" : String(number) }
    switch seconds {
    case ..<60: return "\(seconds)s"
    case ..<3_600: return "\(seconds / 60)m \(two(seconds % 60))s"
    case ..<86_400: return "\(seconds / 3_600)h \(two(seconds % 3_600 / 60))m"
    default: return "\(seconds / 86_400)d \(two(seconds % 86_400 / 3_600))h"
    }
  }

  /// A job by its place in its queue: `#3`.
  static func place(_ sequence: Int64) -> String { "#\(sequence)" }

  /// A worker's id with its control characters escaped; `-` for none.
  static func worker(_ worker: WorkerID?) -> String {
    worker.map { RunText.printable($0.name) } ?? "-"
  }

  /// The lines under a job in `lunar queue show`: its output or its error,
  /// indented by `indent`; nothing for a job that has neither.
  static func result(of job: JobRecord, indent: Int) -> String {
    if let error = job.error { return errorText(error, indent: indent) + "\n" }
    guard let output = job.output else { return "" }
    do {
      return ValueText.output(try LuaValueCodec.decode(output), label: "output: ", indent: indent) + "\n"
    } catch {
      // A store written by another version, or damaged: say so, keep going.
      return String(repeating: " ", count: indent) + "output: (\(output.count) bytes Lunar cannot read: \(error))\n"
    }
  }

  /// A job's error: its message (a traceback's lines under its first), or,
  /// for an error value that is not a string, the value as Lua writes it.
  private static func errorText(_ bytes: [UInt8], indent: Int) -> String {
    let label = "error: "
    let margin = String(repeating: " ", count: indent)
    // An error value's bytes start with the codec's version byte, which
    // no message does (it is a control character).
    if let values = try? LuaValueCodec.decode(bytes), values.count == 1 {
      guard case .string(let message) = values[0] else { return ValueText.output(values, label: label, indent: indent) }
      return errorText(message.bytes, indent: indent)
    }
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
      line.isEmpty ? "" : RunText.name(LuaString(bytes: Array(line)))
    }
    return margin + label + lines.joined(separator: "\n" + margin + String(repeating: " ", count: label.count))
  }
}
