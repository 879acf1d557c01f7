import LuaKit
import Synchronization

/// The `store` service: a key-value store of values, shared by the run's
/// actions (in memory; copies go in and out). Keys are Lua strings, told
/// apart by their bytes as Lua tells them.
public final class KeyValueStore: Sendable {
  private let values = Mutex<[LuaString: LuaValue]>([:])

  public init() {}

  /// The value at `key`, or `.nil`.
  public func get(_ key: LuaString) -> LuaValue { values.withLock { $0[key] ?? .nil } }

  /// Sets (or, with `.nil`, removes) the value at `key`.
  public func set(_ key: LuaString, _ value: LuaValue) {
    values.withLock { $0[key] = value == .nil ? nil : value }
  }

  /// Every key, in byte order.
  public var keys: [LuaString] { values.withLock { $0.keys.sorted() } }
}
