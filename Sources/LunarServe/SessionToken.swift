/// The per-session secret that guards actions against cross-site requests:
/// kept in an HttpOnly, SameSite=Strict cookie, and written into each
/// action's form; a POST counts only when its form carries the cookie's
/// value (and its Origin is the site's own).
struct SessionToken: Sendable, Equatable {
  /// The cookie that keeps it.
  static let cookieName = "lunar_session"
  /// 32 random bytes, as 64 hexadecimal digits.
  let value: String

  /// A new, random token.
  static func make() -> SessionToken {
    var generator = SystemRandomNumberGenerator()
    let digits = Array("0123456789abcdef")
    return SessionToken(value: String((0..<64).map { _ in digits[Int(generator.next() % 16)] }))
  }

  /// The session `request` belongs to, if its cookie holds a well-formed token.
  static func of(_ request: WebRequest) -> SessionToken? {
    guard let value = request.cookie(cookieName), value.count == 64, value.allSatisfy(\.isHexDigit) else { return nil }
    return SessionToken(value: value)
  }

  /// The Set-Cookie value that keeps it for this browser session.
  var cookie: String { "\(Self.cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict" }

  /// Whether `given` (a form's field) is this token, compared in constant time.
  func matches(_ given: String) -> Bool { AccessToken(value).matches(given) }
}

/// The fields of a form body (`application/x-www-form-urlencoded`).
enum FormBody {
  /// Each field's decoded value by name; a field given twice keeps its first.
  static func fields(_ body: [UInt8]) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in body.split(separator: UInt8(ascii: "&")) {
      let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = decode(parts[0]) else { continue }
      let value = parts.count > 1 ? decode(parts[1]) : ""
      if fields[name] == nil, let value { fields[name] = value }
    }
    return fields
  }

  private static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
    var out: [UInt8] = []
    var index = bytes.startIndex
    while index < bytes.endIndex {
      let byte = bytes[index]
      if byte == UInt8(ascii: "+") {
        out.append(UInt8(ascii: " "))
      } else if byte == UInt8(ascii: "%") {
        guard bytes.distance(from: index, to: bytes.endIndex) >= 3,
          let high = HexName.digit(bytes[index + 1]), let low = HexName.digit(bytes[index + 2])
        else { return nil }
        out.append(high << 4 | low)
        index += 2
      } else {
        out.append(byte)
      }
      index += 1
    }
    return String(validating: out, as: UTF8.self)
  }
}
