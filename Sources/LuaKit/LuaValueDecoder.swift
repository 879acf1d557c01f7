/// Builds any `Decodable` value from a `LuaValue`, so Lua data reaches Swift
/// types directly instead of through JSON text.
public struct LuaValueDecoder: Sendable {
  /// What error paths start from, for example `payload` or `argument #1`.
  public var rootName: String = "value"

  /// A decoder whose errors name paths from `value`.
  public init() {}

  /// The `T` that `value` describes. Every failure, the type's own included,
  /// is a `LuaConversionError` whose path reads like Lua: `value.items[2].age`.
  public func decode<T: Decodable>(_ type: T.Type, from value: LuaValue) throws(LuaConversionError) -> T {
    try LuaNodeDecoder(value: value, path: LuaPath(rootName), codingPath: []).decodeValue(type)
  }
}

/// Reads one value. Carries the Lua path next to the coding path so errors
/// name the real Lua key (`[3]` or `.name`), not a guess from coding keys.
private struct LuaNodeDecoder: Decoder {
  let value: LuaValue
  let path: LuaPath
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(LuaKeyedDecoder<Key>(table: try table(), path: path, codingPath: codingPath))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    LuaUnkeyedDecoder(elements: try table().array, path: path, codingPath: codingPath)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    LuaSingleValueDecoder(decoder: self)
  }

  private func table() throws(LuaConversionError) -> LuaTable {
    guard case .table(let table) = value else { throw mismatch("table") }
    return table
  }

  /// Decodes through `T`'s own `init(from:)`, turning whatever it throws into
  /// a `LuaConversionError` here, where the path is still known exactly.
  func decodeValue<T: Decodable>(_ type: T.Type) throws(LuaConversionError) -> T {
    do {
      return try T(from: self)
    } catch let error as LuaConversionError {
      throw error
    } catch {
      throw translate(error)
    }
  }

  func mismatch(_ expected: String) -> LuaConversionError {
    LuaConversionError(.typeMismatch(expected: expected, got: value.typeName), at: path)
  }

  /// A foreign error as a `LuaConversionError`. A `DecodingError`'s coding
  /// path, when it reaches below this value, extends the Lua path.
  private func translate(_ error: any Error) -> LuaConversionError {
    guard let decodingError = error as? DecodingError else {
      return LuaConversionError(.other(String(describing: error)), at: path)
    }
    func at(_ context: DecodingError.Context) -> LuaPath {
      guard context.codingPath.count > codingPath.count else { return path }
      return context.codingPath[codingPath.count...].reduce(path) { $0.appending(Self.luaKey($1)) }
    }
    switch decodingError {
    case .keyNotFound(let key, let context):
      return LuaConversionError(.missing, at: at(context).appending(Self.luaKey(key)))
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
      return LuaConversionError(.other(context.debugDescription), at: at(context))
    @unknown default:
      return LuaConversionError(.other(String(describing: error)), at: path)
    }
  }

  /// The Lua key a coding key most likely stands for: 1-based for array
  /// positions, an integer for integer dictionary keys, else a string.
  static func luaKey(_ key: any CodingKey) -> LuaKey {
    if let key = key as? LuaCodingKey, key.isIndex, let index = key.intValue { return .integer(Int64(index) + 1) }
    if let int = key.intValue, key.stringValue == String(int) { return .integer(Int64(int)) }
    return .string(LuaString(key.stringValue))
  }

  func decodeBool() throws(LuaConversionError) -> Bool {
    guard case .boolean(let b) = value else { throw mismatch("boolean") }
    return b
  }

  func decodeString() throws(LuaConversionError) -> String {
    guard case .string(let s) = value else { throw mismatch("string") }
    guard let string = s.string else { throw LuaConversionError(.other("string is not valid UTF-8"), at: path) }
    return string
  }

  /// Follows `math.tointeger`: a float counts when its value is integral.
  func decodeInteger<I: FixedWidthInteger>(_ type: I.Type) throws(LuaConversionError) -> I {
    switch value {
    case .integer(let i):
      guard let result = I(exactly: i) else { throw outOfRange(String(i), type) }
      return result
    case .number(let d):
      if let result = I(exactly: d) { return result }
      guard d.isFinite, d.rounded(.towardZero) == d else {
        throw LuaConversionError(.other("number has no integer representation"), at: path)
      }
      throw outOfRange(LuaValue.format(d), type)
    default:
      throw mismatch("integer")
    }
  }

  /// Either number kind; a finite float too large for `F` is refused rather
  /// than turned into infinity.
  func decodeFloat<F: BinaryFloatingPoint>(_ type: F.Type) throws(LuaConversionError) -> F {
    switch value {
    case .integer(let i): return F(i)
    case .number(let d):
      let result = F(d)
      if d.isFinite, !result.isFinite { throw outOfRange(LuaValue.format(d), type) }
      return result
    default:
      throw mismatch("number")
    }
  }

  private func outOfRange(_ text: String, _ type: Any.Type) -> LuaConversionError {
    LuaConversionError(.other("\(text) is out of range for \(type)"), at: path)
  }
}

