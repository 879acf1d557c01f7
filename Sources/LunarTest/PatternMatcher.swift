import LuaKit

/// Lua patterns, matched by Lua itself so `--pattern` means what it means
/// to busted.
final class PatternMatcher {
  private let state: LuaState

  init() throws {
    state = try LuaState()
  }

  /// `string.find(text, pattern) ~= nil`; a malformed pattern is an error.
  func find(_ pattern: String, in text: String) throws -> Bool {
    state.getGlobal("string")
    state.pushField("find", of: -1)
    state.push(text)
    state.push(pattern)
    defer { state.top = 0 }
    try state.call(arguments: 2, results: 1)
    return state.type(at: -1) != .nil
  }
}
