import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 spoken by hand over a socket to 127.0.0.1: every byte of the
/// request is the test's (raw `/../` paths, oversize headers, a client that
/// sends half a request), and the answer is read until the server closes.
public enum RawHTTPClient {
  /// An answer: the status, the headers (lower-case names) and the body.
  public struct Answer: Sendable {
    public var status: Int
    /// By lower-case name; a header sent more than once has each value on a line.
    public var headers: [String: String]
    public var body: String
  }

  /// Why no answer came.
  public struct Failure: Error, CustomStringConvertible {
    public var description: String
  }

  /// Sends `request` (the whole request, `Connection: close` added if
  /// missing by the caller's choice) and reads the answer.
  public static func send(_ request: [UInt8], port: UInt16, timeout: TimeInterval = 10) throws -> Answer {
    let socket = try connect(port: port, timeout: timeout)
    defer { close(socket) }
    var sent = 0
    while sent < request.count {
      let wrote = request[sent...].withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
      // The server may answer and close before taking a body it refuses.
      if wrote <= 0 { break }
      sent += wrote
    }
    return try parse(readAll(socket))
  }

  /// `GET path` with `headers`.
  public static func get(_ path: String, port: UInt16, headers: [String: String] = [:]) throws -> Answer {
    try send(Array(head("GET", path, headers: headers).utf8), port: port)
  }

  /// `method path` with `headers` and `body`.
  public static func request(
    _ method: String, _ path: String, port: UInt16, headers: [String: String] = [:], body: String = ""
  ) throws -> Answer {
    var all = headers
    all["Content-Length"] = String(body.utf8.count)
    return try send(Array((head(method, path, headers: all) + body).utf8), port: port)
  }

  /// Opens a connection and sends `partial` only, then waits: what a slow
  /// client does. Returns the seconds until the server closed it.
  public static func secondsUntilClosed(sending partial: String, port: UInt16, timeout: TimeInterval = 60) throws -> TimeInterval {
    let socket = try connect(port: port, timeout: timeout)
    defer { close(socket) }
    _ = Array(partial.utf8).withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
    let started = Date()
    _ = try readAll(socket)
    return Date().timeIntervalSince(started)
  }

  private static func head(_ method: String, _ path: String, headers: [String: String]) -> String {
    var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
    return text + "\r\n"
  }

  private static func connect(port: UInt16, timeout: TimeInterval) throws -> Int32 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
    var wait = timeval(tv_sec: Int(timeout), tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
      close(socket)
      throw Failure(description: "connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
    }
    return socket
  }

  private static func readAll(_ socket: Int32) throws -> [UInt8] {
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let got = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
      if got == 0 { return answer }
      if got < 0 {
        if errno == EINTR { continue }
        if errno == ECONNRESET { return answer }
        throw Failure(description: "no answer: \(String(cString: strerror(errno)))")
      }
      answer += buffer[0..<got]
    }
  }

  private static func parse(_ bytes: [UInt8]) throws -> Answer {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let end = text.range(of: "\r\n\r\n") else { throw Failure(description: "not an HTTP answer: \(text.prefix(200))") }
    let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
    let parts = lines[0].split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(description: "bad status line: \(lines[0])") }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      // A header sent more than once (Set-Cookie) keeps every value, a line each.
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      headers[line[..<colon].lowercased(), default: ""] += headers[line[..<colon].lowercased()] == nil ? value : "\n" + value
    }
    return Answer(status: status, headers: headers, body: String(text[end.upperBound...]))
  }
}
