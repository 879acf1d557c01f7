import Testing
import TestSupport

@testable import LuaKit

/// True if `a` and `b` are the same value bit for bit: `==` would call two
/// NaNs different and -0.0 equal to 0.0.
func identical(_ a: LuaValue, _ b: LuaValue) -> Bool {
  switch (a, b) {
  case (.nil, .nil): return true
  case (.boolean(let x), .boolean(let y)): return x == y
  case (.integer(let x), .integer(let y)): return x == y
  case (.number(let x), .number(let y)): return x.bitPattern == y.bitPattern
  case (.string(let x), .string(let y)): return x.bytes == y.bytes
  case (.table(let x), .table(let y)):
    guard x.array.count == y.array.count, x.fields.count == y.fields.count else { return false }
    guard zip(x.array, y.array).allSatisfy(identical) else { return false }
    return x.fields.allSatisfy { key, value in y.fields[key].map { identical(value, $0) } ?? false }
  default: return false
  }
}

/// The same values, bit for bit, in the same order.
func identical(_ a: [LuaValue], _ b: [LuaValue]) -> Bool {
  a.count == b.count && zip(a, b).allSatisfy { identical($0, $1) }
}

/// Random values of every kind, nested up to `depth` tables.
struct RandomValues {
  var random: SplitMix64

  mutating func value(depth: Int) -> LuaValue {
    switch Int.random(in: 0..<(depth > 0 ? 8 : 6), using: &random) {
    case 0: return .nil
    case 1: return .boolean(Bool.random(using: &random))
    case 2: return .integer(integer())
    case 3: return .number(float())
    case 4, 5: return .string(string())
    default: return .table(table(depth: depth - 1))
    }
  }

  mutating func integer() -> Int64 {
    [Int64.min, Int64.max, 0, -1, 1, 127, 128, -64, -65].randomElement(using: &random)!
      ^ (Bool.random(using: &random) ? 0 : Int64(bitPattern: random.next()) >> Int.random(in: 0..<64, using: &random))
  }

  mutating func float() -> Double {
    switch Int.random(in: 0..<4, using: &random) {
    case 0: return [.nan, -.nan, .infinity, -.infinity, -0.0, 0.0, .leastNonzeroMagnitude].randomElement(using: &random)!
    case 1: return Double(bitPattern: random.next())  // any bits: NaN payloads, subnormals
    default: return Double.random(in: -1e6...1e6, using: &random)
    }
  }

