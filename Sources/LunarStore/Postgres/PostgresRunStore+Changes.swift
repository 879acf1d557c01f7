extension PostgresRunStore: ChangeFeedStore {
  /// The channel the store's tables notify when a statement changed them
  /// (statement triggers, store version 13), the payload the schema.
  public static let changeChannel = "lunar_changes"

  /// Listens on `changeChannel` and on the queues' channel (a job
  /// submitted, claimed, finished): the first call starts listening, so a
  /// change before it is not seen. A lost connection is an error; the next
  /// call connects again.
  public func waitForChange(timeout: Duration) throws(StoreError) -> Bool {
    try changeListener.wait(timeout: timeout, waiting: "waiting for changes")
  }
}
