import Glibc
import LuaKit
import Lunar
import LunarStore

/// The pieces `lunar runs` prints of a recorded run: names, local times,
/// durations and where a run stands.
enum RunText {
  /// A name from Lua as drawings show it: its text, or, if it is not
  /// valid UTF-8 or holds control characters, its bytes escaped as in a Lua
  /// literal (`b\255in`), so that it stays on its line and distinct names
  /// read differently; the empty name is `""`.
  static func name(_ name: LuaString) -> String {
    if name.bytes.isEmpty { return "\"\"" }
    if let text = name.string, !text.unicodeScalars.contains(where: isControl) { return text }
    return String(name.quoted.dropFirst().dropLast())
  }

  /// `text` with its control characters escaped as Lua escapes them.
  static func printable(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      case _ where isControl(scalar): out += "\\\(scalar.value)"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value)
  }

  /// `time` on this machine's clock (the `TZ` zone): `2026-12-01 11:58:48`.
  static func localTime(_ time: StoreTimestamp) -> String {
    tzset()
    var seconds = time_t(time.microseconds.dividedRoundingDown(by: 1_000_000))
    var parts = tm()
    guard localtime_r(&seconds, &parts) != nil else { return "?" }
    var buffer = [CChar](repeating: 0, count: 64)
    let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// How long from `start` to `end` (to now for a live run); `-` when the
  /// end is unknown.
  static func duration(from start: StoreTimestamp?, to end: StoreTimestamp?) -> String {
    guard let start, let end else { return "-" }
    return DurationText.format(start.seconds(until: end))
  }

  /// How long `run` took, or has run so far; `-` if its process died.
  static func duration(of run: RunRecord) -> String {
    if run.finishedAt == nil && !processIsGone(run) && !run.leaseExpired() { return duration(from: run.startedAt, to: .now) }
    return duration(from: run.startedAt, to: run.finishedAt)
  }

  /// The run's status; `interrupted?` for one still recorded as running
  /// whose process, on this machine, no longer exists (killed or crashed
  /// before it could record its end).
  /// A run whose owner's lease expired, or whose process on this host is
  /// gone, is `interrupted`; a cancelled one
  /// says what cancelled it.
  static func status(of run: RunRecord) -> String {
    if run.leaseExpired() || (run.leaseExpiresAt != nil && processIsGone(run)) { return "interrupted" }
    if run.status == .parked {
      return run.wakeAt.map { "parked until \(localTime($0))" } ?? "parked (waits for a signal)"
    }
    if run.status == .cancelled, let by = run.stoppedBy {
      return by == "request" ? "cancelled by request" : "cancelled (\(printable(by)))"
    }
    return processIsGone(run) ? "interrupted?" : run.status.rawValue
  }

  /// True for a run recorded as running whose process is gone. Only a run
  /// of this host can be checked; a recycled pid makes a dead run look live.
  static func processIsGone(_ run: RunRecord) -> Bool {
    guard run.status == .running, run.finishedAt == nil, run.pid > 0, run.host == NewRun.currentHost else { return false }
    return kill(run.pid, 0) != 0 && errno == ESRCH
  }
}

extension Int64 {
  /// The quotient rounded toward minus infinity.
  fileprivate func dividedRoundingDown(by divisor: Int64) -> Int64 {
    let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
    return remainder < 0 ? quotient - 1 : quotient
  }
}
