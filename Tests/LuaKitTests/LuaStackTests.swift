import LuaKit
import Testing

/// The stack operations every `LuaStack` (state, call, thread) shares.
@Suite struct LuaStackTests {
  /// Runs `source` and leaves its one result on the stack.
  static func evaluate(_ source: String, in state: LuaState) throws {
    try state.load(source, name: "=test")
    try state.call(arguments: 0, results: 1)
  }

  struct Refusal: Error {}

  @Test func aStackScopeDropsWhatItPushedOnReturnAndOnThrow() throws {
    let state = try LuaState()
    state.push("kept")
    let kept = state.withStackScope {
      state.push(1)
      state.push("two")
      return state.top
    }
    #expect(kept == 3)
    #expect(state.top == 1)
    #expect(throws: Refusal.self) {
      try state.withStackScope { () throws(Refusal) in
        state.newTable()
        throw Refusal()
      }
    }
    #expect(state.top == 1)
    #expect(state.string(at: -1) == "kept")
  }

  @Test func fieldsAreReadAndWrittenRawSoNoMetamethodRuns() throws {
    let state = try LuaState()
    try Self.evaluate(
      """
      return setmetatable({ present = 1 }, {
        __index = function() error('__index ran') end,
        __newindex = function() error('__newindex ran') end,
      })
      """, in: state)
    let table = state.top
    #expect(state.pushField("absent", of: table) == .nil)
    #expect(state.pushField("present", of: table) == .number)
    #expect(state.integer(at: -1) == 1)
    state.pop(2)
    state.push("stored")
    state.setField("absent", of: table)
    state.push(true)
    state.setField(3, of: table)
    state.push(LuaString(bytes: [0x00, 0xFF]))
    state.push(2.5)
    state.setField(of: table)
    #expect(state.top == table)
    // Lua itself sees what was stored, through rawget: no metamethod ran.
    state.getGlobal("rawget")
    state.pushValue(at: table)
    state.push("absent")
    try state.call(arguments: 2, results: 1)
    #expect(state.string(at: -1) == "stored")
    #expect(state.pushField(3, of: table) == .boolean)
    #expect(state.pushField(LuaString(bytes: [0x00, 0xFF]), of: table) == .number)
    #expect(state.number(at: -1) == 2.5)
  }

  @Test func aFieldFoundByTheValueAtAnIndexLeavesThatKeyInPlace() throws {
    let state = try LuaState()
    try Self.evaluate("return { go = 'moving' }", in: state)
    state.push("go")
    #expect(state.pushField(keyAt: -1, of: -2) == .string)
    #expect(state.top == 3)
    #expect(state.string(at: -1) == "moving")
    #expect(state.string(at: -2) == "go")
  }

  @Test func iterationVisitsEveryEntryRawAndRestoresTheStack() throws {
    let state = try LuaState()
    try Self.evaluate(
      """
      return setmetatable({ 10, 20, x = 'y', [true] = 0.5 }, { __pairs = function() error('__pairs ran') end })
      """, in: state)
    var seen: [LuaKey: LuaValue] = [:]
    try state.forEachEntry(of: -1) { key, value in
      // Reading a number key as text must not change the key lua_next sees.
      _ = key.bytes
      state.push("pushed by the body")
      seen[try #require(key.key)] = try value.value()
    }
    #expect(seen == [1: 10, 2: 20, "x": "y", .boolean(true): 0.5])
    #expect(state.top == 1)
    #expect(state.entryCount(of: -1) == 4)
    #expect(state.rawLength(at: -1) == 2)

    var visited = 0
    #expect(throws: Refusal.self) {
      try state.forEachEntry(of: 1) { (_, _) throws(Refusal) in
        visited += 1
        throw Refusal()
      }
    }
    #expect(visited == 1)
    #expect(state.top == 1)
  }

  @Test func keysOfEveryKindAreToldApart() throws {
    let state = try LuaState()
    try Self.evaluate("return { [1.5] = 'a', [2] = 'b', ['2'] = 'c', [false] = 'd', [{}] = 'e' }", in: state)
    var keys: [LuaKey] = []
    var others: [String] = []
    state.forEachEntry(of: -1) { key, _ in
      if let luaKey = key.key { keys.append(luaKey) } else { others.append(key.typeName) }
    }
    #expect(Set(keys) == [.number(1.5), .integer(2), .string("2"), .boolean(false)])
    #expect(others == ["table"])
  }

  @Test func numbersAreReadAsNumbersAndStringsAreNotConverted() throws {
    let state = try LuaState()
    state.push("12")
    state.push(7.0)
    state.push(7.5)
    state.push(Int64.min)
    #expect(state.integer(at: 1) == nil)
    #expect(state.number(at: 1) == nil)
    #expect(state.integer(at: 2) == 7)
    #expect(state.integer(at: 3) == nil)
    #expect(state.number(at: 3) == 7.5)
    #expect(state.integer(at: 4) == Int64.min)
    #expect(state.bytes(at: 1) == "12")
    #expect(state.type(at: 1) == .string)
  }

  @Test func valuesMoveAsLuaMovesThem() throws {
    let state = try LuaState()
    for text in ["a", "b", "c"] { state.push(text) }
    state.push("d")
    state.insert(at: 1)  // d a b c
    state.remove(at: 2)  // d b c
    state.push("e")
    state.replace(at: 1)  // e b c
    #expect((1...state.top).map { state.string(at: $0) } == ["e", "b", "c"])
    #expect(state.absoluteIndex(-1) == 3)
    state.pushValue(at: 2)
    #expect(state.rawEquals(-1, 2))
    #expect(!state.rawEquals(-1, 1))
  }

  @Test func valuesMoveInOrderToAnotherThreadOfTheState() throws {
    let state = try LuaState()
    try Self.evaluate("return coroutine.create(function() end)", in: state)
    let thread = try #require(state.thread(at: -1))
    let below = thread.top  // a new coroutine holds its body
    state.push("first")
    state.push(Int64(2))
    state.move(2, to: thread)
    #expect(state.top == 1)
    #expect(thread.top == below + 2)
    #expect(thread.string(at: -2) == "first" && thread.integer(at: -1) == 2)
  }

  @Test func typeNamesHonourName() throws {
    let state = try LuaState()
    try Self.evaluate("return setmetatable({}, { __name = 'Widget' })", in: state)
    state.pushNil()
    #expect(state.typeName(at: 1) == "Widget")
    #expect(state.type(at: 1).name == "table")
    #expect(state.typeName(at: 2) == "nil")
    #expect(state.type(at: 3) == .none)
    #expect(LuaType.none.name == "no value")
    #expect(LuaType.lightUserdata.name == "userdata")
  }

  @Test func aMetatableSetFromSwiftGovernsLua() throws {
    let state = try LuaState()
    state.newTable()
    state.newTable(fieldCapacity: 1)
    state.push(function: { call in
      call.push("from __index")
      return .one
    })
    state.setField("__index", of: -2)
    state.setMetatable(of: -2)
    state.setGlobal("t")
    try Self.evaluate("return t.anything", in: state)
    #expect(state.string(at: -1) == "from __index")
  }

  @Test func theRegistryAndTheLoadedModulesAreReachable() throws {
    let state = try LuaState()
    state.push("kept in the registry")
    state.setRegistryField("test.key")
    #expect(state.pushRegistryField("test.key") == .string)
    #expect(state.string(at: -1) == "kept in the registry")
    state.pop()
    state.pushLoadedModules()
    #expect(state.pushField("string", of: -1) == .table)
    state.getGlobal("string")
    #expect(state.rawEquals(-1, -2))
    state.pop(3)
    state.pushPreloadedModules()
    try Self.evaluate("return package.preload", in: state)
    #expect(state.rawEquals(-1, -2))
    state.pop(2)
    #expect(state.top == 0)
  }

  @Test func aHostCallAndAThreadViewAreStacksToo() throws {
    let state = try LuaState()
    state.register("describe") { call in
      // The call's own arguments, read through the stack operations.
      let count = call.rawLength(at: 1)
      call.pushField(1, of: 1)
      call.push("\(count) item(s), first \(call.string(at: -1) ?? "?")")
      return .one
    }
    try Self.evaluate("return describe { 'x', 'y' }", in: state)
    #expect(state.string(at: -1) == "2 item(s), first x")
    state.pop()

    try Self.evaluate("return coroutine.create(function() end)", in: state)
    let coroutine = try #require(state.thread(at: -1))
    #expect(coroutine.type(at: 1) == .function, "the body waits on the coroutine's stack")
    coroutine.push(Int64(42))
    #expect(coroutine.top == 2)
    #expect(coroutine.integer(at: -1) == 42)
    #expect(state.top == 1, "pushed on the coroutine's own stack")
  }

  @Test func aPathFromNoRootStartsAtItsFirstKey() {
    #expect(LuaPath("").appending("context").appending("items").appending(3).description == "context.items[3]")
    #expect(LuaPath("").appending(1).description == "[1]")
    #expect(LuaPath("payload").appending("x").description == "payload.x")
  }
}
