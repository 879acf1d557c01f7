import Testing

@testable import LuaKit

private struct P: Codable, Equatable {
  var x: Int
  var tags: [String]
}

private enum Role: String, Codable, Equatable {
  case admin, guest
}

private enum Priority: Int, Codable, Equatable {
  case low = 1, high = 2
}

private struct Address: Codable, Equatable {
  var street: String
  var zip: Int?
}

private struct User: Codable, Equatable {
  var name: String
  var age: Int
  var nickname: String?
  var role: Role
  var priority: Priority
  var addresses: [Address]
  var scores: [String: Double]
  var ratio: Double
  var level: UInt8
  var offset: Int8
}

private struct Team: Codable, Equatable {
  var user: User
  var items: [Int]
}

private struct Limits: Codable, Equatable {
  var small: Int8
  var byte: UInt8
}

/// Coding keys with integer values, so a Lua sequence `{3, 4}` can fill them.
private struct Point: Codable, Equatable {
  var x: Int
  var y: Int
  enum CodingKeys: Int, CodingKey {
    case x = 1, y = 2
  }
}

private class Base: Codable {
  var id: Int
  init(id: Int) { self.id = id }
}

private final class Derived: Base {
  var label: String
  enum CodingKeys: String, CodingKey { case label }

  init(id: Int, label: String) {
    self.label = label
    super.init(id: id)
  }

  required init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    label = try container.decode(String.self, forKey: .label)
    try super.init(from: container.superDecoder())
  }

  override func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(label, forKey: .label)
    try super.encode(to: container.superEncoder())
  }
}

private struct Refusal: Error, CustomStringConvertible {
  var description: String { "refused by the type" }
}

/// A type whose own `init(from:)` throws a non-Codable error.
private struct Picky: Decodable {
  init(from decoder: any Decoder) throws { throw Refusal() }
}

private func sampleUser() -> User {
  User(
    name: "Ada", age: 36, nickname: nil, role: .admin, priority: .high,
    addresses: [Address(street: "Main", zip: 12345), Address(street: "Side", zip: nil)],
    scores: ["math": 9.5, "art": 7], ratio: 3, level: 255, offset: -128)
}

private func encode<T: Encodable>(_ value: T) throws -> LuaValue {
  try LuaValueEncoder().encode(value)
}

private func decode<T: Decodable>(_ type: T.Type, _ value: LuaValue) throws(LuaConversionError) -> T {
  try LuaValueDecoder().decode(type, from: value)
}

/// The message decoding fails with, or nil if it succeeds.
private func decodeFailure<T: Decodable>(_ type: T.Type, _ value: LuaValue, root: String = "value") -> String? {
  var decoder = LuaValueDecoder()
  decoder.rootName = root
  do {
    _ = try decoder.decode(type, from: value)
    return nil
  } catch {
    return String(describing: error)
  }
}

/// The message encoding fails with, or nil if it succeeds.
private func encodeFailure<T: Encodable>(_ value: T) -> String? {
  do {
    _ = try LuaValueEncoder().encode(value)
    return nil
  } catch {
    return String(describing: error)
  }
}

@Test func encodesStructAsFieldsAndArrayAsArrayPart() throws {
  let encoded = try encode(P(x: 1, tags: ["a"]))
  #expect(encoded == .table(LuaTable(fields: ["x": .integer(1), "tags": .table(LuaTable(array: ["a"]))])))
}

@Test func encodesNestedUserExactly() throws {
  let encoded = try encode(sampleUser())
  let expected: LuaValue = [
    "name": "Ada", "age": 36, "role": "admin", "priority": 2,
    "addresses": [["street": "Main", "zip": 12345], ["street": "Side"]],
    "scores": ["math": 9.5, "art": 7.0], "ratio": 3.0, "level": 255, "offset": -128,
  ]
  #expect(encoded == expected)
  // The nil optional leaves no key behind rather than storing nil.
  let fields = try #require(encoded.tableValue).fields
  #expect(fields["nickname"] == nil)
  #expect(fields.count == 9)
}

@Test func roundTripsNestedStructs() throws {
  var user = sampleUser()
  let team = Team(user: user, items: [1, 2, 3])
  #expect(try decode(Team.self, try encode(team)) == team)
  user.nickname = "countess"
  let encoded = try encode(user)
  #expect(encoded["nickname"] == "countess")
  #expect(try decode(User.self, encoded) == user)
}

@Test func decodesOptionalsAbsentPresentAndNil() throws {
  let absent = try decode(Address.self, ["street": "Main"])
  #expect(absent == Address(street: "Main", zip: nil))
  let present = try decode(Address.self, ["street": "Main", "zip": 7])
  #expect(present == Address(street: "Main", zip: 7))
  #expect(try decode(Int?.self, .nil) == nil)
  #expect(try decode(Int?.self, 4) == 4)
}

