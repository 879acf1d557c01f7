import LuaKit
import Lunar

/// What the launch providers share: the request and the classification of
/// its failures, the decoding of a JSON body into Codable structs with
/// errors that name the field, and the final ordering.
enum ProviderSupport {
  /// The body of GET `endpoint`, or the failure classified.
  ///
  /// A status outside 200–299 is `.server(code:)` whatever the body says;
  /// status 0 (no HTTP response at all) is `.invalidResponse`.
  static func fetchBody(endpoint: String, http: any HTTPService, timeout: Double) async throws(LaunchFetchError) -> [UInt8] {
    if Task.isCancelled { throw .cancelled }
    let request = HTTPRequest(url: endpoint, headers: ["Accept": "application/json"], timeout: timeout)
    let response: HTTPResponse
    do {
      response = try await http.send(request)
    } catch {
      throw classify(error)
    }
    // A reply that raced the cancel is dropped: a cancelled fetch never succeeds.
    if Task.isCancelled { throw .cancelled }
    try check(status: response.status, endpoint: endpoint)
    return response.body
  }

  /// Refuses statuses outside 200–299.
  static func check(status: Int, endpoint: String) throws(LaunchFetchError) {
    if (200...299).contains(status) { return }
    if status == 0 { throw .invalidResponse }
    throw .server(code: status)
  }

  /// A transport failure as a fetch error.
  static func classify(_ error: any Error) -> LaunchFetchError {
    if let error = error as? LaunchFetchError { return error }
    if error is CancellationError { return .cancelled }
    guard let error = error as? HTTPError else { return .network(String(describing: error)) }
    switch error {
    case .offline: return .offline
    case .timedOut: return .timedOut
    case .cancelled: return .cancelled
    case .status(_, let code, _): return .server(code: code)
    case .invalidJSON(_, let reason): return .invalidData("not JSON: \(reason)")
    case .tooLarge: return .network(error.description)
    case .transport(_, let reason): return .network(reason)
    }
  }

  /// `body` read as JSON and decoded into `T`. Unknown fields are ignored,
  /// null reads as absent; any failure is one `.invalidData` naming the field
  /// as a JSON path with 0-based indices (`result[2].t0`).
  static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(LaunchFetchError) -> T {
    let value: LuaValue
    do {
      value = try JSON.decode(body)
    } catch {
      throw .invalidData("not JSON: \(error)")
    }
    do {
      return try LuaValueDecoder().decode(type, from: value)
    } catch {
      throw .invalidData(message(error))
    }
  }

  /// A conversion error reworded for JSON: its path in JSON terms, its
  /// reason with JSON type names.
  static func message(_ error: LuaConversionError) -> String {
    let reason =
      switch error.reason {
      case .typeMismatch(let expected, let got): "\(jsonType(expected)) expected, got \(jsonType(got))"
      case .missing: "missing field"
      case .other(let text): text
      case .tooDeep(let limit): "nested deeper than \(limit) levels"
      case .notEnoughMemory: "not enough memory"
      case .cycle, .cannotCross, .unsupportedKey: String(describing: error.reason)
      }
    return "\(jsonPath(error.path)): \(reason)"
  }

  /// `result[2].pad.name`: JSON arrays are Lua sequences here, so integer
  /// keys are array positions, shown 0-based as JSON tools do.
  static func jsonPath(_ path: LuaPath) -> String {
    guard !path.keys.isEmpty else { return "body" }
    var text = ""
    for key in path.keys {
      switch key {
      case .integer(let index): text += "[\(index - 1)]"
      case .string(let name):
        let name = name.lossyString
        text += isIdentifier(name) ? (text.isEmpty ? name : "." + name) : "[\"\(name)\"]"
      case .number(let number): text += "[\(number)]"
      case .boolean(let flag): text += "[\(flag)]"
      }
    }
    return text
  }

  private static func isIdentifier(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
    return name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
  }

  private static func jsonType(_ luaType: String) -> String {
    switch luaType {
    case "table": "object or array"
    case "nil": "null"
    default: luaType
    }
  }

  /// `launches` sorted by sort time, ties kept in source order.
  static func ordered(_ launches: [Launch]) -> [Launch] {
    launches.enumerated().sorted { a, b in
      a.element.sortTime != b.element.sortTime ? a.element.sortTime < b.element.sortTime : a.offset < b.offset
    }.map(\.element)
  }

  /// "SLC-40, Cape Canaveral SFS, FL", or whichever part is known; nil
  /// when neither is.
  static func padLabel(_ pad: String?, location: String?) -> String? {
    switch (nonEmpty(pad), nonEmpty(location)) {
    case (let pad?, let location?): "\(pad), \(location)"
    case (let pad?, nil): pad
    case (nil, let location?): location
    case (nil, nil): nil
    }
  }

  /// nil for nil or "".
  static func nonEmpty(_ text: String?) -> String? {
    guard let text, !text.isEmpty else { return nil }
    return text
  }

  /// A quoted sample of bad input for an error message.
  static func quoted(_ text: String) -> String {
    text.count > 60 ? "'\(text.prefix(60))…'" : "'\(text)'"
  }
}

/// Something the sources only name (`{"name": "SpaceX", ...}`); the name
/// may be missing or null (unknown), but not of another type.
struct NamedEntity: Decodable {
  let name: String?
}

/// A mission: its name (required) and its description (may be missing or
/// null).
struct MissionEntity: Decodable {
  let name: String
  let description: String?

  var mission: LaunchMission { LaunchMission(name: name, description: description) }
}

/// An ISO 8601 time field (see `ISO8601.parse`); anything else is invalid
/// data naming the field.
struct ISOTime: Decodable {
  let seconds: Double

  init(from decoder: any Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let seconds = ISO8601.parse(text) else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 time: \(ProviderSupport.quoted(text))"))
    }
    self.seconds = seconds
  }
}

/// Seconds since the epoch, as a decimal string ("1701921600") or a number.
struct EpochSeconds: Decodable {
  let seconds: Double

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let number = try? container.decode(Double.self) {
      guard number.isFinite else { throw Self.error(decoder, "\(number)") }
      seconds = number
      return
    }
    let text = try container.decode(String.self)
    guard Self.isDecimal(text), let number = Double(text), number.isFinite else {
      throw Self.error(decoder, ProviderSupport.quoted(text))
    }
    seconds = number
  }

  /// Digits, optionally signed, optionally with a fraction: no spaces, no
  /// exponents, no "inf".
  private static func isDecimal(_ text: String) -> Bool {
    var bytes = Substring(text).utf8[...]
    if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
    let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
    let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
    return !parts.isEmpty && parts.count <= 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(digits.contains) }
  }

  private static func error(_ decoder: any Decoder, _ shown: String) -> DecodingError {
    DecodingError.dataCorrupted(
      DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not epoch seconds: \(shown)"))
  }
}

/// A JSON array. JSON arrays and objects both arrive as Lua tables, where
/// `{}` and `[]` look alike; an object with keys is refused here instead of
/// reading as an empty list.
struct JSONArray<Element: Decodable>: Decodable {
  let elements: [Element]

  init(from decoder: any Decoder) throws {
    if let object = try? decoder.container(keyedBy: NameKey.self), !object.allKeys.isEmpty {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "array expected, got object"))
    }
    elements = try decoder.singleValueContainer().decode([Element].self)
  }

  /// Only string keys: array positions are not names.
  private struct NameKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }
}
