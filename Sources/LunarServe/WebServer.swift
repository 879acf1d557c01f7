import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP server on one address, answering each request with a handler
/// on a thread of its own (libmicrohttpd's, opened on first use): the
/// handler never runs on the caller's thread, and never two at once.
public final class WebServer: Sendable {
  /// What a server needs to know of each request.
  public struct Reading: Sendable {
    /// The headers a handler may read (lower case).
    public var headers: [String]
    /// The query arguments a handler may read.
    public var arguments: [String]

    /// The headers and arguments to read from each request.
    public init(headers: [String], arguments: [String]) { (self.headers, self.arguments) = (headers, arguments) }
  }

  /// Why a server did not start.
  public struct StartError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one line.
    public var description: String
  }

  /// The limits every request is held to.
  public struct Limits: Sendable {
    /// Seconds a connection may stay idle (a slow client) before it is closed.
    public var idleSeconds: UInt32 = 10
    /// Bytes of a request's line and headers; more is answered 431 by the server.
    public var headBytes = 32 * 1024
    /// Bytes of a request's body; more is cut, and the handler told.
    public var bodyBytes = 64 * 1024

    /// The default limits.
    public init() {}
  }

  private let server: SendablePointer
  private let context: Unmanaged<ServerContext>
  /// The port the server listens on (the one the system chose for port 0).
  public let port: UInt16

  /// Starts listening on `host` (a numeric IPv4 or IPv6 address) and `port`.
  public init(
    host: String, port: UInt16, reading: Reading, limits: Limits = Limits(),
    handle: @escaping @Sendable (WebRequest) -> WebResponse
  ) throws(StartError) {
    let retained = Unmanaged.passRetained(ServerContext(reading: reading, handle: handle))
    var message = [CChar](repeating: 0, count: 256)
    let started = lunar_http_start(
      host, host.contains(":") ? 1 : 0, port, answer, retained.toOpaque(), limits.idleSeconds, limits.headBytes,
      limits.bodyBytes, &message, message.count)
    guard let started else {
      retained.release()
      throw StartError(description: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    server = SendablePointer(pointer: started)
    context = retained
    self.port = lunar_http_port(started)
  }

  /// Stops listening; no handler runs once this returns.
  public func stop() {
    guard server.stop() else { return }
    context.release()
  }

  deinit { stop() }
}

/// The C server, stopped once by `stop`. Kept as its address (Sendable):
/// only `stop` turns it back into the pointer, under the lock.
private final class SendablePointer: Sendable {
  private let address: Mutex<UInt>
  init(pointer: UnsafeMutableRawPointer) { address = Mutex(UInt(bitPattern: pointer)) }

  /// Stops the server; true the first time only.
  func stop() -> Bool {
    address.withLock { address in
      guard let pointer = UnsafeMutableRawPointer(bitPattern: address) else { return false }
      address = 0
      lunar_http_stop(pointer)
      return true
    }
  }
}

/// The C callback: reads the request, asks the handler, answers.
private let answer: lunar_http_handler = { context, exchange in
  guard let context, let exchange else { return }
  let server = Unmanaged<ServerContext>.fromOpaque(context).takeUnretainedValue()
  let response = server.handle(server.request(exchange))
  let names = response.headers.map { strdup($0.name) }
  let values = response.headers.map { strdup($0.value) }
  defer {
    names.forEach { free($0) }
    values.forEach { free($0) }
  }
  let constNames = names.map { UnsafePointer($0) }
  let constValues = values.map { UnsafePointer($0) }
  response.body.withUnsafeBytes { body in
    _ = lunar_http_respond(exchange, UInt32(response.status), constNames, constValues, Int32(names.count), body.baseAddress, body.count)
  }
}

/// What the C callback reaches: the handler and what to read for it.
/// Owned by the C server (retained) until `stop`.
private final class ServerContext: Sendable {
  let reading: WebServer.Reading
  let handle: @Sendable (WebRequest) -> WebResponse

  init(reading: WebServer.Reading, handle: @escaping @Sendable (WebRequest) -> WebResponse) {
    (self.reading, self.handle) = (reading, handle)
  }

  /// The request `exchange` holds, with the headers and arguments to read.
  func request(_ exchange: OpaquePointer) -> WebRequest {
    func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
    var headers: [String: String] = [:]
    for name in reading.headers { headers[name] = text(lunar_http_header(exchange, name)) }
    var arguments: [String: String] = [:]
    for name in reading.arguments { arguments[name] = text(lunar_http_argument(exchange, name)) }
    var length = 0
    let body = lunar_http_body(exchange, &length).map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
    return WebRequest(
      method: text(lunar_http_method(exchange)) ?? "GET", path: text(lunar_http_path(exchange)) ?? "/", headers: headers,
      arguments: arguments, body: body.map { $0 }, bodyTooLarge: lunar_http_body_too_large(exchange) != 0)
  }
}