@Test func roundTripsDictionaries() throws {
  let byName: [String: Int] = ["a": 1, "b": 2]
  let encoded = try encode(byName)
  #expect(encoded == .table(LuaTable(fields: ["a": 1, "b": 2])))
  #expect(try decode([String: Int].self, encoded) == byName)

  let byNumber: [Int: String] = [1: "one", 10: "ten"]
  let encodedNumbers = try encode(byNumber)
  #expect(encodedNumbers == .table(LuaTable(fields: ["1": "one", "10": "ten"])))
  #expect(try decode([Int: String].self, encodedNumbers) == byNumber)
}

@Test func decodesIntegerKeyedDictionaryFromLuaIntegerKeys() throws {
  let table = LuaValue.table(LuaTable(array: ["a", "b"], fields: [10: "j"]))
  #expect(try decode([Int: String].self, table) == [1: "a", 2: "b", 10: "j"])
}

@Test func decodesIntegerCodingKeysFromArrayPart() throws {
  #expect(try decode(Point.self, [3, 4]) == Point(x: 3, y: 4))
  // The name wins when both forms are present.
  #expect(try decode(Point.self, [1: 3, 2: 4, "x": 30]) == Point(x: 30, y: 4))
}

@Test func roundTripsRawValueEnums() throws {
  #expect(try encode(Role.guest) == "guest")
  #expect(try encode(Priority.low) == 1)
  #expect(try decode(Role.self, "admin") == .admin)
  #expect(try decode(Priority.self, 2) == .high)
  #expect(try decode([Priority].self, [1, 2, 1]) == [.low, .high, .low])
}

@Test func rejectsUnknownRawValueWithPath() {
  let value: LuaValue = ["user": ["role": "boss"]]
  struct Holder: Decodable { var user: RoleHolder }
  struct RoleHolder: Decodable { var role: Role }
  #expect(
    decodeFailure(Holder.self, value)
      == "value.user.role: Cannot initialize Role from invalid String value boss")
}

@Test func roundTripsSmallIntegerExtremes() throws {
  for limits in [Limits(small: .min, byte: .min), Limits(small: .max, byte: .max)] {
    let encoded = try encode(limits)
    #expect(encoded["small"] == .integer(Int64(limits.small)))
    #expect(encoded["byte"] == .integer(Int64(limits.byte)))
    #expect(try decode(Limits.self, encoded) == limits)
  }
}

@Test func rejectsSmallIntegersOutOfRange() {
  #expect(decodeFailure(Limits.self, ["small": 0, "byte": 256]) == "value.byte: 256 is out of range for UInt8")
  #expect(decodeFailure(Limits.self, ["small": 0, "byte": -1]) == "value.byte: -1 is out of range for UInt8")
  #expect(decodeFailure(Limits.self, ["small": -129, "byte": 0]) == "value.small: -129 is out of range for Int8")
  #expect(decodeFailure(Limits.self, ["small": 128.0, "byte": 0]) == "value.small: 128.0 is out of range for Int8")
  #expect(decodeFailure(Int64.self, 1e19) == "value: 1e+19 is out of range for Int64")
  #expect(decodeFailure(Float.self, 1e300) == "value: 1e+300 is out of range for Float")
}

@Test func keepsDoublesAndIntegersApart() throws {
  #expect(try encode(3.0) == .number(3.0))
  #expect(try encode(3) == .integer(3))
  #expect(try encode(Float(0.5)) == .number(0.5))
  #expect(try decode(Double.self, .integer(2)) == 2.0)
  #expect(try decode(Float.self, .number(0.25)) == 0.25)
  #expect(try decode(Int.self, .number(3.0)) == 3)
  #expect(try decode(Int.self, .number(-0.0)) == 0)
  #expect(decodeFailure(Int.self, .number(2.5)) == "value: number has no integer representation")
  #expect(decodeFailure(Int.self, .number(.infinity)) == "value: number has no integer representation")
  #expect(decodeFailure(Double.self, "2") == "value: number expected, got string")
}

@Test func reportsTypeMismatchWithPath() throws {
  var user = try #require(try encode(sampleUser()).tableValue)
  user["age"] = "old"
  let value: LuaValue = ["user": .table(user), "items": [1, 2]]
  #expect(decodeFailure(Team.self, value) == "value.user.age: integer expected, got string")
  #expect(decodeFailure(Team.self, value, root: "payload") == "payload.user.age: integer expected, got string")
}

