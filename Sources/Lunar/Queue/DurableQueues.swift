import LuaKit
import LunarStore

/// The store a runtime's durable queues live in: the one the run was given
/// (`lunar run`'s `--store`, `LUNAR_STORE` or the default; under
/// `--sandbox` only `--store`), opened on first use and kept. Loop thread
/// only.
final class DurableQueues: RuntimeComponent {
  /// Where the store is; nil when the run has none.
  private let location: StoreLocation?
  private var opened: (any QueueStore)?

  init(core: RuntimeCore) {
    location = core.configuration.store
  }

  /// The run's queue store, opened now if it is not yet.
  /// - Throws: `DurableQueueError` when the run has no store or it cannot
  ///   be opened; `what` names the queue asked for.
  func store(for what: String) throws(DurableQueueError) -> any QueueStore {
    if let opened { return opened }
    guard let location else {
      throw DurableQueueError(
        "\(what) needs a store, and this run has none: run it with lunar run --store URL (or LUNAR_STORE; under --sandbox only --store)"
      )
    }
    do {
      let store = try location.openQueueStore()
      opened = store
      return store
    } catch {
      throw DurableQueueError("\(what): \(error.message)")
    }
  }
}

/// Why a durable queue call failed, raised in Lua as a plain message (the
/// caller's position is put before it).
struct DurableQueueError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) { self.description = description }
}
