import LuaKit
import Testing

/// Definition tables read field by field, checked, raw.
@Suite struct LuaTableReaderTests {
  /// Runs `source`, leaves its one result on the stack and reads it.
  static func reader(_ source: String, in state: LuaState, path: LuaPath = LuaPath("")) throws -> LuaTableReader {
    try state.load(source, name: "=test")
    try state.call(arguments: 0, results: 1)
    return try #require(state.table(at: -1, path: path))
  }

  @Test func readsFieldsOfTheirTypesAndAbsentOnesAsNil() throws {
    let state = try LuaState()
    let definition = try Self.reader(
      "return { name = 'b\\0c', strict = false, limit = 5.0, ratio = 0.5, run = function() return 'ran' end }",
      in: state)
    let top = state.top
    #expect(try definition.string("name") == LuaString(bytes: [0x62, 0x00, 0x63]))
    #expect(try definition.boolean("strict") == false)
    #expect(try definition.integer("limit") == 5)
    #expect(try definition.number("ratio") == 0.5)
    #expect(try definition.string("absent") == nil)
    #expect(try definition.boolean("absent") == nil)
    #expect(try definition.value("absent") == .nil)
    #expect(definition.type(of: "run") == .function)
    #expect(definition.type(of: "absent") == .nil)
    #expect(definition.count == 5)
    #expect(state.top == top, "every read leaves the stack as it was")

    let run = try #require(try definition.function("run", in: state))
    run.push()
    try state.call(arguments: 0, results: 1)
    #expect(state.string(at: -1) == "ran")
  }

  @Test func aFieldOfTheWrongTypeIsAnErrorNamingItsPath() throws {
    let state = try LuaState()
    let definition = try Self.reader(
      "return { name = 1, states = { idle = { on = 5, enter = setmetatable({}, { __name = 'Widget' }) } } }", in: state)
    let top = state.top
    #expect(throws: LuaConversionError(.typeMismatch(expected: "string", got: "number"), at: LuaPath("").appending("name"))) {
      try definition.string("name")
    }
    do {
      _ = try definition.table("states") { states in
        try states.table("idle") { idle in try idle.table("on") { _ in } }
      }
      Issue.record("a number where a table belongs was read")
    } catch {
      #expect(String(describing: error) == "states.idle.on: table expected, got number")
    }
    try definition.table("states") { states in
      try states.table("idle") { idle in
        #expect(idle.typeName(of: "enter") == "Widget")
        let path = LuaPath("", keys: ["states", "idle", "enter"])
        #expect(throws: LuaConversionError(.typeMismatch(expected: "function", got: "Widget"), at: path)) {
          try idle.function("enter", in: state)
        }
      }
    }
    #expect(throws: LuaConversionError.self) { try definition.boolean("name") }
    #expect(throws: LuaConversionError.self) { try definition.integer("states") }
    #expect(state.top == top, "a failed read leaves the stack as it was")
  }

  @Test func aStringIsNeverReadFromANumberNorAnIntegerFromAFraction() throws {
    let state = try LuaState()
    let options = try Self.reader("return { name = 12, limit = 2.5, count = '3' }", in: state)
    #expect(throws: LuaConversionError.self) { try options.string("name") }
    #expect(throws: LuaConversionError(.typeMismatch(expected: "integer", got: "number"), at: LuaPath("").appending("limit"))) {
      try options.integer("limit")
    }
    #expect(throws: LuaConversionError.self) { try options.number("count") }
  }

  @Test func readsAreRawSoAMetatableCannotAnswerOrRaise() throws {
    let state = try LuaState()
    let definition = try Self.reader(
      """
      return setmetatable({ name = 'real' }, {
        __index = function() error('__index ran') end,
        __pairs = function() error('__pairs ran') end,
      })
      """, in: state)
    #expect(try definition.string("name") == "real")
    #expect(try definition.string("initial") == nil)
    #expect(definition.unknownKeys(known: ["name"]) == [])
  }

  @Test func aCopiedFieldThatCannotCrossIsNamedFromTheRoot() throws {
    let state = try LuaState()
    let definition = try Self.reader("return { context = { page = 20, items = { print } } }", in: state)
    #expect(throws: LuaConversionError(.cannotCross(typeName: "function"), at: LuaPath("context", keys: ["items", 1]))) {
      try definition.value("context")
    }
    let named = try Self.reader("return { context = { f = print } }", in: state, path: LuaPath("definition"))
    do {
      _ = try named.value("context")
    } catch {
      #expect(error.description == "definition.context.f: a function cannot cross into Swift")
    }
  }

  @Test func nestedTablesAreReadInTheirOwnScopeAndAbsentOnesSkipped() throws {
    let state = try LuaState()
    let definition = try Self.reader("return { states = { idle = { on = { go = 'busy' } } } }", in: state)
    let top = state.top
    let target = try definition.table("states") { states in
      try states.table("idle") { idle in
        try idle.table("on") { on in try on.string("go") }
      }
    }
    #expect(target == "busy")
    var called = false
    let absent: Int?? = try definition.table("missing") { _ in
      called = true
      return 1
    }
    #expect(absent == .none)
    #expect(!called)
    #expect(state.top == top)
  }

  @Test func aStateNameWithAnyBytesFindsItsTable() throws {
    let state = try LuaState()
    let states = try Self.reader("return { ['b\\0c'] = { tag = 'zero' }, ['\\xfe'] = { tag = 'invalid' } }", in: state)
    let zero = try states.table(.string(LuaString(bytes: [0x62, 0x00, 0x63]))) { try $0.string("tag") }
    let invalid = try states.table(.string(LuaString(bytes: [0xFE]))) { try $0.string("tag") }
    #expect(zero == "zero")
    #expect(invalid == "invalid")
  }

  @Test func iterationHandsOutKeysAndValuesInPlace() throws {
    let state = try LuaState()
    let on = try Self.reader("return { go = 'busy', [1] = print, stop = { run = print } }", in: state)
    var found: [String: LuaType] = [:]
    try on.forEach { key, value in
      found[try #require(key.bytes).lossyString] = value.type
      if value.type == .table {
        let name = try #require(key.key)
        let handler = try #require(value.table(path: on.path.appending(name)))
        #expect(handler.type(of: "run") == .function)
        #expect(handler.path.description == "stop")
      }
    }
    #expect(found == ["go": .string, "1": .function, "stop": .table])
  }

  @Test func unknownKeysAreShownAsAMessageShowsThemSorted() throws {
    let state = try LuaState()
    let definition = try Self.reader(
      "return { name = 'x', stat = 1, inital = 'a', [1] = true, [2.5] = 0, [true] = 1, ['e\\xCC\\x81'] = 1 }", in: state)
    #expect(definition.unknownKeys(known: ["name", "initial"]) == ["'inital'", "'stat'", "'e\u{301}'", "[1]", "[2.5]", "[boolean]"])
    #expect(definition.length == 1)
  }
}
