/// Turns any `Encodable` value into a `LuaValue`, so Swift data reaches Lua
/// directly instead of through JSON text.
public struct LuaValueEncoder: Sendable {
  /// What error paths start from, as in `value.items[2]`.
  public var rootName: String = "value"

  /// An encoder whose errors name paths from `value`.
  public init() {}

  /// The Lua form of `value`; a nil field is left out, as a Lua table cannot
  /// hold nil. Throws `LuaConversionError` for what Lua cannot represent.
  public func encode<T: Encodable>(_ value: T) throws -> LuaValue {
    let root = LuaEncodingNode(path: LuaPath(rootName))
    try value.encode(to: LuaNodeEncoder(node: root, codingPath: []))
    return try root.resolve()
  }
}

/// The coding key the Lua coders put in coding paths for array positions and
/// `super`, so a coding path can be turned back into a `LuaPath`.
struct LuaCodingKey: CodingKey {
  var stringValue: String
  var intValue: Int?
  /// True for a 0-based array position (Lua's index is one more).
  var isIndex = false

  init(stringValue: String) { self.stringValue = stringValue }

  init(intValue: Int) {
    self.stringValue = String(intValue)
    self.intValue = intValue
  }

  /// The key for the 0-based array position `index`.
  static func index(_ index: Int) -> LuaCodingKey {
    var key = LuaCodingKey(intValue: index)
    key.stringValue = "Index \(index)"
    key.isIndex = true
    return key
  }

  static let `super` = LuaCodingKey(stringValue: "super")
}

/// One place in the value being built. Containers hand out nested encoders
/// that keep writing after the container call returns, hence a class.
private final class LuaEncodingNode {
  /// A value already final, or a node still being filled.
  enum Slot {
    case value(LuaValue)
    case node(LuaEncodingNode)
  }

  let path: LuaPath
  var single: LuaValue?
  var isTable = false
  var fields: [LuaKey: Slot] = [:]
  var elements: [Slot] = []

  init(path: LuaPath) { self.path = path }

  /// The finished value. A node nothing was written to is an empty table,
  /// as for a type whose `encode(to:)` writes nothing.
  func resolve() throws(LuaConversionError) -> LuaValue {
    guard isTable else { return single ?? .table(LuaTable()) }
    var array: [LuaValue] = []
    array.reserveCapacity(elements.count)
    for slot in elements {
      switch slot {
      case .value(let value): array.append(value)
      case .node(let node):
        let value = try node.resolve()
        if case .nil = value { throw LuaValueEncoder.nilElement(at: node.path) }
        array.append(value)
      }
    }
    var keyed: [LuaKey: LuaValue] = [:]
    keyed.reserveCapacity(fields.count)
    for (key, slot) in fields {
      let value: LuaValue
      switch slot {
      case .value(let v): value = v
      case .node(let node): value = try node.resolve()
      }
      if case .nil = value { continue }
      keyed[key] = value
    }
    return .table(LuaTable(array: array, fields: keyed))
  }
}

extension LuaValueEncoder {
  static func nilElement(at path: LuaPath) -> LuaConversionError {
    LuaConversionError(.other("nil cannot be an element of a Lua array"), at: path)
  }

  /// Lua has only signed 64-bit integers; wider unsigned values would wrap.
  static func integer<I: BinaryInteger>(_ value: I, at path: @autoclosure () -> LuaPath)
    throws(LuaConversionError) -> LuaValue
  {
    guard let i = Int64(exactly: value) else {
      throw LuaConversionError(.other("\(value) does not fit in a Lua integer"), at: path())
    }
    return .integer(i)
  }
}

private struct LuaNodeEncoder: Encoder {
  let node: LuaEncodingNode
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    node.isTable = true
    return KeyedEncodingContainer(LuaKeyedEncoder<Key>(node: node, codingPath: codingPath))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    node.isTable = true
    return LuaUnkeyedEncoder(node: node, codingPath: codingPath)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    LuaSingleValueEncoder(node: node, codingPath: codingPath)
  }
}

