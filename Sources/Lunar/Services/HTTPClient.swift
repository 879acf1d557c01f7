import CHTTP
import LuaKit

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP request.
public struct HTTPRequest: Sendable, Equatable {
  public var method: String
  public var url: String
  public var headers: [String: String]
  public var body: [UInt8]?
  /// Seconds before the request gives up; 0 for none.
  public var timeout: Double

  public init(method: String = "GET", url: String, headers: [String: String] = [:], body: [UInt8]? = nil, timeout: Double = 30) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.timeout = timeout
  }
}

/// An HTTP response, whatever its status.
public struct HTTPResponse: Sendable, Equatable {
  public var status: Int
  public var body: [UInt8]
  public var contentType: String?

  public init(status: Int, body: [UInt8], contentType: String? = nil) {
    self.status = status
    self.body = body
    self.contentType = contentType
  }

  /// The body as text (invalid UTF-8 replaced).
  public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Why a request failed.
public enum HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Could not resolve or connect: offline, or the server is down.
  case offline(url: String, reason: String)
  case timedOut(url: String)
  case cancelled
  /// A status outside 200–299 (the body is kept).
  case status(url: String, code: Int, body: String)
  /// The body is not the JSON it should be.
  case invalidJSON(url: String, reason: String)
  case tooLarge(url: String)
  /// Any other transport failure, or libcurl missing.
  case transport(url: String, reason: String)

  public var description: String {
    switch self {
    case .offline(let url, let reason): "cannot reach \(url): \(reason)"
    case .timedOut(let url): "request to \(url) timed out"
    case .cancelled: "request cancelled"
    case .status(let url, let code, _): "\(url) answered HTTP \(code)"
    case .invalidJSON(let url, let reason): "\(url) sent invalid JSON: \(reason)"
    case .tooLarge(let url): "\(url) sent a body over the size limit"
    case .transport(let url, let reason): "request to \(url) failed: \(reason)"
    }
  }
}

/// Sends HTTP requests; the run context's `http` service. Tests replace it.
public protocol HTTPService: Sendable {
  /// Sends `request`; throws `HTTPError` for transport failures (not for
  /// statuses: see `getJSON`/`postJSON`).
  func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

extension HTTPService {
  /// GETs `url` and decodes its JSON; a status outside 200–299 is an error.
  /// With `budget`, the body and the decoded value count against its limit
  /// (`LuaError.notEnoughMemory` if they would pass it).
  public func getJSON(_ url: String, timeout: Double = 30, budget: LuaMemoryBudget? = nil) async throws -> LuaValue {
    try Self.json(
      from: try await send(HTTPRequest(url: url, headers: ["Accept": "application/json"], timeout: timeout)), url: url,
      budget: budget)
  }

  /// POSTs `body` as JSON to `url` and decodes the JSON reply (see `getJSON`).
  public func postJSON(_ url: String, _ body: LuaValue, timeout: Double = 30, budget: LuaMemoryBudget? = nil)
    async throws -> LuaValue
  {
    let request = HTTPRequest(
      method: "POST", url: url, headers: ["Content-Type": "application/json", "Accept": "application/json"],
      body: Array(JSON.encode(body).utf8), timeout: timeout)
    return try Self.json(from: try await send(request), url: url, budget: budget)
  }

  static func json(from response: HTTPResponse, url: String, budget: LuaMemoryBudget? = nil) throws -> LuaValue {
    guard (200...299).contains(response.status) else {
      throw HTTPError.status(url: url, code: response.status, body: String(response.text.prefix(500)))
    }
    // The body and what is decoded from it are held at once: the body is
    // charged while it is read, and decoding stops at what is left.
    let bodyCharge = try budget?.charge(LuaValueSize.string(byteCount: response.body.count))
    defer { withExtendedLifetime(bodyCharge) {} }
    do {
      return try JSON.decode(response.body, allowance: budget?.available ?? .max)
    } catch let error as LuaError {
      throw error
    } catch {
      throw HTTPError.invalidJSON(url: url, reason: "\(error)")
    }
  }
}

/// The real HTTP client: libcurl (loaded on first use), one short-lived
/// thread per request so Swift's cooperative pool never blocks; cancelling
/// the Swift task stops the transfer. It speaks `http` and `https` only,
/// redirects included: a `file://` URL (or a redirect to one) is refused.
public struct CurlHTTPClient: HTTPService {
  /// Bodies larger than this are refused.
  public var maximumBodySize = 64 << 20