  mutating func string() -> LuaString {
    LuaString(bytes: (0..<Int.random(in: 0..<12, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
  }

  mutating func key() -> LuaKey {
    switch Int.random(in: 0..<4, using: &random) {
    case 0: return .boolean(Bool.random(using: &random))
    case 1: return .integer(integer())
    case 2:
      let d = float()
      return LuaKey(.number(d)) ?? .string(string())
    default: return .string(string())
    }
  }

  mutating func table(depth: Int) -> LuaTable {
    var table = LuaTable()
    for _ in 0..<Int.random(in: 0..<6, using: &random) {
      if case let element = value(depth: depth), element != .nil { table.append(element) }
    }
    for _ in 0..<Int.random(in: 0..<6, using: &random) {
      table[key()] = value(depth: depth)
    }
    return table
  }
}

private func roundTrip(_ values: [LuaValue]) throws -> [LuaValue] {
  try LuaValueCodec.decode(try LuaValueCodec.encode(values))
}

/// `count` tables nested in one another, innermost `{}`.
private func nested(_ count: Int) -> LuaValue {
  var value = LuaValue.table(LuaTable())
  for _ in 1..<count { value = .table(LuaTable(array: [value])) }
  return value
}

@Suite struct LuaValueCodecTests {
  @Test func scalarsComeBackBitForBit() throws {
    let values: [LuaValue] = [
      .nil, .boolean(false), .boolean(true),
      .integer(0), .integer(-1), .integer(Int64.min), .integer(Int64.max),
      .number(0.0), .number(-0.0), .number(.infinity), .number(-.infinity),
      .number(Double(bitPattern: 0x7FF8_0000_0000_0123)),  // a quiet NaN with a payload
      .number(Double(bitPattern: 0xFFF8_0000_0000_0000)),  // a negative NaN
      .number(Double(bitPattern: 0x7FF0_0000_0000_0001)),  // a signalling NaN
      .number(.leastNonzeroMagnitude), .number(3.0),
      .string(LuaString(bytes: [])), .string(LuaString(bytes: [0, 0xFF, 0xFE, 0x61, 0])),
      .string("e\u{301}"), .string("\u{E9}"),
    ]
    let back = try roundTrip(values)
    #expect(identical(back, values))
    #expect(back[16] != back[17] && back[18] != back[19])
  }

  @Test func aStepThatReturnedNothingDiffersFromNil() throws {
    let lists: [[LuaValue]] = [[], [.nil], [.nil, .nil], [.integer(1), .nil]]
    let encodings = try lists.map { try LuaValueCodec.encode($0) }
    #expect(Set(encodings).count == lists.count)
    for (list, bytes) in zip(lists, encodings) { #expect(identical(try LuaValueCodec.decode(bytes), list)) }
  }

  @Test func tablesKeepTheirArrayPartKeysAndNesting() throws {
    var fields: [LuaKey: LuaValue] = [
      .integer(4): "y", .integer(0): "zero", .integer(-7): "negative", .integer(Int64.max): "huge",
      .boolean(true): .boolean(false), .boolean(false): .integer(1),
      .number(2.5): "two and a half", .number(-.infinity): "minus infinity", .number(.infinity): 1.5,
      .string(LuaString(bytes: [0, 0xFF])): "odd key", "name": .table(LuaTable(array: ["nested", .number(-0.0)])),
    ]
    fields[.string("empty")] = .table(LuaTable())
    let table = LuaTable(array: ["x", .integer(2)], fields: fields)
    let back = try roundTrip([.table(table)])
    #expect(identical(back, [.table(table)]))
    #expect(back.first?.tableValue?.array.count == 2)
    #expect(back.first?.tableValue?.fields[.integer(4)] == "y")
  }

  @Test func valuesReadFromLuaGoBackIntoLuaUnchanged() throws {
    let state = try LuaState()
    try state.load(
      """
      return { "a", "b", nil, "d", [10] = 10, [-1] = true, [true] = 1.0, [2.5] = 0/0, [1/0] = -0.0,
               s = "\\0\\255\\254", n = { math.mininteger, math.maxinteger, { {} } } }, nil, 3
      """, name: "=values")
    try state.call(arguments: 0, results: 3)
    let values = [try state.value(at: -3), try state.value(at: -2), try state.value(at: -1)]
    state.pop(3)
    let back = try roundTrip(values)
    #expect(identical(back, values))
    try state.load(
      """
      local t, none, three = ...
      assert(t[1] == "a" and t[2] == "b" and t[3] == nil and t[4] == "d" and t[10] == 10 and t[-1] == true)
      assert(math.type(t[true]) == "float" and t[true] == 1)
      assert(t[2.5] ~= t[2.5], "NaN stays NaN")
      assert(1 / t[1/0] == -1/0, "-0.0 keeps its sign")
      assert(t.s == "\\0\\255\\254" and #t.s == 3)
      assert(t.n[1] == math.mininteger and t.n[2] == math.maxinteger and math.type(t.n[2]) == "integer")
      assert(type(t.n[3][1]) == "table" and next(t.n[3][1]) == nil)
      assert(none == nil and math.type(three) == "integer")
      return true
      """, name: "=check")
    for value in back { try state.push(value) }
    try state.call(arguments: 3, results: 1)
    #expect(try state.value(at: -1) == .boolean(true))
    state.pop()
  }

  @Test func equalTablesEncodeToEqualBytes() throws {
    // The same fields inserted in opposite orders, into dictionaries of
    // different capacities: their iteration orders differ, their bytes must not.
    var generator = RandomValues(random: SplitMix64(seed: 19))
    let keys = (0..<200).map { _ in generator.key() }
    let junk = (0..<500).map { LuaKey.integer(-1_000_000 - Int64($0)) }
    var forward = LuaTable()
    var backward = LuaTable()
    for key in keys { forward[key] = key.value }
    for key in junk { backward[key] = 1 }
    for key in keys.reversed() { backward[key] = key.value }
    for key in junk { backward[key] = .nil }
    #expect(forward == backward)
    #expect(Array(forward.fields.keys) != Array(backward.fields.keys))
    #expect(try LuaValueCodec.encode([.table(forward)]) == LuaValueCodec.encode([.table(backward)]))
  }

  @Test func theFormatIsTheDocumentedOne() throws {
    // Fingerprints in existing stores hash these bytes: a change here must
    // come with a new format version.
    let bytes = try LuaValueCodec.encode([
      .nil, .boolean(true), .integer(-2), .number(1.0), .string("hi"),
      .table(LuaTable(array: [.integer(1)], fields: ["b": .boolean(false), .boolean(true): .integer(64), .integer(-1): .nil])),
    ])
    #expect(
      bytes == [
        1, 6,  // version, six values
        0, 2, 3, 3,  // nil, true, integer -2 (zigzag 3)
        4, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F,  // float 1.0, little-endian bits
        5, 2, 0x68, 0x69,  // "hi"
        6, 1, 3, 2,  // table: one array element, 1
        2, 2, 3, 0x80, 0x01,  // two fields: [true] = 64 (zigzag 128)
        5, 1, 0x62, 1,  // b = false
      ])
  }

  @Test func tooDeepOrUnnaturalValuesAreRefusedWithTheirPath() throws {
    #expect(try roundTrip([nested(LuaValueCodec.maximumDepth)]).count == 1)
    #expect(throws: LuaValueCodecError(.tooDeep(limit: 200), at: LuaPath("values", keys: [1] + Array(repeating: 1, count: 200)))) {
      try LuaValueCodec.encode([nested(LuaValueCodec.maximumDepth + 1)])
    }
    for key: LuaKey in [.number(2.0), .number(.nan), .number(-0.0)] {
      var table = LuaTable()
      table[key] = "x"
      let error = #expect(throws: LuaValueCodecError.self) { try LuaValueCodec.encode(["top", .table(["t": .table(table)])]) }
      #expect(error?.path?.description == "values[2].t")
    }
  }

  @Test func decodingRefusesWhatEncodingNeverWrites() throws {
    let cases: [(String, [UInt8])] = [
      ("empty", []),
      ("another version", [2, 0]),
      ("truncated count", [1]),
      ("trailing bytes", [1, 1, 0, 0]),
      ("unknown tag", [1, 1, 7]),
      ("truncated float", [1, 1, 4, 0, 0, 0]),
      ("string past the end", [1, 1, 5, 4, 0x61]),
      ("absurd string length", [1, 1, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
      ("absurd array length", [1, 1, 6, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0]),
      ("absurd value count", [1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
      ("padded varint", [1, 1, 3, 0x80, 0x00]),
      ("varint past 64 bits", [1, 1, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]),
      ("eleven-byte varint", [1, 1, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x81, 0x00]),
      ("nil in the array part", [1, 1, 6, 1, 0, 0]),
      ("nil as a field value", [1, 1, 6, 0, 1, 5, 1, 0x61, 0]),
      ("nil as a key", [1, 1, 6, 0, 1, 0, 2]),
      ("table as a key", [1, 1, 6, 0, 1, 6, 0, 0, 2]),
      ("key n+1 in the keyed part", [1, 1, 6, 1, 2, 1, 3, 4, 2]),
      ("key inside the array part", [1, 1, 6, 1, 2, 1, 3, 2, 2]),
      ("integral float key", [1, 1, 6, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0x10, 0x40, 2]),
      ("NaN key", [1, 1, 6, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F, 2]),
      ("keys out of order", [1, 1, 6, 0, 2, 5, 1, 0x62, 2, 5, 1, 0x61, 2]),
      ("duplicate keys", [1, 1, 6, 0, 2, 5, 1, 0x61, 2, 5, 1, 0x61, 2]),
      ("kinds out of order", [1, 1, 6, 0, 2, 5, 1, 0x61, 2, 2, 2]),
      ("too deep", [1, 1] + Array(repeating: [6, 1], count: 200).flatMap { $0 } + [6, 0, 0] + Array(repeating: 0, count: 200)),
    ]
    for (name, bytes) in cases {
      #expect(throws: LuaValueCodecError.self, "\(name)") { try LuaValueCodec.decode(bytes) }
    }
    // Every proper prefix of a valid encoding is refused.
    let whole = try LuaValueCodec.encode([.table(LuaTable(array: ["a", 2.5], fields: ["k": .integer(300), .boolean(false): "v"])), .nil])
    for length in 0..<whole.count {
      #expect(throws: LuaValueCodecError.self) { try LuaValueCodec.decode(Array(whole[..<length])) }
    }
    let deepest: [UInt8] = [1, 1] + Array(repeating: [6, 1], count: 199).flatMap { $0 } + [6, 0, 0] + Array(repeating: 0, count: 199)
    #expect(try LuaValueCodec.decode(deepest).count == 1)
  }

  @Test func randomValuesRoundTripAndReencodeToTheSameBytes() throws {
    var generator = RandomValues(random: SplitMix64(seed: 0x4C55_4E52))
    for _ in 0..<2_000 {
      let values = (0..<Int.random(in: 0..<4, using: &generator.random)).map { _ in generator.value(depth: 4) }
      let bytes = try LuaValueCodec.encode(values)
      let back = try LuaValueCodec.decode(bytes)
      #expect(identical(back, values), "\(values)")
      #expect(try LuaValueCodec.encode(back) == bytes)
    }
  }

  @Test func theDecoderNeverTrapsOnRandomOrMutatedBytes() throws {
    // Whatever it is given, the decoder throws or returns values that encode
    // back to exactly the bytes it read: no second spelling of a value.
    var random = SplitMix64(seed: 20)
    var generator = RandomValues(random: SplitMix64(seed: 21))
    var accepted = 0
    func check(_ bytes: [UInt8]) throws {
      guard let values = try? LuaValueCodec.decode(bytes) else { return }
      accepted += 1
      #expect(try LuaValueCodec.encode(values) == bytes, "\(bytes)")
    }
    for _ in 0..<20_000 {
      var bytes = (0..<Int.random(in: 0..<24, using: &random)).map { _ in UInt8.random(in: 0...7, using: &random) }
      if !bytes.isEmpty && Bool.random(using: &random) { bytes[0] = LuaValueCodec.version }
      try check(bytes)
    }
    for _ in 0..<5_000 {
      var bytes = try LuaValueCodec.encode([generator.value(depth: 3), generator.value(depth: 2)])
      for _ in 0..<Int.random(in: 1...3, using: &random) {
        let index = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
        case 1: bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &random)
        case 2: bytes.insert(UInt8.random(in: 0...7, using: &random), at: index)
        default: bytes.remove(at: index)
        }
        if bytes.isEmpty { break }
      }
      try check(bytes)
    }
    #expect(accepted > 100)
  }
}
