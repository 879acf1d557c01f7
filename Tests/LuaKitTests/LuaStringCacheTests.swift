import CLua
import LuaKit
import Testing

@Suite struct LuaStringCacheTests {
  @Test func findsAStringCachedBeforeEvenWhenLuaMadeItAgain() throws {
    let state = try LuaState()
    let cache = LuaStringCache<Int>(capacity: 4, in: state)
    state.push("flip")
    #expect(cache.value(at: -1, on: state.L) == nil)
    cache.insert(7, forStringAt: -1, on: state.L)
    state.pop()

    // The same text produced by running Lua code is the same short string.
    try state.load("return ('fl' .. 'ip')", name: "=test")
    try state.call(arguments: 0, results: 1)
    #expect(cache.value(at: -1, on: state.L) == 7)
    state.pop()
    state.push("flop")
    #expect(cache.value(at: -1, on: state.L) == nil)
    state.pop()
  }

  @Test func insertsOnTheThreadItIsGivenAndFindsOnAnyOther() throws {
    let state = try LuaState()
    let cache = LuaStringCache<Int>(capacity: 4, in: state)
    let thread = lua_newthread(state.L)!
    let mainTop = lua_gettop(state.L)
    LuaState(borrowing: thread).push("reload")
    cache.insert(3, forStringAt: -1, on: thread)
    // Nothing was pushed on, or left on, the main thread's stack.
    #expect(lua_gettop(state.L) == mainTop)
    #expect(lua_gettop(thread) == 1)
    state.push("reload")
    #expect(cache.value(at: -1, on: state.L) == 3)
    state.pop(2)
  }

  @Test func keepsItsStringsAliveThroughACollection() throws {
    let state = try LuaState()
    let cache = LuaStringCache<String>(capacity: 4, in: state)
    try state.load("return string.rep('ab', 3)", name: "=test")
    try state.call(arguments: 0, results: 1)
    cache.insert("ababab", forStringAt: -1, on: state.L)
    state.pop()
    // Many new strings after a full collection: none may take the cached
    // one's place, since the cache anchors it.
    try state.load("collectgarbage() local t = {} for i = 1, 1000 do t[i] = 'x' .. i end", name: "=test")
    try state.call(arguments: 0, results: 0)
    state.push("x500")
    #expect(cache.value(at: -1, on: state.L) == nil)
    state.pop()
    state.push("ababab")
    #expect(cache.value(at: -1, on: state.L) == "ababab")
    state.pop()
  }

  @Test func ignoresLongStringsNonStringsAndAFullCache() throws {
    let state = try LuaState()
    let cache = LuaStringCache<Int>(capacity: 2, in: state)
    let long = String(repeating: "x", count: LuaStringCache<Int>.longestCachedLength + 1)
    state.push(long)
    cache.insert(1, forStringAt: -1, on: state.L)
    state.pop()
    #expect(cache.count == 0)

    lua_pushinteger(state.L, 42)
    cache.insert(2, forStringAt: -1, on: state.L)
    #expect(cache.count == 0)
    #expect(cache.value(at: -1, on: state.L) == nil)
    // Asking must not turn the number into a string in place.
    #expect(lua_type(state.L, -1) == LUA_TNUMBER)
    state.pop()

    for (value, name) in ["a", "b", "c"].enumerated() {
      state.push(name)
      cache.insert(value, forStringAt: -1, on: state.L)
      cache.insert(value + 10, forStringAt: -1, on: state.L)  // a second insert changes nothing
      state.pop()
    }
    #expect(cache.count == 2)
    state.push("b")
    #expect(cache.value(at: -1, on: state.L) == 1)
    state.pop()
    state.push("c")
    #expect(cache.value(at: -1, on: state.L) == nil)
    state.pop()
  }

  private final class Census {
    var released = 0
  }

  private final class Tracked {
    let name: String
    let census: Census
    init(_ name: String, _ census: Census) {
      self.name = name
      self.census = census
    }
    deinit { census.released += 1 }
  }

  @Test func keepsEachValueUntilItIsFreedItself() throws {
    let state = try LuaState()
    let census = Census()
    var cache: LuaStringCache<Tracked>? = LuaStringCache(capacity: 4, in: state)
    for name in ["a", "b", "c", "a"] {
      state.push(name)
      cache?.insert(Tracked(name, census), forStringAt: -1, on: state.L)
      state.pop()
    }
    #expect(census.released == 1, "the second value for 'a' is not kept")
    #expect(cache?.count == 3)
    state.push("c")
    #expect(cache?.value(at: -1, on: state.L)?.name == "c")
    state.pop()
    #expect(census.released == 1)
    cache = nil
    #expect(census.released == 4)
  }
}
