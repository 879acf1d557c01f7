/// The one binary form of the Lua values Lunar persists (store outputs and
/// inputs, journals, queue payloads): every value comes back bit for bit,
/// and equal values always encode to equal bytes, so a hash of the bytes
/// identifies the values.
///
/// The bytes are a format version, then a list of values, so "no value" (an
/// empty list) differs from `nil`:
///
///     list   = version:u8 (1)  count:varint  value*
///     value  = 0 nil | 1 false | 2 true
///            | 3 zigzag(integer):varint
///            | 4 float bits:u64 little-endian (NaN payload and -0.0 kept)
///            | 5 length:varint bytes
///            | 6 n:varint value{n}  m:varint (key value){m}   (a table)
///
/// A varint is unsigned LEB128 in its shortest form. A table's `n` values are
/// its array part (keys 1...n, no nil); its `m` fields follow in canonical
/// order: booleans, then integers, then floats, then strings; false before
/// true, numbers ascending, strings by bytes. Decoding accepts exactly what
/// encoding writes, and nothing else.
public enum LuaValueCodec {
  /// The format this Lunar writes and reads.
  public static let version: UInt8 = 1

  /// Tables nest at most this deep, as when they are read from Lua.
  public static let maximumDepth = LuaState.maximumDepth

  /// The bytes of `values`.
  /// - Throws: `LuaValueCodecError` for what no Lua value holds: tables
  ///   nested deeper than `maximumDepth`, or a field key Lua would not keep
  ///   as one (a NaN or integral float, an integer of the array part). Its
  ///   path starts at `root` (`output[1].items`).
  public static func encode(_ values: [LuaValue], root: String = "values") throws(LuaValueCodecError) -> [UInt8] {
    var writer = Writer()
    writer.bytes.append(version)
    writer.varint(UInt64(values.count))
    for (index, value) in values.enumerated() {
      try writer.value(value, path: LuaPath(root, keys: [.integer(Int64(index + 1))]), depth: 0)
    }
    return writer.bytes
  }

  /// The values `bytes` hold.
  /// - Throws: `LuaValueCodecError` for anything `encode` would not have
  ///   written: another version, truncation, trailing bytes, unknown tags,
  ///   lengths past the end, non-canonical forms, nesting past the bound.
  public static func decode(_ bytes: [UInt8]) throws(LuaValueCodecError) -> [LuaValue] {
    var reader = Reader(bytes: bytes)
    let format = try reader.byte()
    guard format == version else { throw LuaValueCodecError(.unsupportedVersion(format), offset: 0) }
    let count = try reader.count(minimumBytesEach: 1)
    var values: [LuaValue] = []
    values.reserveCapacity(min(count, Reader.reserveLimit))
    for _ in 0..<count { values.append(try reader.value(depth: 0)) }
    guard reader.position == bytes.count else {
      throw LuaValueCodecError(.trailingBytes(count: bytes.count - reader.position), offset: reader.position)
    }
    return values
  }

  enum Tag {
    static let `nil`: UInt8 = 0
    static let `false`: UInt8 = 1
    static let `true`: UInt8 = 2
    static let integer: UInt8 = 3
    static let float: UInt8 = 4
    static let string: UInt8 = 5
    static let table: UInt8 = 6
  }

  /// The canonical order of field keys: by kind, then by value.
  static func precedes(_ a: LuaKey, _ b: LuaKey) -> Bool {
    switch (a, b) {
    case (.boolean(let x), .boolean(let y)): return !x && y
    case (.integer(let x), .integer(let y)): return x < y
    case (.number(let x), .number(let y)): return x.isTotallyOrdered(belowOrEqualTo: y) && x.bitPattern != y.bitPattern
    case (.string(let x), .string(let y)): return x.bytes.lexicographicallyPrecedes(y.bytes)
    default: return rank(a) < rank(b)
    }
  }

  private static func rank(_ key: LuaKey) -> Int {
    switch key {
    case .boolean: 0
    case .integer: 1
    case .number: 2
    case .string: 3
    }
  }

  /// True if a table with `arrayCount` array elements can hold `key` in its
  /// keyed part, as a table read from Lua does.
  static func isFieldKey(_ key: LuaKey, arrayCount: Int) -> Bool {
    switch key {
    case .boolean, .string: return true
    case .integer(let i): return i < 1 || i > Int64(arrayCount) + 1
    case .number(let d): return !d.isNaN && Int64(exactly: d) == nil
    }
  }

