import CLua
import Testing

@testable import LuaKit

/// Evaluates `source` (an expression) in a fresh state and copies the result.
private func evaluate(_ source: String, in state: LuaState? = nil) throws -> LuaValue {
  let state = try state ?? LuaState()
  try state.load("return " + source, name: "=test")
  try state.call(arguments: 0, results: 1)
  defer { state.pop() }
  return try state.value(at: -1, root: "payload")
}

/// Pushes `value`, runs `check` (a Lua function body receiving it as `v`)
/// and returns what the check returns.
private func inLua(_ value: LuaValue, _ check: String) throws -> LuaValue {
  let state = try LuaState()
  try state.load("local v = ...; " + check, name: "=check")
  try state.push(value)
  try state.call(arguments: 1, results: 1)
  defer { state.pop() }
  return try state.value(at: -1)
}

/// Lua → Swift → Lua → Swift.
private func roundTrip(_ source: String) throws -> (LuaValue, LuaValue) {
  let state = try LuaState()
  let first = try evaluate(source, in: state)
  try state.push(first)
  let second = try state.value(at: -1)
  state.pop()
  return (first, second)
}

@Suite struct LuaValueTests {
  @Test func scalarsKeepTheirKinds() throws {
    #expect(try evaluate("nil") == .nil)
    #expect(try evaluate("true") == .boolean(true))
    #expect(try evaluate("3") == .integer(3))
    #expect(try evaluate("3.0") == .number(3.0))
    #expect(try evaluate("math.maxinteger") == .integer(Int64.max))
    #expect(try evaluate("math.mininteger") == .integer(Int64.min))
    #expect(try evaluate("2^53") == .number(9_007_199_254_740_992))
    #expect(try evaluate("'text'") == .string("text"))
  }

  @Test func integersAndFloatsSurviveTheTripBack() throws {
    #expect(try inLua(.integer(3), "return math.type(v)") == .string("integer"))
    #expect(try inLua(.number(3), "return math.type(v)") == .string("float"))
    #expect(try inLua(.integer(Int64.max), "return v == math.maxinteger") == .boolean(true))
  }

  @Test func negativeZeroKeepsItsSign() throws {
    let (first, second) = try roundTrip("-0.0")
    guard case .number(let a) = first, case .number(let b) = second else {
      Issue.record("expected numbers, got \(first) and \(second)")
      return
    }
    #expect(a == 0 && a.sign == .minus)
    #expect(b == 0 && b.sign == .minus)
    #expect(try inLua(.number(-0.0), "return 1/v") == .number(-.infinity))
  }

  @Test func nanSurvives() throws {
    let (_, second) = try roundTrip("0/0")
    guard case .number(let d) = second else {
      Issue.record("expected a number, got \(second)")
      return
    }
    #expect(d.isNaN)
    #expect(try inLua(.number(.nan), "return v ~= v") == .boolean(true))
  }

  @Test func bytesSurviveIncludingZerosAndInvalidUTF8() throws {
    let (first, second) = try roundTrip(#""a\0b\255\254c""#)
    let expected = LuaValue.string(LuaString(bytes: [0x61, 0, 0x62, 0xFF, 0xFE, 0x63]))
    #expect(first == expected)
    #expect(second == expected)
    #expect(first.stringValue == nil, "invalid UTF-8 is not text")
    #expect(try inLua(expected, "return #v") == .integer(6))
  }

  @Test func arrayAndKeyedPartsStayApart() throws {
    let value = try evaluate("{1, 2, x = 3}")
    let table = try #require(value.tableValue)
    #expect(table.array == [.integer(1), .integer(2)])
    #expect(table.fields == ["x": .integer(3)])
    let (_, second) = try roundTrip("{1, 2, x = 3}")
    #expect(second == value)
    #expect(try inLua(value, "return #v .. ',' .. v.x") == .string("2,3"))
  }

  @Test func sparseArraysKeepTheirHoles() throws {
    let value = try evaluate("{1, nil, 3, [10] = 10}")
    let table = try #require(value.tableValue)
    #expect(table.array == [.integer(1)])
    #expect(table.fields == [3: .integer(3), 10: .integer(10)])
    let (_, second) = try roundTrip("{1, nil, 3, [10] = 10}")
    #expect(second == value)
    #expect(try inLua(value, "return tostring(v[2]) .. v[3] .. v[10]") == .string("nil310"))
  }

  @Test func oddKeysCross() throws {
    let value = try evaluate("{[-1] = 'neg', [0] = 'zero', [1.5] = 'float', [true] = 'yes', ['a b'] = 1}")
    let table = try #require(value.tableValue)
    #expect(table.array.isEmpty)
    #expect(table[.integer(-1)] == "neg")
    #expect(table[.integer(0)] == "zero")
    #expect(table[.number(1.5)] == "float")
    #expect(table[.boolean(true)] == "yes")
    #expect(table["a b"] == .integer(1))
    let (_, second) = try roundTrip("{[-1] = 'neg', [0] = 'zero', [1.5] = 'float', [true] = 'yes', ['a b'] = 1}")
    #expect(second == value)
  }

  @Test func nestedTablesAndSharedSubtablesAreCopied() throws {
    let value = try evaluate("(function() local s = {7}; return {a = s, b = s, c = {d = {e = {'deep'}}}} end)()")
    #expect(value["a"] == [.integer(7)])
    #expect(value["b"] == [.integer(7)])
    #expect(value["c"]["d"]["e"][1] == "deep")
  }

  @Test func aFunctionIsRefusedWithItsPath() throws {
    #expect {
      try evaluate("{items = {1, 2, print}}")
    } throws: { error in
      String(describing: error) == "payload.items[3]: a function cannot cross into Swift"
    }
  }

