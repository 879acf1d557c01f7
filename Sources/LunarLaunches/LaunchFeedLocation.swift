/// Where a launch provider reads its JSON document.
public enum LaunchFeedLocation: Sendable, Equatable, CustomStringConvertible {
  /// An `http://` or `https://` URL, fetched through the HTTP service.
  case web(String)
  /// A local file, read by Lunar itself (regular files of bounded size),
  /// never through libcurl. The Lua module refuses it under `--sandbox`.
  case file(path: String)
  /// The provider's sample feed, shipped inside Lunar: works offline.
  case sample

  /// A `file:` URL (`file:///path`, `file://localhost/path`) is a local
  /// file; anything else is a web URL, which the HTTP service refuses unless
  /// it is `http` or `https`.
  public init(endpoint: String) {
    if let path = Self.filePath(endpoint) {
      self = .file(path: path)
    } else {
      self = .web(endpoint)
    }
  }

  /// True for any `file:` URL, whether or not it names a usable path.
  public static func isFileURL(_ endpoint: String) -> Bool {
    endpoint.utf8.count >= 5 && String(decoding: endpoint.utf8.prefix(5), as: UTF8.self).lowercased() == "file:"
  }

  /// The path of a `file:` URL; a URL naming another host, or no absolute
  /// path, gives a path that cannot be opened rather than a web URL.
  private static func filePath(_ endpoint: String) -> String? {
    guard isFileURL(endpoint) else { return nil }
    var rest = Substring(endpoint).dropFirst(5)
    if rest.hasPrefix("//") {
      rest = rest.dropFirst(2)
      let host = rest.prefix { $0 != "/" }
      guard host.isEmpty || host.lowercased() == "localhost" else { return "//" + rest }
      rest = rest.dropFirst(host.count)
    }
    return String(rest)
  }

  public var description: String {
    switch self {
    case .web(let url): url
    case .file(let path): "file://" + path
    case .sample: "the shipped sample"
    }
  }
}
