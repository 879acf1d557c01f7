import LuaKit

/// Where schedules are kept, and where their ticks are decided once: a
/// row per schedule and tick, so however many workers fire a tick, one
/// inserts the row and only that one starts its run.
public protocol ScheduleStore: Sendable {
  /// Where the store is, for messages.
  var location: String { get }

  /// Adds `schedule`.
  /// - Throws: `.duplicateSchedule` if one of its name exists.
  func addSchedule(_ schedule: Schedule) throws(StoreError)

  /// Every schedule, by name.
  func schedules() throws(StoreError) -> [Schedule]

  /// The schedule named `name`, or nil.
  func schedule(named name: LuaString) throws(StoreError) -> Schedule?

  /// Pauses or resumes the schedule `name`; resuming at `time` marks the
  /// ticks up to `time` decided, so ticks missed while paused never run.
  /// - Throws: `.noSuchSchedule`.
  func setSchedule(_ name: LuaString, paused: Bool, at time: StoreTimestamp) throws(StoreError)

  /// Removes the schedule `name` and its ticks (its runs stay).
  /// - Throws: `.noSuchSchedule`.
  func removeSchedule(_ name: LuaString) throws(StoreError)

  /// Decides `tick` of schedule `name` in one transaction: inserts its row
  /// unless another caller did, asks the schedule's overlap policy whether
  /// it starts a run, submits `submission` if so, and moves the schedule's
  /// last tick to `tick` if that is later.
  /// - Throws: `.noSuchSchedule`.
  func decideTick(_ tick: StoreTimestamp, of name: LuaString, submitting submission: RunSubmission) throws(StoreError)
    -> TickOutcome

  /// Records that every tick of `name` up to `tick` is decided (ticks
  /// dropped by the catch-up window), if that is later than its last tick.
  func advanceSchedule(_ name: LuaString, to tick: StoreTimestamp) throws(StoreError)
}
