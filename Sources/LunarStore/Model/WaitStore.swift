import LuaKit

/// A run store that also keeps the waits of workflow sleep and wait steps,
/// and the signals sent to runs (both stores Lunar ships are); a separate
/// protocol so that waits stay one concept.
public protocol WaitStore: RunStore {
  /// Records that step `wait.name` of `run` waits until `wait`'s deadline,
  /// replacing any earlier record of that step; durable when this returns.
  /// - Throws: `.noSuchRun` for a run the store does not have.
  func recordStepWait(_ wait: StepWait, of run: RunID) throws(StoreError)

  /// The waits the steps of `run` recorded, by step name.
  func stepWaits(of run: RunID) throws(StoreError) -> [StepWait]

  /// Records signal `name` with `value` for `run`, whether or not a step of
  /// it waits for it yet (a wait that starts later sees it); a later signal
  /// of the same name replaces it. Durable when this returns.
  /// - Throws: `.noSuchRun` for a run the store does not have.
  func sendSignal(_ name: LuaString, value: LuaValue, to run: RunID, at time: StoreTimestamp) throws(StoreError)

  /// The value of signal `name` sent to `run`, or nil if none was sent.
  func signal(_ name: LuaString, of run: RunID) throws(StoreError) -> LuaValue??
}
