/// A store that records runs, queues submitted runs and keeps schedules:
/// each backend is all three.
public typealias SchedulingStore = RunStore & SubmittedRunStore & ScheduleStore

extension StoreLocation {
  /// Opens the store here as `openRunStore` does, for submitted runs and
  /// schedules as well as runs.
  public func openSchedulingStore(createIfMissing: Bool = true, options: SQLiteRunStore.Options = .init())
    throws(StoreError) -> any SchedulingStore
  {
    guard let store = try openRunStore(createIfMissing: createIfMissing, options: options) as? any SchedulingStore else {
      throw StoreError(.database, "store \(description) cannot keep submitted runs")
    }
    return store
  }
}
