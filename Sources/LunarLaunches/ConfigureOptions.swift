import LuaKit
import Lunar

/// The options table of `launches.configure{ endpoints =, samples =,
/// cooldown = }`, checked: every field, and no other.
struct ConfigureOptions {
  /// The new location of each source the options name (all of them for
  /// `samples`); sources not named keep theirs.
  let locations: [String: LaunchFeedLocation]
  /// The cooldown, when given.
  let cooldown: Double?

  /// The fields `configure` reads.
  static let fields = ["endpoints", "samples", "cooldown"]

  /// `value` read against the `known` sources; `samples = false` puts every
  /// source back at its location in `defaults`. Under the sandbox a local
  /// file is refused: only the command line and the environment choose the
  /// files Lunar reads.
  init(_ value: LuaValue, known: [String], defaults: [String: LaunchFeedLocation], sandboxed: Bool) throws(LuaArgumentError) {
    guard case .table(let options) = value else { throw .type(1, expected: "table") }
    try OptionField.refuseUnknownFields(of: options, known: Self.fields, argument: 1)
    var locations: [String: LaunchFeedLocation] = [:]
    switch options["samples"] {
    case .nil: break
    case .boolean(true):
      guard options["endpoints"] == .nil else { throw .invalid(1, "give 'samples' or 'endpoints', not both") }
      for source in known { locations[source] = .sample }
    case .boolean(false):
      for source in known { locations[source] = defaults[source] }
    case let other: throw .invalid(1, "field 'samples' must be a boolean, got \(other.typeName)")
    }
    switch options["endpoints"] {
    case .nil: break
    case .table(let endpoints):
      guard endpoints.array.isEmpty else { throw .invalid(1, "field 'endpoints' must map source names to URLs") }
      for (key, endpoint) in endpoints.fields.sorted(by: { $0.key.description < $1.key.description }) {
        guard case .string(let name) = key, let source = known.first(where: { LuaString($0) == name }) else {
          let shown = if case .string(let name) = key { "'\(name.lossyString)'" } else { key.description }
          throw .invalid(1, "field 'endpoints' names an unknown source, \(shown) (\(known.joined(separator: ", ")))")
        }
        guard case .string(let url) = endpoint else {
          throw .invalid(1, "endpoints['\(source)'] must be a URL, got \(endpoint.typeName)")
        }
        let text = url.lossyString
        guard Self.isWebURL(text) || LaunchFeedLocation.isFileURL(text) else {
          throw .invalid(1, "endpoints['\(source)'] must be an http(s):// or file:// URL, got '\(text)'")
        }
        let location = LaunchFeedLocation(endpoint: text)
        if sandboxed, case .file = location {
          throw .invalid(1, "endpoints['\(source)'] is a local file, refused under --sandbox")
        }
        locations[source] = location
      }
    case let other: throw .invalid(1, "field 'endpoints' must be a table of URLs by source, got \(other.typeName)")
    }
    self.locations = locations
    cooldown = try OptionField("cooldown", argument: 1).seconds(options["cooldown"])
  }

  /// True for `http://` and `https://` URLs (the scheme in any case).
  static func isWebURL(_ text: String) -> Bool {
    let scheme = text.prefix { $0 != ":" }.lowercased()
    return (scheme == "http" || scheme == "https") && text.dropFirst(scheme.count).hasPrefix("://")
  }
}
