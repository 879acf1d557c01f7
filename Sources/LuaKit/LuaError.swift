/// An error raised by Lua code (or by loading it), as Swift sees it.
public struct LuaError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure Lua reported.
  public enum Kind: Sendable, Equatable {
    case syntax, runtime, memory, handler, file
  }

  /// The failure's kind.
  public var kind: Kind
  /// The message as Lua shows it, position prefix included
  /// (`script.lua:3: boom`); for non-string error values, Lua's own
  /// `(error object is a table value)` wording.
  public var message: String
  /// The error value itself when it could cross (a table keeps its fields).
  public var value: LuaValue
  /// `stack traceback:` and the frames, when known.
  public var traceback: String?

  /// An error with its parts.
  public init(kind: Kind = .runtime, message: String, value: LuaValue? = nil, traceback: String? = nil) {
    self.kind = kind
    self.message = message
    self.value = value ?? .string(LuaString(message))
    self.traceback = traceback
  }

  /// The chunk name from the message's `chunk:line:` prefix, if it has one.
  public var chunk: String? { position?.chunk }

  /// The line from the message's `chunk:line:` prefix, if it has one.
  public var line: Int? { position?.line }

  /// The message without its `chunk:line: ` prefix.
  public var text: String {
    guard let position else { return message }
    return String(message.dropFirst(position.prefixLength))
  }

  private var position: (chunk: String, line: Int, prefixLength: Int)? {
    // "name:123: text" — the name may itself contain colons, so find the
    // first ":digits: " run.
    let scalars = Array(message.utf8)
    var i = 0
    while i < scalars.count {
      if scalars[i] == UInt8(ascii: ":") {
        var j = i + 1
        while j < scalars.count, (0x30...0x39).contains(scalars[j]) { j += 1 }
        if j > i + 1, j + 1 < scalars.count, scalars[j] == UInt8(ascii: ":"), scalars[j + 1] == UInt8(ascii: " ") {
          let chunk = String(decoding: scalars[..<i], as: UTF8.self)
          let line = Int(String(decoding: scalars[(i + 1)..<j], as: UTF8.self)) ?? 0
          return (chunk, line, j + 2)
        }
      }
      i += 1
    }
    return nil
  }

  public var description: String {
    guard let traceback else { return message }
    return message + "\n" + traceback
  }
}