  @Test func userdataAndThreadsAreRefusedWithTheirPaths() throws {
    #expect {
      try evaluate("{io.stdout}")
    } throws: { error in
      String(describing: error) == "payload[1]: a FILE* cannot cross into Swift"
    }
    #expect {
      try evaluate("{co = {['odd key'] = coroutine.create(print)}}")
    } throws: { error in
      String(describing: error) == #"payload.co["odd key"]: a thread cannot cross into Swift"#
    }
  }

  @Test func aCycleIsRefusedWithItsPath() throws {
    #expect {
      try evaluate("(function() local t = {x = {}}; t.x.back = t; return t end)()")
    } throws: { error in
      String(describing: error) == "payload.x.back: a table that contains itself cannot cross into Swift"
    }
  }

  @Test func tooDeepIsAnErrorNotACrash() throws {
    let source = "(function() local t = {}; for i = 1, 10000 do t = {t} end; return t end)()"
    #expect {
      try evaluate(source)
    } throws: { error in
      guard let error = error as? LuaConversionError else { return false }
      return error.reason == .tooDeep(limit: LuaState.maximumDepth) && error.path.keys.count == LuaState.maximumDepth
    }
    var deep = LuaValue.integer(1)
    for _ in 0..<(LuaState.maximumDepth + 5) { deep = [deep] }
    let state = try LuaState()
    #expect(throws: LuaConversionError.self) { try state.push(deep) }
  }

  @Test func tableKeysThatAreTablesAreRefused() throws {
    #expect {
      try evaluate("{[{}] = 1}")
    } throws: { error in
      String(describing: error) == "payload: a table key cannot cross into Swift"
    }
  }

  @Test func swiftBuiltTablesNormalise() {
    var table = LuaTable(fields: [2: "b", 1: "a", 4: "d"])
    #expect(table.array == ["a", "b"])
    #expect(table.fields == [4: "d"])
    table[3] = "c"
    #expect(table.array == ["a", "b", "c", "d"])
    table[2] = .nil
    #expect(table.array == ["a"])
    #expect(table.fields == [3: "c", 4: "d"])
  }

  @Test func descriptionIsLuaSyntax() throws {
    let value = try evaluate("{1, 'two', x = 1.5, ['a b'] = true}")
    #expect(value.description == #"{ 1, "two", ["a b"] = true, x = 1.5 }"#)
    #expect(LuaValue.number(3).description == "3.0")
    #expect(LuaValue.number(1e100).description == "1e+100")
  }

  @Test func aMegabyteTableRoundTrips() throws {
    let source = """
      (function()
        local t = {}
        for i = 1, 2000 do
          t[i] = {id = i, name = 'item' .. i, tags = {'a', 'b', i % 7}, score = i / 3}
        end
        return t
      end)()
      """
    let (first, second) = try roundTrip(source)
    #expect(first == second)
    #expect(first[2000]["name"] == "item2000")
    #expect(first.tableValue?.array.count == 2000)
  }
}