private struct LuaKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let table: LuaTable
  let path: LuaPath
  let codingPath: [any CodingKey]

  /// String keys as themselves; integer keys (array part included) for key
  /// types that accept them, such as `[Int: T]` or `Int`-valued coding keys.
  var allKeys: [Key] {
    var keys: [Key] = []
    for index in table.array.indices {
      if let key = Key(intValue: index + 1) { keys.append(key) }
    }
    for luaKey in table.fields.keys {
      switch luaKey {
      case .string(let s):
        if let name = s.string, let key = Key(stringValue: name) { keys.append(key) }
      case .integer(let i):
        if let int = Int(exactly: i), let key = Key(intValue: int) { keys.append(key) }
      case .boolean, .number:
        break
      }
    }
    return keys
  }

  /// The entry for `key`: its string form first, then its integer form.
  private func entry(_ key: any CodingKey) -> (key: LuaKey, value: LuaValue)? {
    let name = LuaKey.string(LuaString(key.stringValue))
    let byName = table[name]
    if case .nil = byName {} else { return (name, byName) }
    if let int = key.intValue {
      let number = LuaKey.integer(Int64(int))
      let byNumber = table[number]
      if case .nil = byNumber {} else { return (number, byNumber) }
    }
    return nil
  }

  /// The decoder for a field that must be present.
  private func decoder(_ key: Key) throws(LuaConversionError) -> LuaNodeDecoder {
    guard let (luaKey, value) = entry(key) else {
      throw LuaConversionError(.missing, at: path.appending(LuaNodeDecoder.luaKey(key)))
    }
    return LuaNodeDecoder(value: value, path: path.appending(luaKey), codingPath: codingPath + [key])
  }

  /// The decoder for a field that may be absent, which reads as nil.
  private func optionalDecoder(_ key: any CodingKey) -> LuaNodeDecoder {
    if let (luaKey, value) = entry(key) {
      return LuaNodeDecoder(value: value, path: path.appending(luaKey), codingPath: codingPath + [key])
    }
    return LuaNodeDecoder(value: .nil, path: path.appending(LuaNodeDecoder.luaKey(key)), codingPath: codingPath + [key])
  }

  func contains(_ key: Key) -> Bool { entry(key) != nil }
  func decodeNil(forKey key: Key) throws -> Bool { entry(key) == nil }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(key).decodeBool() }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(key).decodeString() }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(key).decodeFloat(type) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(key).decodeFloat(type) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(key).decodeInteger(type) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(key).decodeInteger(type) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(key).decodeInteger(type) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(key).decodeInteger(type) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(key).decodeInteger(type) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(key).decodeInteger(type) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(key).decodeInteger(type) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(key).decodeInteger(type) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(key).decodeInteger(type) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(key).decodeInteger(type) }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try decoder(key).decodeValue(type)
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try decoder(key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try decoder(key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder { optionalDecoder(LuaCodingKey.super) }
  func superDecoder(forKey key: Key) throws -> any Decoder { optionalDecoder(key) }
}

private struct LuaUnkeyedDecoder: UnkeyedDecodingContainer {
  let elements: [LuaValue]
  let path: LuaPath
  let codingPath: [any CodingKey]
  /// Moves only after a successful decode, so a caller may retry an element
  /// as another type.
  private(set) var currentIndex = 0

  init(elements: [LuaValue], path: LuaPath, codingPath: [any CodingKey]) {
    self.elements = elements
    self.path = path
    self.codingPath = codingPath
  }

  var count: Int? { elements.count }
  var isAtEnd: Bool { currentIndex >= elements.count }

  private func current() throws(LuaConversionError) -> LuaNodeDecoder {
    let elementPath = path.appending(.integer(Int64(currentIndex) + 1))
    guard !isAtEnd else { throw LuaConversionError(.missing, at: elementPath) }
    return LuaNodeDecoder(
      value: elements[currentIndex], path: elementPath, codingPath: codingPath + [LuaCodingKey.index(currentIndex)])
  }

  /// Steps past the element just decoded; called with its result, so a
  /// throwing decode leaves the index where it was.
  private mutating func advance<T>(_ result: T) -> T {
    currentIndex += 1
    return result
  }

  /// An array part never holds nil, so only the end is reported.
  mutating func decodeNil() throws -> Bool {
    _ = try current()
    return false
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { advance(try current().decodeBool()) }
  mutating func decode(_ type: String.Type) throws -> String { advance(try current().decodeString()) }
  mutating func decode(_ type: Double.Type) throws -> Double { advance(try current().decodeFloat(type)) }
  mutating func decode(_ type: Float.Type) throws -> Float { advance(try current().decodeFloat(type)) }
  mutating func decode(_ type: Int.Type) throws -> Int { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { advance(try current().decodeInteger(type)) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { advance(try current().decodeInteger(type)) }
  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { advance(try current().decodeValue(type)) }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    advance(try current().container(keyedBy: type))
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    advance(try current().unkeyedContainer())
  }

  mutating func superDecoder() throws -> any Decoder { advance(try current()) }
}

private struct LuaSingleValueDecoder: SingleValueDecodingContainer {
  let decoder: LuaNodeDecoder
  var codingPath: [any CodingKey] { decoder.codingPath }

  func decodeNil() -> Bool {
    if case .nil = decoder.value { return true }
    return false
  }

  func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool() }
  func decode(_ type: String.Type) throws -> String { try decoder.decodeString() }
  func decode(_ type: Double.Type) throws -> Double { try decoder.decodeFloat(type) }
  func decode(_ type: Float.Type) throws -> Float { try decoder.decodeFloat(type) }
  func decode(_ type: Int.Type) throws -> Int { try decoder.decodeInteger(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try decoder.decodeInteger(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try decoder.decodeInteger(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try decoder.decodeInteger(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try decoder.decodeInteger(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.decodeInteger(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.decodeInteger(type) }

  func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
}
