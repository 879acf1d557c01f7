/// Why a list of values could not be encoded, or bytes could not be decoded,
/// by `LuaValueCodec`.
public struct LuaValueCodecError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The kinds of failure.
  public enum Reason: Sendable, Equatable {
    /// Encoding: tables nested deeper than the bound Lua values can have.
    case tooDeep(limit: Int)
    /// Encoding: a key that no Lua table holds in its keyed part (a NaN or
    /// integral float, an integer that belongs to the array part).
    case keyNotFromLua(LuaKey)
    /// Decoding: bytes of a format this Lunar does not read.
    case unsupportedVersion(UInt8)
    /// Decoding: the bytes end inside a value.
    case truncated
    /// Decoding: bytes follow the last value.
    case trailingBytes(count: Int)
    /// Decoding: a byte that starts no kind of value.
    case unknownTag(UInt8)
    /// Decoding: bytes the encoder never writes (a length past the end, a
    /// padded number, keys out of order, a nil inside a table, ...).
    case malformed(String)
  }

  /// What went wrong.
  public var reason: Reason
  /// Encoding: where the offending value sits (`values[1].items[3]`).
  public var path: LuaPath?
  /// Decoding: the position of the offending byte.
  public var offset: Int?

  /// An encoding error at `path`.
  public init(_ reason: Reason, at path: LuaPath) {
    self.reason = reason
    self.path = path
  }

  /// A decoding error at byte `offset`.
  public init(_ reason: Reason, offset: Int) {
    self.reason = reason
    self.offset = offset
  }

  public var description: String {
    let place = path.map { "\($0): " } ?? ""
    let at = offset.map { " at byte \($0)" } ?? ""
    switch reason {
    case .tooDeep(let limit): return "\(place)tables nested deeper than \(limit) levels cannot be stored"
    case .keyNotFromLua(let key): return "\(place)key \(key.value) cannot be stored: no Lua table holds it as a field"
    case .unsupportedVersion(let version):
      return "stored value has format \(version); this Lunar reads format \(LuaValueCodec.version) (written by a newer Lunar?)"
    case .truncated: return "stored value is damaged: it ends\(at) inside a value"
    case .trailingBytes(let count): return "stored value is damaged: \(count) stray bytes\(at)"
    case .unknownTag(let tag): return "stored value is damaged: unknown tag \(tag)\(at)"
    case .malformed(let what): return "stored value is damaged\(at): \(what)"
    }
  }
}