private struct LuaKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let node: LuaEncodingNode
  let codingPath: [any CodingKey]

  private func luaKey(_ key: some CodingKey) -> LuaKey { .string(LuaString(key.stringValue)) }

  private func set(_ value: LuaValue, _ key: Key) { node.fields[luaKey(key)] = .value(value) }

  private func integer<I: BinaryInteger>(_ value: I, _ key: Key) throws {
    set(try LuaValueEncoder.integer(value, at: node.path.appending(luaKey(key))), key)
  }

  /// A fresh node at `key`, replacing whatever was there.
  private func child(_ key: some CodingKey) -> LuaNodeEncoder {
    let lua = luaKey(key)
    let child = LuaEncodingNode(path: node.path.appending(lua))
    node.fields[lua] = .node(child)
    return LuaNodeEncoder(node: child, codingPath: codingPath + [key])
  }

  mutating func encodeNil(forKey key: Key) throws { node.fields[luaKey(key)] = nil }
  mutating func encode(_ value: Bool, forKey key: Key) throws { set(.boolean(value), key) }
  mutating func encode(_ value: String, forKey key: Key) throws { set(.string(LuaString(value)), key) }
  mutating func encode(_ value: Double, forKey key: Key) throws { set(.number(value), key) }
  mutating func encode(_ value: Float, forKey key: Key) throws { set(.number(Double(value)), key) }
  mutating func encode(_ value: Int, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    try value.encode(to: child(key))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    child(key).container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    child(key).unkeyedContainer()
  }

  mutating func superEncoder() -> any Encoder { child(LuaCodingKey.super) }
  mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
}

private struct LuaUnkeyedEncoder: UnkeyedEncodingContainer {
  let node: LuaEncodingNode
  let codingPath: [any CodingKey]
  var count: Int { node.elements.count }

  /// Where the next element goes, 1-based as Lua counts.
  private var nextPath: LuaPath { node.path.appending(.integer(Int64(node.elements.count + 1))) }

  private func append(_ value: LuaValue) { node.elements.append(.value(value)) }

  private func integer<I: BinaryInteger>(_ value: I) throws {
    append(try LuaValueEncoder.integer(value, at: nextPath))
  }

  private func child() -> LuaNodeEncoder {
    let key = LuaCodingKey.index(node.elements.count)
    let child = LuaEncodingNode(path: nextPath)
    node.elements.append(.node(child))
    return LuaNodeEncoder(node: child, codingPath: codingPath + [key])
  }

  mutating func encodeNil() throws { throw LuaValueEncoder.nilElement(at: nextPath) }
  mutating func encode(_ value: Bool) throws { append(.boolean(value)) }
  mutating func encode(_ value: String) throws { append(.string(LuaString(value))) }
  mutating func encode(_ value: Double) throws { append(.number(value)) }
  mutating func encode(_ value: Float) throws { append(.number(Double(value))) }
  mutating func encode(_ value: Int) throws { try integer(value) }
  mutating func encode(_ value: Int8) throws { try integer(value) }
  mutating func encode(_ value: Int16) throws { try integer(value) }
  mutating func encode(_ value: Int32) throws { try integer(value) }
  mutating func encode(_ value: Int64) throws { try integer(value) }
  mutating func encode(_ value: UInt) throws { try integer(value) }
  mutating func encode(_ value: UInt8) throws { try integer(value) }
  mutating func encode(_ value: UInt16) throws { try integer(value) }
  mutating func encode(_ value: UInt32) throws { try integer(value) }
  mutating func encode(_ value: UInt64) throws { try integer(value) }

  mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: child()) }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    child().container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { child().unkeyedContainer() }
  mutating func superEncoder() -> any Encoder { child() }
}

private struct LuaSingleValueEncoder: SingleValueEncodingContainer {
  let node: LuaEncodingNode
  let codingPath: [any CodingKey]

  private func set(_ value: LuaValue) { node.single = value }
  private func integer<I: BinaryInteger>(_ value: I) throws { set(try LuaValueEncoder.integer(value, at: node.path)) }

  mutating func encodeNil() throws { set(.nil) }
  mutating func encode(_ value: Bool) throws { set(.boolean(value)) }
  mutating func encode(_ value: String) throws { set(.string(LuaString(value))) }
  mutating func encode(_ value: Double) throws { set(.number(value)) }
  mutating func encode(_ value: Float) throws { set(.number(Double(value))) }
  mutating func encode(_ value: Int) throws { try integer(value) }
  mutating func encode(_ value: Int8) throws { try integer(value) }
  mutating func encode(_ value: Int16) throws { try integer(value) }
  mutating func encode(_ value: Int32) throws { try integer(value) }
  mutating func encode(_ value: Int64) throws { try integer(value) }
  mutating func encode(_ value: UInt) throws { try integer(value) }
  mutating func encode(_ value: UInt8) throws { try integer(value) }
  mutating func encode(_ value: UInt16) throws { try integer(value) }
  mutating func encode(_ value: UInt32) throws { try integer(value) }
  mutating func encode(_ value: UInt64) throws { try integer(value) }

  /// Same node: a single value container forwards to the value's own encoding.
  mutating func encode<T: Encodable>(_ value: T) throws {
    try value.encode(to: LuaNodeEncoder(node: node, codingPath: codingPath))
  }
}
