/// A store that tells when another process changed it: what keeps
/// `lunar serve`'s pages live without fetching them again and again.
/// SQLite notices a commit of another connection; PostgreSQL is told by
/// its writers (`LISTEN`/`NOTIFY`).
public protocol ChangeFeedStore: RunStore {
  /// Waits up to `timeout` for a change another connection committed since
  /// the last call (or, on the first, since the call began); true if one
  /// came. A hint, never a promise: a page reads the store afresh either way.
  func waitForChange(timeout: Duration) throws(StoreError) -> Bool
}
