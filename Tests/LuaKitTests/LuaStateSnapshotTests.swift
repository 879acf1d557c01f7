import LuaKit
import Testing

/// A state restored from its snapshot is, to Lua code, the state as it was
/// when recorded; what cannot be put back is refused.
@Suite struct LuaStateSnapshotTests {
  /// Runs `source` and returns its one result as a string (`tostring`).
  static func evaluate(_ source: String, in state: LuaState) throws -> String? {
    try state.load("return tostring(((function() \(source) end)()))", name: "=test")
    try state.call(arguments: 0, results: 1)
    defer { state.pop() }
    return state.string(at: -1)
  }

  static func recordedState() throws -> LuaState {
    let state = try LuaState()
    _ = try evaluate(
      """
      config = { depth = 3, ratio = 0.5, whole = 1, nan = 0/0, list = { "a", "b" } }
      local count = 0
      function counter() count = count + 1; return count end
      shared = setmetatable({}, { __index = { inherited = true } })
      """, in: state)
    try state.takeSnapshot()
    return state
  }

  @Test func tablesUpvaluesAndMetatablesComeBackAsRecorded() throws {
    let state = try Self.recordedState()
    _ = try Self.evaluate(
      """
      leaked = true
      config.depth = nil; config.added = {}; config.ratio = 1; config.whole = 1.0; table.insert(config.list, "c")
      counter(); counter()
      getmetatable(shared).__index = nil; setmetatable(config, {})
      string.leaked = true; getmetatable("").__index = {}
      debug.setmetatable(0, { __index = math })
      """, in: state)
    let restored = try #require(state.restoreSnapshot(.objects))
    #expect(restored.changes > 0)
    // Unchanged values (a NaN too) are not changes.
    #expect(state.restoreSnapshot(.objects) == LuaState.SnapshotRestore(changes: 0, finalizers: false))
    let now = try Self.evaluate(
      """
      return table.concat({ tostring(leaked), config.depth, config.ratio, math.type(config.whole), #config.list,
        tostring(config.added), counter(), tostring(shared.inherited), tostring(getmetatable(config)),
        tostring(string.leaked), ("x"):upper(), tostring(getmetatable(0)) }, " ")
      """, in: state)
    #expect(now == "nil 3 0.5 integer 2 nil 1 true nil nil X nil")
  }

  @Test func aChangedRegistryOrATakenReferenceCannotBeRestored() throws {
    let state = try Self.recordedState()
    _ = try Self.evaluate("debug.getregistry().leaked = true", in: state)
    #expect(state.restoreSnapshot(.objects) == nil)

    let other = try Self.recordedState()
    other.push("kept")
    let kept = LuaReference(popping: other)
    other.collectGarbage()
    #expect(other.restoreSnapshot(.references) == nil)
    withExtendedLifetime(kept) {}
  }

  @Test func referencesReleasedSinceAreFreedAgain() throws {
    let state = try Self.recordedState()
    for _ in 0..<3 {
      state.push("made and released")
      _ = LuaReference(popping: state)
    }
    state.collectGarbage()
    #expect(state.restoreSnapshot(.references) != nil)
    state.push("next")
    let next = LuaReference(popping: state)
    next.push()
    #expect(state.string(at: -1) == "next")
    state.pop()
  }

  @Test func aFinalizerMadeWithSetmetatableIsNoted() throws {
    let state = try Self.recordedState()
    _ = try Self.evaluate("setmetatable({}, {})", in: state)
    #expect(state.restoreSnapshot(.objects)?.finalizers == false)
    _ = try Self.evaluate("setmetatable({}, { __gc = function() end })", in: state)
    #expect(state.restoreSnapshot(.objects)?.finalizers == true)
    _ = try Self.evaluate("debug.setmetatable({}, { __gc = function() end })", in: state)
    #expect(state.restoreSnapshot(.objects)?.finalizers == true)
    #expect(state.restoreSnapshot(.objects)?.finalizers == false)
  }

  @Test func anUpvalueOfARecordedClosureJoinedToAnotherCannotBeRestored() throws {
    let state = try Self.recordedState()
    // Joining a closure made since is what busted does to every test.
    _ = try Self.evaluate("local x; local function f() return x end; debug.upvaluejoin(f, 1, counter, 1)", in: state)
    #expect(state.restoreSnapshot(.objects) != nil)
    _ = try Self.evaluate("local x; debug.upvaluejoin(counter, 1, function() return x end, 1)", in: state)
    #expect(state.restoreSnapshot(.objects) == nil)
  }

  @Test func theWatchedFunctionsFailAsTheStockOnesDo() throws {
    let source = """
      local function counter() return counter end
      local protected = setmetatable({}, { __metatable = false })
      local a = select(2, pcall(setmetatable, protected, {}))
      local b = select(2, pcall(function() return setmetatable(1, {}) end))
      local c = select(2, pcall(function() return debug.setmetatable({}, 1) end))
      local d = select(2, pcall(setmetatable, {}, 1))
      local e = select(2, pcall(function() debug.upvaluejoin(counter, 9, counter, 1) end))
      local f = select(2, pcall(function() debug.upvaluejoin(print, 1, counter, 1) end))
      local g = select(2, pcall(debug.upvaluejoin, counter, "x"))
      return table.concat({ a, b, c, d, e, f, g }, "|")
      """
    let stock = try Self.evaluate(source, in: try LuaState())
    #expect(stock?.contains("bad argument #2 to 'setmetatable' (nil or table expected, got number)") == true)
    #expect(try Self.evaluate(source, in: try Self.recordedState()) == stock)
  }
}
