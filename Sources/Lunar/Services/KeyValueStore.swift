import LuaKit
import Synchronization

/// The `store` service: a key-value store of values, shared by the run's
/// actions (in memory; copies go in and out).
public final class KeyValueStore: Sendable {
  private let values = Mutex<[String: LuaValue]>([:])

  public init() {}

  /// The value at `key`, or `.nil`.
  public func get(_ key: String) -> LuaValue { values.withLock { $0[key] ?? .nil } }

  /// Sets (or, with `.nil`, removes) the value at `key`.
  public func set(_ key: String, _ value: LuaValue) {
    values.withLock { $0[key] = value == .nil ? nil : value }
  }

  /// Every key, sorted.
  public var keys: [String] { values.withLock { $0.keys.sorted() } }
}
