import LuaKit

/// A schedule as the store keeps it: when its runs start, and what they run.
public struct Schedule: Sendable, Equatable {
  /// Its name, as bytes.
  public var name: LuaString
  /// The cron expression, as written (LunarSchedules parses it).
  public var cron: String
  /// The IANA time zone its cron expression is read in.
  public var timeZone: String
  /// What a tick does while the previous run is unfinished.
  public var overlap: ScheduleOverlap
  /// How far back missed ticks still run after downtime, in microseconds;
  /// nil: only the last missed tick.
  public var catchupMicroseconds: Int64?
  /// The workflow file, as given.
  public var file: String
  /// The workflow's arguments.
  public var arguments: [String]
  /// True while paused: no tick starts a run.
  public var isPaused: Bool
  /// When it was added: its first tick comes after.
  public var createdAt: StoreTimestamp
  /// The newest tick decided (started or skipped), if any.
  public var lastTick: StoreTimestamp?

  /// A schedule with every field given.
  public init(
    name: LuaString, cron: String, timeZone: String, overlap: ScheduleOverlap = .skip, catchupMicroseconds: Int64? = nil,
    file: String, arguments: [String] = [], isPaused: Bool = false, createdAt: StoreTimestamp = .now,
    lastTick: StoreTimestamp? = nil
  ) {
    self.name = name
    self.cron = cron
    self.timeZone = timeZone
    self.overlap = overlap
    self.catchupMicroseconds = catchupMicroseconds
    self.file = file
    self.arguments = arguments
    self.isPaused = isPaused
    self.createdAt = createdAt
    self.lastTick = lastTick
  }
}
