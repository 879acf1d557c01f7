import Foundation
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 for tests: answers each request with
/// whatever the handler says, can delay or hold responses until released,
/// and counts requests.
public final class TestHTTPServer: @unchecked Sendable {
  // Safe: `socketFD` and `port` are set in init before any thread starts;
  // everything else is behind `state`.
  public struct Reply: Sendable {
    public var status = 200
    public var body = ""
    /// The body as bytes, sent instead of `body` (for bytes that are not UTF-8).
    public var bytes: [UInt8]?
    public var contentType = "application/json"
    /// Seconds to wait before answering.
    public var delay: Double = 0
    /// Hold the answer until `release()` is called.
    public var hold = false
    /// More header lines (`Location` for a redirect).
    public var headers: [String: String] = [:]

    public init(
      status: Int = 200, body: String = "", contentType: String = "application/json", delay: Double = 0, hold: Bool = false,
      headers: [String: String] = [:], bytes: [UInt8]? = nil
    ) {
      self.status = status
      self.body = body
      self.bytes = bytes
      self.contentType = contentType
      self.delay = delay
      self.hold = hold
      self.headers = headers
    }
  }

  public struct Received: Sendable {
    public let method: String
    public let path: String
    public let body: String
  }

  private let socketFD: Int32
  public let port: Int
  private let handler: @Sendable (Received) -> Reply
  private let state = Mutex<(received: [Received], released: Bool, open: Bool)>(([], false, true))

  public init(_ handler: @escaping @Sendable (Received) -> Reply) throws {
    self.handler = handler
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    self.socketFD = socketFD
    var yes: Int32 = 1
    setsockopt(socketFD, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(socketFD, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(socketFD, $0, &length) }
    }
    port = Int(UInt16(bigEndian: address.sin_port))
    let thread = Thread { [self] in self.acceptLoop() }
    thread.start()
  }

  /// The base URL (`http://127.0.0.1:PORT`).
  public var url: String { "http://127.0.0.1:\(port)" }

  /// Requests received so far.
  public var requests: [Received] { state.withLock { $0.received } }

  /// Lets held replies go.
  public func release() { state.withLock { $0.released = true } }

  /// Stops accepting connections.
  public func stop() {
    state.withLock { $0.open = false }
    shutdown(socketFD, Int32(SHUT_RDWR))
    close(socketFD)
  }

  deinit { if state.withLock({ $0.open }) { stop() } }

  private func acceptLoop() {
    while state.withLock({ $0.open }) {
      let client = accept(socketFD, nil, nil)
      if client < 0 { return }
      let thread = Thread { [self] in self.serve(client) }
      thread.start()
    }
  }

  private func serve(_ client: Int32) {
    defer { close(client) }
    var data = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 65536)
    var headerEnd: Int?
    var contentLength = 0
    while true {
      let count = recv(client, &buffer, buffer.count, 0)
      if count <= 0 { return }
      data += buffer[..<count]
      if headerEnd == nil, let range = data.firstRange(of: Array("\r\n\r\n".utf8)) {
        headerEnd = range.upperBound
        let head = String(decoding: data[..<range.lowerBound], as: UTF8.self)
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
          contentLength = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
      }
      if let end = headerEnd, data.count >= end + contentLength { break }
    }
    let head = String(decoding: data[..<headerEnd!], as: UTF8.self)
    let requestLine = head.split(separator: "\r\n").first?.split(separator: " ") ?? []
    let received = Received(
      method: requestLine.count > 0 ? String(requestLine[0]) : "?",
      path: requestLine.count > 1 ? String(requestLine[1]) : "/",
      body: String(decoding: data[headerEnd!...], as: UTF8.self))
    state.withLock { $0.received.append(received) }
    let reply = handler(received)
    if reply.delay > 0 { usleep(UInt32(reply.delay * 1_000_000)) }
    if reply.hold {
      while !state.withLock({ $0.released }) { usleep(1000) }
    }
    let body = reply.bytes ?? Array(reply.body.utf8)
    let extra = reply.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
    let response = "HTTP/1.1 \(reply.status) Status\r\nContent-Type: \(reply.contentType)\r\nContent-Length: \(body.count)\r\n\(extra)Connection: close\r\n\r\n"
    let bytes = Array(response.utf8) + body
    _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }
}
