import LuaKit

/// Whether a Lua pattern is well formed, read as `lstrlib.c` reads it. Lua
/// finds a malformed piece only when a match reaches it (`("x"):find("a[")`
/// is no error), so a pattern given once for every test is read here whole,
/// before any test runs.
enum LuaPatternCheck {
  /// Lua's captures at most (`LUA_MAXCAPTURES`).
  static let maximumCaptures = 32

  /// The error Lua raises when a match reaches the malformed piece of
  /// `pattern` (`malformed pattern (missing ']')`), or nil when it is well
  /// formed. A capture left open is refused too: Lua refuses it in any
  /// match that succeeds.
  static func problem(in pattern: [UInt8]) -> String? {
    let percent = UInt8(ascii: "%")
    var captures: [Bool] = []  // true once closed; position captures are closed at once
    var index = pattern.first == UInt8(ascii: "^") ? 1 : 0
    while index < pattern.count {
      switch pattern[index] {
      case UInt8(ascii: "("):
        guard captures.count < maximumCaptures else { return "too many captures" }
        let isPosition = index + 1 < pattern.count && pattern[index + 1] == UInt8(ascii: ")")
        captures.append(isPosition)
        index += isPosition ? 2 : 1
        continue
      case UInt8(ascii: ")"):
        guard let open = captures.lastIndex(of: false) else { return "invalid pattern capture" }
        captures[open] = true
        index += 1
        continue
      case percent where index + 1 < pattern.count && pattern[index + 1] == UInt8(ascii: "b"):
        guard index + 3 < pattern.count else { return "malformed pattern (missing arguments to '%b')" }
        index += 4
        continue
      case percent where index + 1 < pattern.count && pattern[index + 1] == UInt8(ascii: "f"):
        index += 2
        guard index < pattern.count, pattern[index] == UInt8(ascii: "[") else { return "missing '[' after '%f' in pattern" }
      case percent where index + 1 < pattern.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(pattern[index + 1]):
        let capture = Int(pattern[index + 1]) - Int(UInt8(ascii: "1"))
        guard capture >= 0, capture < captures.count, captures[capture] else { return "invalid capture index %\(capture + 1)" }
        index += 2
        continue
      default:
        break
      }
      // One single-character class, as classEnd reads it.
      switch classEnd(pattern, from: index) {
      case .failure(let problem): return problem.message
      case .success(let end): index = end
      }
    }
    return captures.contains(false) ? "unfinished capture" : nil
  }

  /// Where the class at `index` ends, or Lua's error for it.
  private static func classEnd(_ pattern: [UInt8], from start: Int) -> Result<Int, ClassError> {
    var index = start
    let first = pattern[index]
    index += 1
    if first == UInt8(ascii: "%") {
      guard index < pattern.count else { return .failure(ClassError("malformed pattern (ends with '%')")) }
      return .success(index + 1)
    }
    guard first == UInt8(ascii: "[") else { return .success(index) }
    if index < pattern.count && pattern[index] == UInt8(ascii: "^") { index += 1 }
    // As lstrlib: the first character of a set is never its end (`[]]`).
    repeat {
      guard index < pattern.count else { return .failure(ClassError("malformed pattern (missing ']')")) }
      let byte = pattern[index]
      index += 1
      if byte == UInt8(ascii: "%") && index < pattern.count { index += 1 }
    } while index >= pattern.count || pattern[index] != UInt8(ascii: "]")
    return .success(index + 1)
  }

  private struct ClassError: Error {
    let message: String
    init(_ message: String) { self.message = message }
  }
}
