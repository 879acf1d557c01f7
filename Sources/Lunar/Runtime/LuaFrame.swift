import CLua
import CLuaShim
import LuaKit

/// One frame of a Lua stack, as `debug.getinfo(level, "Sl")` describes it:
/// where a task's failure was raised, for reports that name the function
/// and line (busted's `trace`).
public struct LuaFrame: Sendable, Equatable {
  /// The chunk's name (`@spec/x_spec.lua`).
  public var source: LuaString
  /// The chunk's name as messages print it (`spec/x_spec.lua`).
  public var shortSource: LuaString
  /// The line running in the frame, or -1 when none is known.
  public var currentLine: Int
  /// The first line of the frame's function (0 for a main chunk).
  public var lineDefined: Int
  /// Its last line.
  public var lastLineDefined: Int
  /// `Lua`, `main` or `C`.
  public var what: String

  /// A frame with these fields.
  public init(
    source: LuaString, shortSource: LuaString, currentLine: Int, lineDefined: Int, lastLineDefined: Int, what: String
  ) {
    self.source = source
    self.shortSource = shortSource
    self.currentLine = currentLine
    self.lineDefined = lineDefined
    self.lastLineDefined = lastLineDefined
    self.what = what
  }

  /// The innermost frame of the user's code in `thread` from `level` on,
  /// past C functions and Lunar's own chunks; nil if it has none. Reads a
  /// dead coroutine's stack too, as a traceback does.
  static func user(in thread: OpaquePointer, from level: Int32) -> LuaFrame? {
    var info = lua_Debug()
    guard lunar_userframe(thread, level, &info) != 0 else { return nil }
    let source = info.source.map { LuaString(bytes: Array(UnsafeRawBufferPointer(start: $0, count: info.srclen))) }
    let shortSource = withUnsafeBytes(of: info.short_src) { raw in LuaString(bytes: Array(raw.prefix { $0 != 0 })) }
    return LuaFrame(
      source: source ?? shortSource, shortSource: shortSource, currentLine: Int(info.currentline),
      lineDefined: Int(info.linedefined), lastLineDefined: Int(info.lastlinedefined),
      what: info.what.map { String(cString: $0) } ?? "Lua")
  }
}
