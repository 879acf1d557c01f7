import CLua
import Synchronization
import Testing

@testable import LuaKit

/// Counts live instances, so tests can see that Swift objects on an error
/// path were released.
final class Tracked: Sendable {
  static let live = Atomic<Int>(0)
  let label: String
  init(_ label: String) {
    self.label = label
    Tracked.live.add(1, ordering: .sequentiallyConsistent)
  }
  deinit { Tracked.live.subtract(1, ordering: .sequentiallyConsistent) }
}

/// Runs `source` as a chunk named `@test.lua` and returns its first result.
@discardableResult
func run(_ source: String, in state: LuaState) throws -> LuaValue {
  try state.load(source, name: "@test.lua")
  try state.call(arguments: 0, results: 1)
  defer { state.pop() }
  return try state.value(at: -1)
}

/// Runs `source` and returns the message of the error it must raise.
func failure(_ source: String, in state: LuaState) throws -> LuaError {
  do {
    try run(source, in: state)
  } catch let error as LuaError {
    return error
  }
  Issue.record("expected \(source) to fail")
  return LuaError(message: "")
}

@Suite(.serialized) struct LuaFunctionTests {
  @Test func aSwiftFunctionReceivesArgumentsAndReturnsResults() throws {
    let state = try LuaState()
    state.register("add") { call in
      call.push(try call.integer(1) + call.integer(2))
      return .one
    }
    #expect(try run("return add(40, 2)", in: state) == .integer(42))
    #expect(try run("return math.type(add(1.0, 2))", in: state) == "integer")
  }

  @Test func badArgumentsUseLuasOwnWords() throws {
    let state = try LuaState()
    state.register("submit") { call in
      _ = try call.integer(1)
      _ = try call.number(2)
      return .none
    }
    #expect(try failure("submit('x', 1)", in: state).message == "test.lua:1: bad argument #1 to 'submit' (number expected, got string)")
    #expect(try failure("submit(1, 'x')", in: state).message == "test.lua:1: bad argument #2 to 'submit' (number expected, got string)")
    #expect(try failure("submit(1.5, 1)", in: state).message == "test.lua:1: bad argument #1 to 'submit' (number has no integer representation)")
    #expect(try failure("\nsubmit()", in: state).message == "test.lua:2: bad argument #1 to 'submit' (number expected, got no value)")
    #expect(try failure("local t = {f = submit}; t.f({})", in: state).message == "test.lua:1: bad argument #1 to 'f' (number expected, got table)")
  }

  @Test func methodsCountArgumentsWithoutSelf() throws {
    let state = try LuaState()
    state.push(function: { call in
      _ = try call.string(2)
      return .none
    })
    state.setGlobal("send")
    let error = try failure("local obj = {send = send}; obj:send(nil)", in: state)
    #expect(error.message == "test.lua:1: bad argument #1 to 'send' (string expected, got nil)")
  }

  @Test func aThrownSwiftErrorGetsThePosition() throws {
    struct Broken: Error, CustomStringConvertible { var description: String { "the printer is on fire" } }
    let state = try LuaState()
    state.register("fail") { _ in throw Broken() }
    let error = try failure("local x = 1\nfail()", in: state)
    #expect(error.message == "test.lua:2: the printer is on fire")
    #expect(error.chunk == "test.lua")
    #expect(error.line == 2)
    #expect(error.text == "the printer is on fire")
  }

  @Test func anErrorInAHostFunctionCalledFromLuaCalledFromSwiftReleasesSwiftObjects() throws {
    let before = Tracked.live.load(ordering: .sequentiallyConsistent)
    let state = try LuaState()
    state.register("work") { call in
      let scratch = Tracked("scratch")
      // Calls back into Lua; that Lua code fails; the error passes through
      // this Swift frame as a thrown LuaError, not as a longjmp.
      call.pushUpvalueOrGlobal("callback")
      let inner = LuaState(borrowing: call.L)
      do {
        try inner.call(arguments: 0, results: 0)
      } catch {
        _ = scratch.label
        throw error
      }
      return .none
    }
    try run("function callback() local t = nil; return t.field end", in: state)
    let error = try failure("local function outer()\n  work()\nend\nouter()", in: state)
    #expect(error.message == "test.lua:1: attempt to index a nil value (local 't')")
    let traceback = try #require(error.traceback)
    #expect(traceback.hasPrefix("stack traceback:"))
    #expect(traceback.contains("test.lua:2: in local 'outer'"))
    #expect(traceback.contains("test.lua:4: in main chunk"))
    #expect(Tracked.live.load(ordering: .sequentiallyConsistent) == before, "scratch was released")
  }

