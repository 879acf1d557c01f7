import CLua
import CLuaShim

extension LuaState {
  /// Records everything Lua code can reach in the state now (tables,
  /// upvalues, userdata metatables and user values, the basic types'
  /// metatables, the main thread's stack and hook), each with a copy of its
  /// contents, so `restoreSnapshot` can put it all back. The record lives in
  /// the registry; taking another replaces it. `setmetatable`,
  /// `debug.setmetatable` and `debug.upvaluejoin` are replaced by versions
  /// that behave the same and also note what a restore needs to know: a
  /// finalizer made, an upvalue of a recorded closure joined to another.
  public func takeSnapshot() throws(LuaError) {
    let status = lunar_snapshotstate(L)
    if status != LUA_OK {
      throw LuaError(kind: status == LUA_ERRMEM ? .memory : .runtime, message: "cannot record the Lua state (status \(status))")
    }
  }

  /// What `restoreSnapshot` puts back.
  public enum SnapshotScope: Sendable {
    /// Every table, upvalue and metatable recorded, and the main thread's
    /// hook; what Lua code created since is then unreachable.
    case objects
    /// After a full collection: the registry's slots in use must be those
    /// in use at the snapshot (a slot still taken belongs to a Swift object
    /// that outlived what ran), and freed slots are put back as they were.
    case references
    /// Both.
    case objectsAndReferences
  }

  /// What a restore did: how many things it changed, and whether a
  /// finalizer written in Lua may have been made since the last restore
  /// (a full collection may then change things again).
  public struct SnapshotRestore: Sendable, Equatable {
    public var changes: Int
    public var finalizers: Bool

    /// A restore that changed `changes` things.
    public init(changes: Int, finalizers: Bool) {
      self.changes = changes
      self.finalizers = finalizers
    }
  }

  /// Puts back what `takeSnapshot` recorded, within `scope`. Nil when the
  /// state cannot be put back (its registry changed, a slot is still
  /// taken, a recorded closure's upvalue was joined to another, a C library
  /// was loaded, the main thread's stack differs, memory ran out): it must
  /// then be discarded.
  public func restoreSnapshot(_ scope: SnapshotScope) -> SnapshotRestore? {
    let mode =
      switch scope {
      case .objects: LUNAR_RESTORE_ALL
      case .references: LUNAR_RESTORE_SLOTS
      case .objectsAndReferences: LUNAR_RESTORE_ALL_AND_SLOTS
      }
    var finalizers: Int32 = 0
    let changes = lunar_restorestate(L, mode, &finalizers)
    return changes < 0 ? nil : SnapshotRestore(changes: Int(changes), finalizers: finalizers != 0)
  }

  /// Sets the collector back to how a new state has it: running,
  /// generational, Lua's default parameters (a script may have changed them
  /// with `collectgarbage`).
  public func resetCollector() {
    _ = lunar_gcreset(L)
  }
}
