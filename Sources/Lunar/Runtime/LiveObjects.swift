/// The live objects of one kind in a runtime (queues, machines), oldest
/// first, kept without keeping any of them alive: each registers itself
/// when made and leaves in its `deinit`, so what Lua can no longer reach is
/// freed. Holders keep the registry itself alive. Loop thread only.
public final class LiveObjects<Object: AnyObject> {
  private struct Entry {
    weak var object: Object?
  }

  private var entries: [Int: Entry] = [:]
  private var nextID = 1

  /// An empty registry.
  init() {}

  /// Registers `object`; returns the id it leaves with (`remove`).
  func add(_ object: Object) -> Int {
    let id = nextID
    nextID += 1
    entries[id] = Entry(object: object)
    return id
  }

  /// Forgets the object registered as `id` (from its `deinit`).
  func remove(_ id: Int) {
    entries[id] = nil
  }

  /// The object registered as `id`, if it is still alive.
  func object(_ id: Int) -> Object? {
    entries[id]?.object
  }

  /// How many objects are registered and alive.
  public var count: Int { entries.count }

  /// Every live object, oldest first.
  public var all: [Object] {
    entries.keys.sorted().compactMap { entries[$0]?.object }
  }
}
