/// The secret a request must carry when `lunar serve` listens beyond
/// loopback: compared in constant time, kept after the first request in
/// an HttpOnly, SameSite=Strict cookie.
public struct AccessToken: Sendable {
  /// The cookie that keeps the token.
  public static let cookieName = "lunar_token"
  private let secret: [UInt8]

  /// A token with the bytes of `secret`.
  public init(_ secret: String) { self.secret = Array(secret.utf8) }

  /// Whether `given` is the token: every byte is compared whatever the
  /// first difference, so the time taken tells nothing of the secret.
  public func matches(_ given: String) -> Bool {
    let bytes = Array(given.utf8)
    var difference = UInt8(truncatingIfNeeded: bytes.count ^ secret.count)
    for index in 0..<secret.count {
      difference |= secret[index] ^ (index < bytes.count ? bytes[index] : 0)
    }
    return difference == 0
  }

  /// Whether `request` carries the token: `Authorization: Bearer T`, the
  /// cookie, or `?token=T` (a link someone was given).
  public func admits(_ request: WebRequest) -> Bool {
    let bearer = request.header("authorization").flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
    return [bearer, request.cookie(Self.cookieName), request.arguments["token"]].contains { $0.map(matches) ?? false }
  }

  /// The Set-Cookie value that keeps the token for this browser session.
  public var cookie: String {
    "\(Self.cookieName)=\(String(decoding: secret, as: UTF8.self)); Path=/; HttpOnly; SameSite=Strict"
  }
}
