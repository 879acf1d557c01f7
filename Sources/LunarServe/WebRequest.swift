/// One HTTP request as a page sees it: its method, path, the headers and
/// query arguments the site reads, and its body.
public struct WebRequest: Sendable {
  /// "GET", "POST", ...
  public var method: String
  /// The path, percent-decoded, without its query.
  public var path: String
  /// The headers the site reads, by lower-case name.
  public var headers: [String: String]
  /// The query arguments the site reads, by name.
  public var arguments: [String: String]
  /// The body, at most the server's body limit.
  public var body: [UInt8]
  /// Whether the body was longer than the limit.
  public var bodyTooLarge: Bool

  /// A request; what is not given is empty.
  public init(
    method: String, path: String, headers: [String: String] = [:], arguments: [String: String] = [:], body: [UInt8] = [],
    bodyTooLarge: Bool = false
  ) {
    (self.method, self.path, self.headers, self.arguments, self.body, self.bodyTooLarge) =
      (method, path, headers, arguments, body, bodyTooLarge)
  }

  /// The header `name` (lower case), if sent.
  public func header(_ name: String) -> String? { headers[name] }

  /// The value of cookie `name`, if sent.
  public func cookie(_ name: String) -> String? {
    guard let cookies = headers["cookie"] else { return nil }
    for pair in cookies.split(separator: ";") {
      let parts = pair.split(separator: "=", maxSplits: 1)
      if parts.count == 2 && parts[0].trimmingSpaces == name { return String(parts[1].trimmingSpaces) }
    }
    return nil
  }
}

extension Substring {
  /// Without leading and trailing spaces.
  var trimmingSpaces: Substring {
    var text = self
    while text.first == " " { text.removeFirst() }
    while text.last == " " { text.removeLast() }
    return text
  }
}