  @Test func callsSharingOneMessageHandlerLeaveItInPlace() throws {
    let state = try LuaState()
    try state.load("local n = ...; if n < 0 then error('negative: ' .. n) end; return n * 2", name: "@double.lua")
    let double = LuaReference(popping: state)
    let handler = state.pushMessageHandler()
    var results: [LuaValue] = []
    for n in [1, -3, 5] {
      double.push()
      lua_pushinteger(state.L, lua_Integer(n))
      do {
        try state.call(arguments: 1, results: 1, messageHandler: handler)
        results.append(try state.value(at: -1))
        state.pop()
      } catch let error as LuaError {
        #expect(error.message == "double.lua:1: negative: -3")
        #expect(error.traceback?.contains("double.lua:1: in main chunk") == true)
      }
      // Results and errors are taken from above the handler, never moving it.
      #expect(lua_gettop(state.L) == handler)
    }
    #expect(results == [2, 10])
    state.pop()
    #expect(lua_gettop(state.L) == 0)
  }

  @Test func errorValuesThatAreNotStrings() throws {
    let state = try LuaState()
    let table = try failure("error({code = 42})", in: state)
    #expect(table.message == "(error object is a table value)")
    #expect(table.value == ["code": 42])
    let nilError = try failure("error(nil)", in: state)
    #expect(nilError.message == "(error object is a nil value)")
    #expect(nilError.value == .nil)
    let described = try failure("error(setmetatable({}, {__tostring = function() return 'custom' end}))", in: state)
    #expect(described.message == "custom")
  }

  @Test func syntaxErrorsNameTheChunkAndLine() throws {
    let state = try LuaState()
    do {
      try state.load("local x = 1\nx = = 2", name: "@bad.lua")
      Issue.record("expected a syntax error")
    } catch {
      #expect(error.kind == .syntax)
      #expect(error.message == "bad.lua:2: unexpected symbol near '='")
      #expect(error.line == 2)
    }
  }

  @Test func functionsAreReleasedWhenCollected() throws {
    let before = Tracked.live.load(ordering: .sequentiallyConsistent)
    let state = try LuaState()
    let captured = Tracked("captured")
    state.push(function: { _ in
      _ = captured.label
      return .none
    })
    state.setGlobal("f")
    _ = consume captured
    #expect(Tracked.live.load(ordering: .sequentiallyConsistent) == before + 1)
    try run("f = nil", in: state)
    state.collectGarbage()
    #expect(Tracked.live.load(ordering: .sequentiallyConsistent) == before)
  }

  @Test func valueArgumentsNameTheirPath() throws {
    let state = try LuaState()
    state.register("send") { call in
      _ = try call.value(1, name: "msg")
      return .none
    }
    let error = try failure("send({done = print})", in: state)
    #expect(error.message == "test.lua:1: msg.done: a function cannot cross into Swift")
  }

  @Test func memoryLimitStopsRunawayAllocation() throws {
    let state = try LuaState(memoryLimit: 4 << 20)
    let error = try failure("local t = {} for i = 1, 1e8 do t[i] = ('x'):rep(100) .. i end", in: state)
    #expect(error.kind == .memory)
    #expect(error.message == "not enough memory")
    // The state is still usable afterwards.
    state.collectGarbage()
    #expect(try run("return 1 + 1", in: state) == .integer(2))
  }
}

extension LuaCall {
  /// Test helper: pushes the global `name`.
  func pushUpvalueOrGlobal(_ name: String) {
    lua_getglobal(L, name)
  }
}
