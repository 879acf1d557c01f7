import CLua
import LuaKit
import Testing

@Suite struct BorrowedLuaStateTests {
  @Test func reusesTheViewForTheSameThreadAndMakesANewOneForAnother() throws {
    let state = try LuaState()
    let views = BorrowedLuaState()
    let main = views.on(state.L)
    #expect(main.L == state.L)
    #expect(views.on(state.L) === main)

    let thread = lua_newthread(state.L)!
    let other = views.on(thread)
    #expect(other.L == thread)
    #expect(other !== main)
    #expect(views.on(state.L) !== other)
    state.pop()
  }

  @Test func aBorrowedViewNeverClosesTheState() throws {
    let state = try LuaState()
    do {
      let views = BorrowedLuaState()
      views.on(state.L).push("still open")
    }
    #expect(state.string(at: -1) == "still open")
    #expect(!state.isClosed)
  }
}
