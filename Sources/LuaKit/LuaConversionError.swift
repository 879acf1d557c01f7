/// Why a value could not cross between Lua and Swift, and where it sits.
public struct LuaConversionError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The kinds of refusal.
  public enum Reason: Sendable, Equatable {
    /// A function, userdata or thread: these live in one Lua state only.
    case cannotCross(typeName: String)
    /// A table that contains itself.
    case cycle
    /// Nesting deeper than the bound.
    case tooDeep(limit: Int)
    /// A key that is not a plain value (a table, a function, ...).
    case unsupportedKey(typeName: String)
    /// A value of the wrong kind for a Swift type being decoded.
    case typeMismatch(expected: String, got: String)
    /// A field a Swift type needs and the table lacks.
    case missing
    /// Copying it would pass the state's memory limit.
    case notEnoughMemory
    /// Anything else, in words.
    case other(String)
  }

  /// Where the offending value sits.
  public var path: LuaPath
  /// What is wrong with it.
  public var reason: Reason

  /// An error for the value at `path`.
  public init(_ reason: Reason, at path: LuaPath) {
    self.reason = reason
    self.path = path
  }

  public var description: String {
    switch reason {
    case .cannotCross(let type): "\(path): a \(type) cannot cross into Swift"
    case .cycle: "\(path): a table that contains itself cannot cross into Swift"
    case .tooDeep(let limit): "\(path): tables nested deeper than \(limit) levels cannot cross into Swift"
    case .unsupportedKey(let type): "\(path): a \(type) key cannot cross into Swift"
    case .typeMismatch(let expected, let got): "\(path): \(expected) expected, got \(got)"
    case .missing: "\(path): missing field"
    case .notEnoughMemory: "not enough memory"
    case .other(let text): "\(path): \(text)"
    }
  }
}