  private struct Writer {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
      var rest = value
      while rest >= 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
        rest >>= 7
      }
      bytes.append(UInt8(rest))
    }

    mutating func value(_ value: LuaValue, path: @autoclosure () -> LuaPath, depth: Int) throws(LuaValueCodecError) {
      switch value {
      case .nil: bytes.append(Tag.nil)
      case .boolean(let b): bytes.append(b ? Tag.true : Tag.false)
      case .integer(let i):
        bytes.append(Tag.integer)
        varint(UInt64(bitPattern: (i << 1) ^ (i >> 63)))
      case .number(let d):
        bytes.append(Tag.float)
        withUnsafeBytes(of: d.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
      case .string(let s):
        bytes.append(Tag.string)
        varint(UInt64(s.bytes.count))
        bytes.append(contentsOf: s.bytes)
      case .table(let table):
        guard depth < maximumDepth else { throw LuaValueCodecError(.tooDeep(limit: maximumDepth), at: path()) }
        bytes.append(Tag.table)
        varint(UInt64(table.array.count))
        for (index, element) in table.array.enumerated() {
          try self.value(element, path: path().appending(.integer(Int64(index + 1))), depth: depth + 1)
        }
        varint(UInt64(table.fields.count))
        for key in table.fields.keys.sorted(by: LuaValueCodec.precedes) {
          guard isFieldKey(key, arrayCount: table.array.count) else {
            throw LuaValueCodecError(.keyNotFromLua(key), at: path())
          }
          try self.value(key.value, path: path(), depth: depth + 1)
          try self.value(table.fields[key]!, path: path().appending(key), depth: depth + 1)
        }
      }
    }
  }

  private struct Reader {
    /// Counts in the bytes are checked against what remains, but a nested
    /// table's reservation would add up over the levels: reserve at most
    /// this many slots up front and let the rest grow as it is read.
    static let reserveLimit = 1024

    let bytes: [UInt8]
    var position = 0

    mutating func byte() throws(LuaValueCodecError) -> UInt8 {
      guard position < bytes.count else { throw LuaValueCodecError(.truncated, offset: position) }
      defer { position += 1 }
      return bytes[position]
    }

    mutating func varint() throws(LuaValueCodecError) -> UInt64 {
      let start = position
      var result: UInt64 = 0
      var shift: UInt64 = 0
      while true {
        let b = try byte()
        // The tenth byte is the last and carries only the top bit.
        guard shift < 63 || b <= 1 else {
          throw LuaValueCodecError(.malformed("a number longer than 64 bits"), offset: start)
        }
        result |= UInt64(b & 0x7F) << shift
        if b & 0x80 == 0 {
          guard b != 0 || shift == 0 else {
            throw LuaValueCodecError(.malformed("a number padded with zero bytes"), offset: start)
          }
          return result
        }
        shift += 7
      }
    }

    /// A count of items that each take at least `minimumBytesEach` bytes:
    /// one that cannot fit in what remains is refused before any allocation.
    mutating func count(minimumBytesEach: Int) throws(LuaValueCodecError) -> Int {
      let start = position
      let count = try varint()
      guard count <= UInt64(bytes.count - position) / UInt64(minimumBytesEach) else {
        throw LuaValueCodecError(.malformed("a count of \(count) past the end of the bytes"), offset: start)
      }
      return Int(count)
    }

    mutating func value(depth: Int) throws(LuaValueCodecError) -> LuaValue {
      let start = position
      let tag = try byte()
      switch tag {
      case Tag.nil: return .nil
      case Tag.false: return .boolean(false)
      case Tag.true: return .boolean(true)
      case Tag.integer:
        let zigzag = try varint()
        return .integer(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
      case Tag.float:
        guard bytes.count - position >= 8 else { throw LuaValueCodecError(.truncated, offset: bytes.count) }
        var bits: UInt64 = 0
        for index in 0..<8 { bits |= UInt64(bytes[position + index]) << (8 * UInt64(index)) }
        position += 8
        return .number(Double(bitPattern: bits))
      case Tag.string:
        let length = try count(minimumBytesEach: 1)
        defer { position += length }
        return .string(LuaString(bytes: Array(bytes[position..<position + length])))
      case Tag.table:
        guard depth < maximumDepth else { throw LuaValueCodecError(.tooDeep(limit: maximumDepth), offset: start) }
        return .table(try table(depth: depth))
      default:
        throw LuaValueCodecError(.unknownTag(tag), offset: start)
      }
    }

    mutating func table(depth: Int) throws(LuaValueCodecError) -> LuaTable {
      let arrayCount = try count(minimumBytesEach: 1)
      var array: [LuaValue] = []
      array.reserveCapacity(min(arrayCount, Self.reserveLimit))
      for _ in 0..<arrayCount {
        let start = position
        let element = try value(depth: depth + 1)
        if case .nil = element { throw LuaValueCodecError(.malformed("nil in a table's array part"), offset: start) }
        array.append(element)
      }
      let fieldCount = try count(minimumBytesEach: 2)
      var fields: [LuaKey: LuaValue] = [:]
      fields.reserveCapacity(min(fieldCount, Self.reserveLimit))
      var previous: LuaKey?
      for _ in 0..<fieldCount {
        let start = position
        let key = try self.key(depth: depth + 1)
        guard LuaValueCodec.isFieldKey(key, arrayCount: arrayCount) else {
          throw LuaValueCodecError(.malformed("key \(key.value) in a table's keyed part"), offset: start)
        }
        if let previous, !LuaValueCodec.precedes(previous, key) {
          throw LuaValueCodecError(.malformed("table keys out of order"), offset: start)
        }
        previous = key
        let valueStart = position
        let element = try value(depth: depth + 1)
        if case .nil = element { throw LuaValueCodecError(.malformed("nil as a field's value"), offset: valueStart) }
        fields[key] = element
      }
      return LuaTable(normalArray: array, normalFields: fields)
    }

    mutating func key(depth: Int) throws(LuaValueCodecError) -> LuaKey {
      let start = position
      switch try value(depth: depth) {
      case .boolean(let b): return .boolean(b)
      case .integer(let i): return .integer(i)
      case .number(let d): return .number(d)
      case .string(let s): return .string(s)
      case let other: throw LuaValueCodecError(.malformed("a \(other.typeName) as a table key"), offset: start)
      }
    }
  }
}
