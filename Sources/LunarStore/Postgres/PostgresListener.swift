import Synchronization

/// A connection of its own that `LISTEN`s to some channels, made on the
/// first wait (the store's shared connection cannot wait), for the news
/// of one store: notifications whose payload is its schema, or ends with
/// a space and it. Lost, it is made again on the next wait; a notification
/// sent while none listens is missed, so a waiter waits with a timeout.
final class PostgresListener: Sendable {
  private let url: String
  private let location: String
  private let channels: [String]
  private let listening = Mutex<(db: PostgresConnection, schema: String)?>(nil)

  /// A listener on `channels` of the server `url` (shown as `location`).
  init(url: String, location: String, channels: [String]) {
    self.url = url
    self.location = location
    self.channels = channels
  }

  /// Waits up to `timeout` for a notification of this store; true if one
  /// came. `waiting` says what for, in the error of a lost connection.
  func wait(timeout: Duration, waiting: String) throws(StoreError) -> Bool {
    let (url, location, channels) = (self.url, self.location, self.channels)
    return try listening.withLock { (listener) throws(StoreError) -> Bool in
      do {
        let open: (db: PostgresConnection, schema: String)
        if let listener {
          open = listener
        } else {
          let db = try PostgresConnection(url: url)
          try db.execute(channels.map { "LISTEN \($0)" }.joined(separator: "; "))
          open = (db, try db.query("SELECT current_schema()").text(0, 0))
          listener = open
        }
        let schema = open.schema
        let suffix = Array((" " + schema).utf8)
        return try open.db.waitForNotification(timeout: timeout) { payload in
          payload == schema || payload.utf8.reversed().starts(with: suffix.reversed())
        }
      } catch {
        listener = nil
        throw StoreError(.database, "store \(location): \(waiting): \(error)")
      }
    }
  }
}
