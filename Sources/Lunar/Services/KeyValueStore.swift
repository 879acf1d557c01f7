import LuaKit
import Synchronization

/// The `store` service: a key-value store of values, shared by the run's
/// actions (in memory; copies go in and out). Keys are Lua strings, told
/// apart by their bytes as Lua tells them. Copies Lua puts in keep their
/// charge against the memory limit until replaced or removed.
public final class KeyValueStore: Sendable {
  private let values = Mutex<[LuaString: ChargedValue]>([:])

  public init() {}

  /// The value at `key`, or `.nil`.
  public func get(_ key: LuaString) -> LuaValue { values.withLock { $0[key]?.value ?? .nil } }

  /// Sets (or, with `.nil`, removes) the value at `key`.
  public func set(_ key: LuaString, _ value: LuaValue) {
    set(key, ChargedValue(value))
  }

  /// Sets (or, with `.nil`, removes) the value at `key`, keeping its charge.
  public func set(_ key: LuaString, _ value: ChargedValue) {
    // The old value comes out of the lock, so it is released outside it.
    _ = values.withLock { values in
      value.value == .nil ? values.removeValue(forKey: key) : values.updateValue(value, forKey: key)
    }
  }

  /// Every key, in byte order.
  public var keys: [LuaString] { values.withLock { $0.keys.sorted() } }
}
