import CLua
import Synchronization
import Testing

@testable import LuaKit

/// A Swift object exposed to Lua in these tests.
final class Counter {
  static let deinits = Atomic<Int>(0)
  static var released: Int { deinits.load(ordering: .sequentiallyConsistent) }
  var value: Int64 = 0
  deinit { Counter.deinits.add(1, ordering: .sequentiallyConsistent) }
}

private func counterClass() -> LuaClass<Counter> {
  var luaClass = LuaClass<Counter>(name: "Counter")
  luaClass.method("add") { counter, call in
    counter.value += try call.integer(2)
    call.push(counter.value)
    return .one
  }
  luaClass.property("value") { counter, call in
    call.push(counter.value)
    return .one
  }
  luaClass.describe = { "Counter(\($0.value))" }
  return luaClass
}

/// A second Swift class, to swap metatables with.
final class Gauge {
  var readings: [Int64] = [1, 2, 3]
}

private func gaugeClass() -> LuaClass<Gauge> {
  var luaClass = LuaClass<Gauge>(name: "Gauge")
  luaClass.method("length") { gauge, call in
    call.push(gauge.readings.count)
    return .one
  }
  return luaClass
}

@Suite(.serialized) struct LuaClassTests {
  @Test func methodsPropertiesAndToString() throws {
    let state = try LuaState()
    let luaClass = counterClass()
    state.push(function: { call in
      LuaState(borrowing: call.L).push(Counter(), as: luaClass)
      return .one
    })
    state.setGlobal("newCounter")
    let result = try run("local c = newCounter(); c:add(2); c:add(3); return tostring(c) .. ' ' .. c.value", in: state)
    #expect(result == "Counter(5) 5")
    #expect(try run("return newCounter().missing", in: state) == .nil)
  }

  @Test func propertyReadsAndTheirErrorsPassThroughTheMethodLookup() throws {
    let state = try LuaState()
    var luaClass = counterClass()
    luaClass.property("broken") { _, _ in throw LuaArgumentError.invalid(1, "no value yet") }
    state.push(Counter(), as: luaClass)
    state.setGlobal("c")
    // Methods are found without the getter; a non-string key finds nothing.
    #expect(try run("return type(c.add)", in: state) == "function")
    #expect(try run("return c[1]", in: state) == .nil)
    #expect(try run("return c.value", in: state) == .integer(0))
    let error = try failure("return c.broken", in: state)
    #expect(error.message.contains("no value yet"))
    // The getter still checks its object.
    let wrongSelf = try failure("return getmetatable(c).__index({}, 'value')", in: state)
    #expect(wrongSelf.message.contains("Counter expected, got table"))
  }

  /// Properties are found by a Swift closure; the registry lists their
  /// names by class, so a tool can list an object's fields.
  @Test func theRegistryListsEachClassesProperties() throws {
    let state = try LuaState()
    var luaClass = counterClass()
    luaClass.property("limit") { _, call in
      call.push(10)
      return .one
    }
    state.push(Counter(), as: luaClass)
    state.push(Gauge(), as: gaugeClass())
    let listed = try run(
      "local p = debug.getregistry()['lunar.properties'] return table.concat(p.Counter, ',') .. ' ' .. #p.Gauge",
      in: state)
    #expect(listed == "limit,value 0")
  }

  @Test func theMetatableNamesTheType() throws {
    let state = try LuaState()
    let luaClass = counterClass()
    state.push(Counter(), as: luaClass)
    state.setGlobal("c")
    let error = try failure("c.add({}, 1)", in: state)
    #expect(error.message == "test.lua:1: bad argument #1 to 'add' (Counter expected, got table)")
    let selfError = try failure("local t = {add = c.add}; t:add(1)", in: state)
    #expect(selfError.message == "test.lua:1: calling 'add' on bad self (Counter expected, got table)")
    let wrongArgument = try failure("c:add('many')", in: state)
    #expect(wrongArgument.message == "test.lua:1: bad argument #1 to 'add' (number expected, got string)")
    #expect(try run("return getmetatable(c).__name", in: state) == "Counter")
  }

