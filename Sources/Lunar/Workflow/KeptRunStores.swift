import LunarStore
import Synchronization

/// Run stores a process keeps open across the runs it runs one after
/// another (`lunar worker`'s warm `lunar run --host-runs` processes), so
/// each run after the first skips connecting (on PostgreSQL: loading
/// libpq, a server process, checking the schema). One store per location;
/// a PostgreSQL store reconnects by itself when its connection is lost.
public final class KeptRunStores: Sendable, Equatable {
  private let stores = Mutex<[String: any RunStore]>([:])

  /// No store open yet.
  public init() {}

  /// The store at `location`, opened on first use and kept.
  public func store(at location: StoreLocation) throws(StoreError) -> any RunStore {
    if let store = stores.withLock({ $0[location.description] }) { return store }
    let store = try location.openRunStore()
    // Two runs never open at once in one warm process; if they did, the
    // first store kept wins and the other closes with its last use.
    return stores.withLock { kept in
      if let earlier = kept[location.description] { return earlier }
      kept[location.description] = store
      return store
    }
  }

  /// The same kept stores.
  public static func == (lhs: KeptRunStores, rhs: KeptRunStores) -> Bool { lhs === rhs }
}
