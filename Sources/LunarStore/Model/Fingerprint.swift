import LuaKit

/// What identifies a step's inputs across runs: the SHA-256 of the
/// canonical encoding (`LuaValueCodec`) of a list of values, for example
/// (uses, input, the outputs of the steps it needs). Equal values give equal
/// fingerprints in every process and every Lunar that reads the format.
public struct Fingerprint: Sendable, Hashable, CustomStringConvertible {
  /// The 32 bytes of the digest.
  public let bytes: [UInt8]

  /// The fingerprint of `values`.
  /// - Throws: `LuaValueCodecError` for values that cannot be stored.
  public init(of values: [LuaValue]) throws(LuaValueCodecError) {
    bytes = SHA256.hash(try LuaValueCodec.encode(values))
  }

  /// The fingerprint of a step's code text (workflow.lua's `step_code` in Lunar): the
  /// SHA-256 of its bytes.
  public init(code: LuaString) {
    bytes = SHA256.hash(code.bytes)
  }

  /// A fingerprint read back from a store; nil unless it has 32 bytes.
  public init?(bytes: [UInt8]) {
    guard bytes.count == SHA256.byteCount else { return nil }
    self.bytes = bytes
  }

  /// Lower-case hexadecimal, as `sha256sum` prints it.
  public var hex: String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  public var description: String { hex }
}
