/// Where `lunar serve` listens: `ADDR:PORT` with a numeric IPv4 address,
/// `[IPv6]:PORT`, or `localhost:PORT` (127.0.0.1). Port 0 asks the system
/// for a free one.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
  /// The numeric address.
  public var host: String
  /// The port, 0 for any free one.
  public var port: UInt16

  /// Where `lunar serve` listens unless told: loopback, port 8765.
  public static let standard = ListenAddress(host: "127.0.0.1", port: 8765)

  /// An address and port.
  public init(host: String, port: UInt16) { (self.host, self.port) = (host, port) }

  /// `text` read as `ADDR:PORT`; the error says what is wrong with it.
  public init(parsing text: String) throws(ListenAddressError) {
    let hostPart: Substring
    let portPart: Substring
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
        throw ListenAddressError(text: text, problem: "an IPv6 address is written [ADDR]:PORT")
      }
      hostPart = text[text.index(after: text.startIndex)..<close]
      portPart = text[text.index(close, offsetBy: 2)...]
    } else {
      guard let colon = text.lastIndex(of: ":") else { throw ListenAddressError(text: text, problem: "expected ADDR:PORT") }
      hostPart = text[..<colon]
      portPart = text[text.index(after: colon)...]
    }
    guard let port = UInt16(portPart), portPart.allSatisfy(\.isASCII) else {
      throw ListenAddressError(text: text, problem: "the port must be a number from 0 to 65535")
    }
    let host = hostPart == "localhost" ? "127.0.0.1" : String(hostPart)
    guard Self.isNumeric(host) else {
      throw ListenAddressError(text: text, problem: "the address must be numeric (127.0.0.1, [::1], 0.0.0.0) or localhost")
    }
    self.init(host: host, port: port)
  }

  /// Whether only this machine can reach the address (127.0.0.0/8, ::1).
  public var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }

  /// The URL a browser opens, with `port` (the bound one).
  public func url(port: UInt16) -> String {
    host.contains(":") ? "http://[\(host)]:\(port)/" : "http://\(host):\(port)/"
  }

  public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

  private static func isNumeric(_ host: String) -> Bool {
    if host.contains(":") { return !host.isEmpty && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
    let parts = host.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts.allSatisfy { part in part.count <= 3 && UInt8(part) != nil && part.allSatisfy(\.isASCII) }
  }
}

/// A `--listen` value that is not `ADDR:PORT`.
public struct ListenAddressError: Error, Sendable, Equatable {
  /// What was given.
  public var text: String
  /// What is wrong with it.
  public var problem: String
}