  public init() {}

  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    guard Self.isWebURL(request.url) else {
      throw HTTPError.transport(url: request.url, reason: "only http:// and https:// URLs are supported")
    }
    let cancel = CancelFlag()
    let maximum = maximumBodySize
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
        let thread = LoopThread(stackSize: 256 << 10) {
          continuation.resume(with: Result { try CurlHTTPClient.perform(request, cancel: cancel, maximumBody: maximum) })
        }
        thread.detach()
      }
    } onCancel: {
      cancel.set()
    }
  }

  /// True for `http://` and `https://` URLs, in any case.
  static func isWebURL(_ url: String) -> Bool {
    let scheme = url.utf8.prefix { $0 != UInt8(ascii: ":") }
    guard scheme.count < url.utf8.count, url.utf8.dropFirst(scheme.count).starts(with: "://".utf8) else { return false }
    let name = String(decoding: scheme, as: UTF8.self).lowercased()
    return name == "http" || name == "https"
  }

  static func perform(_ request: HTTPRequest, cancel: CancelFlag, maximumBody: Int) throws -> HTTPResponse {
    var response = lunar_http_response()
    let headerLines = request.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
    var cHeaders = headerLines.map { strdup($0) }
    defer { cHeaders.forEach { free($0) } }
    cHeaders.withUnsafeMutableBufferPointer { headers in
      headers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { constHeaders in
        cancel.withPointer { flag in
          if let body = request.body {
            // A trailing zero keeps the buffer non-empty (an empty body is
            // still a body); libcurl is told the real length.
            (body + [0]).withUnsafeBufferPointer { bytes in
              bytes.withMemoryRebound(to: CChar.self) { chars in
                lunar_http_perform(
                  request.method, request.url, constHeaders.baseAddress, Int32(headers.count), chars.baseAddress,
                  body.count, request.timeout, maximumBody, flag, &response)
              }
            }
          } else {
            lunar_http_perform(
              request.method, request.url, constHeaders.baseAddress, Int32(headers.count), nil, 0, request.timeout,
              maximumBody, flag, &response)
          }
        }
      }
    }
    defer { lunar_http_free(&response) }
    let message = withUnsafeBytes(of: response.message) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    switch response.error {
    case LUNAR_HTTP_OK:
      let body = response.body.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: response.body_length)) } ?? []
      return HTTPResponse(status: Int(response.status), body: body, contentType: response.content_type.map { String(cString: $0) })
    case LUNAR_HTTP_TIMEOUT: throw HTTPError.timedOut(url: request.url)
    case LUNAR_HTTP_CANCELLED: throw HTTPError.cancelled
    case LUNAR_HTTP_CONNECT: throw HTTPError.offline(url: request.url, reason: message)
    case LUNAR_HTTP_TOO_LARGE: throw HTTPError.tooLarge(url: request.url)
    default: throw HTTPError.transport(url: request.url, reason: message)
    }
  }
}

/// A flag libcurl's progress callback reads on the transfer's thread while
/// a cancelling task sets it on another: a C11 atomic, set and read in C.
final class CancelFlag: Sendable {
  private struct Flag: @unchecked Sendable {
    // Safe: the pointer is only passed to lunar_http_cancel_set and
    // lunar_http_perform, which touch the flag with C11 atomic operations;
    // it is freed in deinit, when neither can be running (the transfer's
    // thread and the cancellation handler both hold this object).
    let pointer: OpaquePointer?
  }

  private let flag = Flag(pointer: lunar_http_cancel_new())

  deinit { lunar_http_cancel_free(flag.pointer) }

  /// Asks the request to stop at its next progress callback.
  func set() { lunar_http_cancel_set(flag.pointer) }

  /// Runs `body` with the flag as libcurl's progress callback reads it.
  func withPointer<T>(_ body: (OpaquePointer?) -> T) -> T { body(flag.pointer) }
}
