/// One HTTP answer: a status, headers and a body.
public struct WebResponse: Sendable, Equatable {
  /// The HTTP status code.
  public var status: Int
  /// Header names and values, in order.
  public var headers: [(name: String, value: String)]
  /// The body's bytes.
  public var body: [UInt8]

  /// An answer of `status` with `body` of type `contentType`.
  public init(status: Int, contentType: String, body: [UInt8]) {
    self.status = status
    self.headers = [("Content-Type", contentType)]
    self.body = body
  }

  /// An HTML page.
  public static func html(_ page: String, status: Int = 200) -> WebResponse {
    WebResponse(status: status, contentType: "text/html; charset=utf-8", body: Array(page.utf8))
  }

  /// Plain text.
  public static func text(_ text: String, status: Int) -> WebResponse {
    WebResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
  }

  /// A redirect to `location` that the browser follows with a GET (the
  /// answer to a form's POST, so a reload does not send it again).
  public static func seeOther(_ location: String) -> WebResponse {
    var response = text("303 See Other", status: 303)
    response.headers.append(("Location", location))
    return response
  }

  /// The value of header `name`, compared without case.
  public func header(_ name: String) -> String? {
    headers.first { $0.name.lowercased() == name.lowercased() }?.value
  }

  public static func == (lhs: WebResponse, rhs: WebResponse) -> Bool {
    lhs.status == rhs.status && lhs.body == rhs.body && lhs.headers.map(\.name) == rhs.headers.map(\.name)
      && lhs.headers.map(\.value) == rhs.headers.map(\.value)
  }
}