  @Test func methodsRefuseUserdataOfAnotherClass() throws {
    let state = try LuaState()
    state.push(Counter(), as: counterClass())
    state.setGlobal("c")
    var other = LuaClass<Counter>(name: "Other")
    other.method("add") { _, call in
      call.push("other")
      return .one
    }
    state.push(Counter(), as: other)
    state.setGlobal("o")
    #expect(try run("return o:add(1)", in: state) == "other")
    let crossed = try failure("c.add(o, 1)", in: state)
    #expect(crossed.message == "test.lua:1: bad argument #1 to 'add' (Counter expected, got Other)")
    let file = try failure("c.add(io.stdout, 1)", in: state)
    #expect(file.message == "test.lua:1: bad argument #1 to 'add' (Counter expected, got FILE*)")
    #expect(try run("return c:add(4)", in: state) == .integer(4))
  }

  @Test func aSwappedMetatableCannotPassOneClassOffAsAnother() throws {
    let state = try LuaState()
    let before = Counter.released
    state.push(Counter(), as: counterClass())
    state.setGlobal("c")
    state.push(Gauge(), as: gaugeClass())
    state.setGlobal("g")
    try run("debug.setmetatable(c, getmetatable(g))", in: state)
    // Gauge's method finds a Counter in the block, whatever the metatable says.
    let swapped = try failure("return c:length()", in: state)
    #expect(swapped.message == "test.lua:1: calling 'length' on bad self (Gauge expected, got Counter)")
    let direct = try failure("return g.length(c)", in: state)
    #expect(direct.message == "test.lua:1: bad argument #1 to 'length' (Gauge expected, got Counter)")
    #expect(try run("return g:length()", in: state) == .integer(3))
    // Swift still finds the Counter in it.
    state.getGlobal("c")
    #expect(state.object(at: -1, of: Counter.self) != nil)
    #expect(state.object(at: -1, of: Gauge.self) == nil)
    state.pop()
    // Called by hand on anything, __gc leaves what is not an object alone;
    // the swapped object is still released when collected.
    try run("local gc = getmetatable(g).__gc; gc(1); gc(io.stdout); gc(nil); gc({})", in: state)
    try run("c = nil", in: state)
    state.collectGarbage()
    #expect(Counter.released == before + 1)
  }

  @Test func objectsAreFoundByTheirSwiftClass() throws {
    let state = try LuaState()
    let counter = Counter()
    state.push(counter, as: counterClass())
    #expect(state.object(at: -1, of: Counter.self) === counter)
    #expect(state.object(at: -1, of: Gauge.self) == nil)
    state.push(function: { _ in .none })
    lua_pushlightuserdata(state.L, Unmanaged.passUnretained(counter).toOpaque())
    try state.load("return io.stdout", name: "=stdout")
    try state.call(arguments: 0, results: 1)
    state.push("text")
    for index: Int32 in -4 ... -1 { #expect(state.object(at: index, of: Counter.self) == nil) }
  }

  @Test func garbageCollectionReleasesTheSwiftObject() throws {
    let state = try LuaState()
    let before = Counter.released
    do {
      state.push(Counter(), as: counterClass())
      state.setGlobal("c")
    }
    state.collectGarbage()
    #expect(Counter.released == before, "still referenced from Lua")
    try run("c = nil", in: state)
    state.collectGarbage()
    #expect(Counter.released == before + 1)
  }

  @Test func closingTheStateReleasesEverything() throws {
    let before = Counter.released
    do {
      let state = try LuaState()
      state.push(Counter(), as: counterClass())
      state.setGlobal("c")
    }
    #expect(Counter.released == before + 1)
  }

  @Test func referencesKeepValuesAliveUntilDropped() throws {
    let state = try LuaState()
    let before = Counter.released
    state.push(Counter(), as: counterClass())
    var reference: LuaReference? = LuaReference(popping: state)
    state.collectGarbage()
    #expect(Counter.released == before)
    reference?.push()
    #expect(state.type(at: -1) == .userdata)
    // The slot pushes the same value while the reference lives.
    LuaReference.push(slot: try #require(reference).slot, on: state.L)
    #expect(lua_rawequal(state.L, -1, -2) == 1)
    state.pop(2)
    reference = nil
    state.collectGarbage()
    #expect(Counter.released == before + 1)
  }

  @Test func aReplacedReferenceKeepsItsSlotAndLetsTheOldValueGo() throws {
    let state = try LuaState()
    let before = Counter.released
    state.push(Counter(), as: counterClass())
    let reference = LuaReference(popping: state)
    let slot = reference.slot
    state.push("other")
    reference.replace(popping: state.L)
    #expect(reference.slot == slot)
    LuaReference.push(slot: slot, on: state.L)
    #expect(try state.value(at: -1) == "other")
    state.pop()
    #expect(lua_gettop(state.L) == 0)
    state.collectGarbage()
    #expect(Counter.released == before + 1)
  }
}
