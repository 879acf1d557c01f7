import CLua
import CLuaShim

/// A Lua value anchored in the registry so Lua's collector keeps it alive
/// while Swift holds it; released when the last Swift owner lets go. Not
/// Sendable: it is created and released on the state's thread.
public final class LuaReference {
  /// The state the value lives in; kept alive by the reference.
  public let state: LuaState
  @usableFromInline let ref: Int32

  /// Pops the top value of `state` and anchors it.
  public init(popping state: LuaState) {
    self.state = state
    self.ref = luaL_ref(state.L, lunar_registryindex())
  }

  /// Pops the top value of `L`, a thread of `state`, and anchors it; the
  /// reference outlives that thread.
  public init(popping L: OpaquePointer, in state: LuaState) {
    self.state = state
    self.ref = luaL_ref(L, lunar_registryindex())
  }

  /// Pops the top value of `thread`, a thread of `state`, and anchors it;
  /// the reference outlives that thread.
  public convenience init(popping thread: some LuaStack, in state: LuaState) {
    self.init(popping: thread.L, in: state)
  }

  /// Pushes the referenced value.
  public func push() {
    lua_rawgeti(state.L, lunar_registryindex(), lua_Integer(ref))
  }

  /// Pushes the referenced value on another thread of the same state.
  @inlinable public func push(on L: OpaquePointer) {
    lua_rawgeti(L, lunar_registryindex(), lua_Integer(ref))
  }

  /// Pushes the referenced value on `thread`, a thread of the same state.
  @inlinable @inline(__always) public func push(on thread: some LuaStack) {
    lua_rawgeti(thread.L, lunar_registryindex(), lua_Integer(ref))
  }

  /// Pops the top value of `L` (a thread of the same state) and anchors it
  /// in place of the referenced one, in the same slot. Not nil: `luaL_ref`
  /// finds free slots by the registry's length, so it could hand out a
  /// slot holding nil to another reference.
  public func replace(popping L: OpaquePointer) {
    lua_rawseti(L, lunar_registryindex(), lua_Integer(ref))
  }

  /// Pops the top value of `thread` in place of the referenced one (see
  /// `replace(popping:)`).
  @inlinable @inline(__always) public func replace(popping thread: some LuaStack) {
    lua_rawseti(thread.L, lunar_registryindex(), lua_Integer(ref))
  }

  /// The registry slot that holds the value, valid while this reference
  /// lives. Code of this package that keeps the reference alive elsewhere
  /// can keep the slot (a plain number) and push with `push(slot:on:)`,
  /// retaining nothing; outside it, a slot beside its owner is a hazard.
  package var slot: Int32 { ref }

  /// Pushes the value in registry slot `slot` (see `slot`).
  @inlinable package static func push(slot: Int32, on L: OpaquePointer) {
    lua_rawgeti(L, lunar_registryindex(), lua_Integer(slot))
  }

  deinit {
    if !state.isClosed { luaL_unref(state.L, lunar_registryindex(), ref) }
  }
}
