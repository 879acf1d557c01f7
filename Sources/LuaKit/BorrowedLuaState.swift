/// A borrowed `LuaState` for whichever Lua thread the code runs on, made
/// again only when the thread changes. `LuaState(borrowing:)` allocates a
/// view each time; code that calls into Lua per message keeps one of these.
public final class BorrowedLuaState {
  @usableFromInline var current: LuaState?

  /// No view yet.
  public init() {}

  /// A view of `L` (the previous one if it was for `L`).
  @inlinable public func on(_ L: OpaquePointer) -> LuaState {
    if let current, current.L == L { return current }
    let state = LuaState(borrowing: L)
    current = state
    return state
  }
}
