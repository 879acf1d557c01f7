import Foundation
import LuaKit
import LunarStore

/// Starts the due ticks of every schedule in a store: what a worker's loop
/// calls. Any number of tickers may fire on one store at once; the store's
/// row per schedule and tick makes each tick start at most one run.
public struct ScheduleTicker: Sendable {
  /// What firing did to one tick.
  public struct Fired: Sendable, Equatable {
    /// The schedule.
    public var schedule: LuaString
    /// The tick.
    public var tick: Date
    /// What became of it.
    public var outcome: TickOutcome
  }

  /// The store the schedules and their runs are in.
  public let store: any ScheduleStore
  /// The fingerprint of a schedule's file as a run of it is submitted.
  public let fingerprint: @Sendable (Schedule) throws -> Fingerprint

  /// A ticker over `store`, fingerprinting files with `fingerprint`.
  public init(store: any ScheduleStore, fingerprint: @Sendable @escaping (Schedule) throws -> Fingerprint) {
    self.store = store
    self.fingerprint = fingerprint
  }

  /// Decides every due tick of every schedule not paused at `now`; a
  /// schedule whose cron, zone or file is bad is reported in `problems` and
  /// the others still fire.
  public func fire(now: Date) throws(StoreError) -> (fired: [Fired], problems: [String]) {
    var fired: [Fired] = []
    var problems: [String] = []
    schedules: for schedule in try store.schedules() where !schedule.isPaused {
      let cron: CronExpression
      do {
        cron = try CronExpression(schedule.cron)
      } catch {
        problems.append("schedule \(schedule.name.quoted): \(error)")
        continue
      }
      guard let zone = TimeZone(identifier: schedule.timeZone) else {
        problems.append("schedule \(schedule.name.quoted): unknown time zone '\(schedule.timeZone)'")
        continue
      }
      let last = Self.date(schedule.lastTick ?? schedule.createdAt)
      let plan = TickPlan(
        cron: cron, zone: zone, last: last, now: now,
        catchup: schedule.catchupMicroseconds.map { Double($0) / 1_000_000 })
      guard let newest = plan.newest else { continue }
      for tick in plan.ticks {
        let submission: RunSubmission
        do {
          submission = RunSubmission(
            file: schedule.file, arguments: schedule.arguments, fileFingerprint: try fingerprint(schedule),
            schedule: schedule.name, submittedAt: Self.timestamp(now))
        } catch {
          problems.append("schedule \(schedule.name.quoted): \(error)")
          continue schedules
        }
        let outcome = try store.decideTick(Self.timestamp(tick), of: schedule.name, submitting: submission)
        fired.append(Fired(schedule: schedule.name, tick: tick, outcome: outcome))
      }
      try store.advanceSchedule(schedule.name, to: Self.timestamp(newest))
    }
    return (fired, problems)
  }

  /// Submits a run of schedule `name` now, outside its ticks (`lunar
  /// schedule trigger`, the schedules page's Trigger button), paused or
  /// not; nil if the store has no such schedule.
  /// - Throws: the fingerprint's error for a file that cannot be read, or
  ///   `StoreError`.
  public func trigger(_ name: LuaString, at now: Date) throws -> SubmittedRun? {
    guard let schedule = try store.schedule(named: name) else { return nil }
    guard let runs = store as? any SubmittedRunStore else {
      throw StoreError(.database, "store \(store.location) cannot keep submitted runs")
    }
    return try runs.submit(
      RunSubmission(
        file: schedule.file, arguments: schedule.arguments, fileFingerprint: try fingerprint(schedule), schedule: name,
        submittedAt: Self.timestamp(now)))
  }

  /// `date` as the store keeps times (whole microseconds).
  public static func timestamp(_ date: Date) -> StoreTimestamp {
    StoreTimestamp(microseconds: Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))
  }

  /// The store's time `time` as a date.
  public static func date(_ time: StoreTimestamp) -> Date {
    Date(timeIntervalSince1970: Double(time.microseconds) / 1_000_000)
  }
}