@Test func reportsMissingFieldWithPath() throws {
  var fields = try #require(try encode(sampleUser()).tableValue)
  fields["name"] = .nil
  let value: LuaValue = ["user": .table(fields), "items": []]
  #expect(decodeFailure(Team.self, value) == "value.user.name: missing field")
  #expect(decodeFailure(Team.self, ["user": try encode(sampleUser())]) == "value.items: missing field")
}

@Test func reportsArrayElementWithOneBasedIndex() throws {
  let user = try encode(sampleUser())
  #expect(
    decodeFailure(Team.self, ["user": user, "items": [1, "two", 3]])
      == "value.items[2]: integer expected, got string")
  #expect(
    decodeFailure(Team.self, ["user": user, "items": [1, 2.5]])
      == "value.items[2]: number has no integer representation")
  var fields = try #require(user.tableValue)
  fields["addresses"] = [["street": "Main"], ["zip": 1]]
  #expect(
    decodeFailure(Team.self, ["user": .table(fields), "items": []])
      == "value.user.addresses[2].street: missing field")
}

@Test func refusesContainersOfTheWrongKind() {
  #expect(decodeFailure(Team.self, ["user": 5, "items": []]) == "value.user: table expected, got number")
  #expect(decodeFailure([Int].self, "list") == "value: table expected, got string")
  #expect(decodeFailure(Bool.self, 1) == "value: boolean expected, got number")
  #expect(decodeFailure(String.self, true) == "value: string expected, got boolean")
  #expect(decodeFailure(Int.self, .nil) == "value: integer expected, got nil")
}

@Test func readsOnlyTheArrayPartForArrays() throws {
  let mixed = LuaValue.table(LuaTable(array: [1, 2], fields: ["n": 2, 5: 9]))
  #expect(try decode([Int].self, mixed) == [1, 2])
  #expect(decodeFailure([Int].self, ["n": 2]) == nil)
  #expect(try decode([Int].self, ["n": 2]) == [])
}

@Test func reportsTooFewTupleElements() {
  struct Pair: Decodable {
    var a: Int
    var b: Int
    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      a = try container.decode(Int.self)
      b = try container.decode(Int.self)
    }
  }
  #expect(decodeFailure(Pair.self, [1, 2]) == nil)
  #expect(decodeFailure(Pair.self, [1]) == "value[2]: missing field")
}

@Test func refusesInvalidUTF8() {
  let bytes = LuaValue.string(LuaString(bytes: [0x61, 0xFF]))
  #expect(decodeFailure(String.self, bytes) == "value: string is not valid UTF-8")
  #expect(decodeFailure(String.self, .string(LuaString(bytes: [0x61, 0x62]))) == nil)
}

@Test func wrapsForeignErrorsWithTheirPath() {
  struct Holder: Decodable { var list: [Picky] }
  #expect(decodeFailure(Holder.self, ["list": [1, 2]]) == "value.list[1]: refused by the type")
}

@Test func refusesNilArrayElements() {
  let optionals: [Int?] = [1, nil, 3]
  #expect(encodeFailure(optionals) == "value[2]: nil cannot be an element of a Lua array")
  struct Holder: Encodable {
    var list: [String?]
  }
  #expect(encodeFailure(Holder(list: ["a", nil])) == "value.list[2]: nil cannot be an element of a Lua array")
  #expect(encodeFailure([Int?]([1, 2])) == nil)
}

@Test func refusesUnsignedBeyondLuaIntegers() throws {
  struct Big: Encodable { var big: UInt64 }
  #expect(encodeFailure(Big(big: .max)) == "value.big: 18446744073709551615 does not fit in a Lua integer")
  #expect(encodeFailure([UInt64(1), UInt64(Int64.max) + 1]) == "value[2]: 9223372036854775808 does not fit in a Lua integer")
  #expect(try encode(Big(big: UInt64(Int64.max))) == ["big": .integer(.max)])
}

@Test func encodesAndDecodesThroughSuperEncoder() throws {
  let encoded = try encode(Derived(id: 7, label: "seven"))
  #expect(encoded == ["label": "seven", "super": ["id": 7]])
  let decoded = try decode(Derived.self, encoded)
  #expect(decoded.id == 7)
  #expect(decoded.label == "seven")
  #expect(decodeFailure(Derived.self, ["label": "seven"]) == "value.super: table expected, got nil")
}

@Test func encodesTopLevelScalars() throws {
  #expect(try encode("text") == .string(LuaString("text")))
  #expect(try encode(true) == .boolean(true))
  #expect(try encode(Int?.none) == .nil)
  #expect(try encode([[1], [2, 3]]) == [[1], [2, 3]])
  #expect(try encode([String: Int]()) == .table(LuaTable()))
}
