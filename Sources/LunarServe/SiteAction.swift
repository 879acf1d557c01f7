import LuaKit
import Lunar
import LunarStore

/// What a POST of the site's own forms asks for: each one an operation the
/// CLI has (`runs cancel`, `runs signal`, `submit --resume`, `queue
/// resume`, `schedule pause`, `resume`, `trigger`), read from the path and
/// the form's fields.
enum SiteAction: Equatable {
  /// `POST /runs/ID/cancel`: as `lunar runs cancel ID`.
  case cancel(RunID)
  /// `POST /runs/ID/signal` with `signal` (a name) and `value` (JSON,
  /// `true` when empty): as `lunar runs signal ID NAME VALUE`.
  case signal(RunID, name: LuaString, value: LuaValue)
  /// `POST /runs/ID/resume`: a run that resumes it, for a worker, as
  /// `lunar submit --resume ID FILE ARGS...`.
  case resumeRun(RunID)
  /// `POST /runs/ID/rerun` with `step` (hex): a resume that runs the step
  /// and what needs it again, as `lunar submit --resume ID --force STEP`.
  case rerun(RunID, from: LuaString)
  /// `POST /queues/resume` with `queue` (its name's bytes in hex): as
  /// `lunar queue resume NAME`.
  case resumeQueue(LuaString)
  /// `POST /schedules/pause` with `schedule` (hex): as `lunar schedule pause`.
  case pauseSchedule(LuaString)
  /// `POST /schedules/resume` with `schedule` (hex).
  case resumeSchedule(LuaString)
  /// `POST /schedules/trigger` with `schedule` (hex): a run of it now.
  case triggerSchedule(LuaString)

  /// Why a POST names no action: no such path (405), or fields that do
  /// not read (400, with what is wrong).
  enum Refusal: Error, Equatable {
    case unknownPath
    case badField(String)
  }

  /// The action `path` and `fields` ask for.
  static func read(path: String, fields: [String: String]) throws(Refusal) -> SiteAction {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count >= 3, parts[0].isEmpty else { throw .unknownPath }
    switch (parts[1], parts.count) {
    case ("runs", 4):
      guard let id = Int64(parts[2]), id > 0 else { throw .unknownPath }
      switch parts[3] {
      case "cancel": return .cancel(RunID(id))
      case "signal": return try signal(RunID(id), fields)
      case "resume": return .resumeRun(RunID(id))
      case "rerun": return .rerun(RunID(id), from: try name("step", fields))
      default: throw .unknownPath
      }
    case ("queues", 3) where parts[2] == "resume":
      return .resumeQueue(try name("queue", fields))
    case ("schedules", 3):
      let schedule = try name("schedule", fields)
      switch parts[2] {
      case "pause": return .pauseSchedule(schedule)
      case "resume": return .resumeSchedule(schedule)
      case "trigger": return .triggerSchedule(schedule)
      default: throw .unknownPath
      }
    default:
      throw .unknownPath
    }
  }

  /// The page the browser is sent to once the action is done.
  var page: String {
    switch self {
    case .cancel(let run), .signal(let run, _, _), .resumeRun(let run), .rerun(let run, _): "/runs/\(run.rawValue)"
    case .resumeQueue: "/queues"
    case .pauseSchedule, .resumeSchedule, .triggerSchedule: "/schedules"
    }
  }

  private static func signal(_ run: RunID, _ fields: [String: String]) throws(Refusal) -> SiteAction {
    guard let name = fields["signal"], !name.isEmpty else { throw .badField("a signal needs a name") }
    let text = fields["value"] ?? ""
    guard !text.allSatisfy(\.isWhitespace) else { return .signal(run, name: LuaString(name), value: .boolean(true)) }
    do {
      return .signal(run, name: LuaString(name), value: try JSON.decode(Array(text.utf8)))
    } catch {
      throw .badField("the value is not JSON: \(error) (a text is quoted: \"yes\")")
    }
  }

  /// A name the site's own form carries: its bytes in hex, so a name that
  /// is not UTF-8 comes back byte for byte.
  private static func name(_ field: String, _ fields: [String: String]) throws(Refusal) -> LuaString {
    guard let hex = fields[field], let bytes = HexName.decode(hex), !bytes.isEmpty else {
      throw .badField("no \(field) named")
    }
    return LuaString(bytes: bytes)
  }
}

/// A store's name (bytes) in a form field and back: lower-case hex, two
/// digits a byte.
enum HexName {
  /// `name`'s bytes in hex.
  static func encode(_ name: LuaString) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(name.bytes.count * 2)
    for byte in name.bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 15)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// The bytes `text` spells in hex, or nil if it is not an even count of
  /// hex digits.
  static func decode(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = digit(digits[index]), let low = digit(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
      index += 2
    }
    return bytes
  }

  /// The value of one hex digit, either case.
  static func digit(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
