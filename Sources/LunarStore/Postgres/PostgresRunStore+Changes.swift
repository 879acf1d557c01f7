extension PostgresRunStore: ChangeFeedStore {
  /// The channel the store's tables notify when a statement changed them
  /// (statement triggers, store version 13), the payload the schema.
  public static let changeChannel = "lunar_changes"

  /// Listens on `changeChannel` and on the queues' channel (a job
  /// submitted, claimed, finished): the first call starts listening, so a
  /// change before it is not seen. A lost connection is an error; the next
  /// call connects again.
  public func waitForChange(timeout: Duration) throws(StoreError) -> Bool {
    let (url, location) = (self.url, self.location)
    return try changeListener.withLock { (listener) throws(StoreError) -> Bool in
      do {
        let listening: (db: PostgresConnection, schema: String)
        if let open = listener {
          listening = open
        } else {
          let db = try PostgresConnection(url: url)
          try db.execute("LISTEN \(Self.changeChannel); LISTEN \(PostgresQueueStore.notificationChannel)")
          listening = (db, try db.query("SELECT current_schema()").text(0, 0))
          listener = listening
        }
        // Only this store's news: the payload is its schema, or ends with it.
        let schema = listening.schema
        return try listening.db.waitForNotification(timeout: timeout) { payload in
          payload == schema || payload.utf8.reversed().starts(with: (" " + schema).utf8.reversed())
        }
      } catch {
        listener = nil
        throw StoreError(.database, "store \(location): waiting for changes: \(error)")
      }
    }
  }
}
