import Foundation
import LuaKit
import LunarStore
import Synchronization
import Testing
import TestSupport

@testable import LunarSchedules

@Suite struct ScheduleTickerTests {
  static let start = Date(timeIntervalSince1970: 1_800_000_000)

  static func fingerprint(_ schedule: Schedule) throws -> Fingerprint {
    try Fingerprint(of: [.string(LuaString(schedule.file))])
  }

  /// Several tickers, each on its own connection and thread, fire every
  /// second of two minutes of an every-second schedule at once: every tick
  /// started exactly one run.
  @Test func concurrentTickersStartOneRunPerTick() throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("store.db").path
    let setup = try SQLiteRunStore(path: path)
    try setup.addSchedule(
      Schedule(
        name: LuaString("every-second"), cron: "* * * * * *", timeZone: "UTC", overlap: .allow,
        catchupMicroseconds: 3_600_000_000, file: "tick.lua", createdAt: ScheduleTicker.timestamp(Self.start)))
    let workers = 4
    let seconds = 120
    let group = DispatchGroup()
    let results = Mutex<[[ScheduleTicker.Fired]]>([])
    let failures = Mutex<[String]>([])
    for _ in 0..<workers {
      group.enter()
      let thread = Thread {
        defer { group.leave() }
        do {
          let ticker = ScheduleTicker(store: try SQLiteRunStore(path: path), fingerprint: Self.fingerprint)
          var fired: [ScheduleTicker.Fired] = []
          for second in 1...seconds {
            fired += try ticker.fire(now: Self.start.addingTimeInterval(Double(second))).fired
          }
          results.withLock { $0.append(fired) }
        } catch {
          failures.withLock { $0.append("\(error)") }
        }
      }
      thread.start()
    }
    group.wait()
    #expect(failures.withLock { $0 } == [])
    let all = results.withLock { $0 }.joined()
    var started: [Date: Int] = [:]
    for fired in all {
      if case .started = fired.outcome { started[fired.tick, default: 0] += 1 }
    }
    let expected = (1...seconds).map { Self.start.addingTimeInterval(Double($0)) }
    #expect(started.keys.sorted() == expected)
    #expect(started.values.allSatisfy { $0 == 1 })
    // The store agrees: one run per tick, all queued, of the schedule.
    let runs = try setup.runs(workflow: nil, limit: 10_000)
    #expect(runs.count == seconds)
    #expect(runs.allSatisfy { $0.run.status == .queued })
  }

  /// `skip` starts no tick while the schedule's run is unfinished; after
  /// the run finishes the next tick starts; a paused schedule starts
  /// nothing and does not catch up on what it missed when resumed.
  @Test func skipAndPause() throws {
    let folder = try TemporaryFolder()
    let store = try SQLiteRunStore(path: folder.url.appendingPathComponent("store.db").path)
    let name = LuaString("nightly")
    try store.addSchedule(
      Schedule(
        name: name, cron: "0 * * * *", timeZone: "UTC", file: "nightly.lua",
        createdAt: ScheduleTicker.timestamp(Self.start)))
    let ticker = ScheduleTicker(store: store, fingerprint: Self.fingerprint)
    func fire(_ hours: Double) throws -> [TickOutcome] {
      try ticker.fire(now: Self.start.addingTimeInterval(hours * 3600 + 1)).fired.map(\.outcome)
    }
    guard case .started(let first)? = try fire(1).first else {
      Issue.record("the first tick did not start")
      return
    }
    #expect(try fire(2) == [.skipped])
    try store.finishRun(first, status: .succeeded, at: ScheduleTicker.timestamp(Self.start))
    guard case .started(let second)? = try fire(3).first else {
      Issue.record("the tick after the run finished did not start")
      return
    }
    try store.finishRun(second, status: .succeeded, at: ScheduleTicker.timestamp(Self.start))
    try store.setSchedule(name, paused: true, at: ScheduleTicker.timestamp(Self.start.addingTimeInterval(3 * 3600 + 2)))
    #expect(try fire(4) == [])
    try store.setSchedule(name, paused: false, at: ScheduleTicker.timestamp(Self.start.addingTimeInterval(6 * 3600 + 2)))
    #expect(try fire(6) == [])
    if case .started? = try fire(7).first {} else { Issue.record("the first tick after resuming did not start") }
  }

  /// A schedule whose cron is bad is reported; the others still fire.
  @Test func aBadScheduleDoesNotStopTheOthers() throws {
    let folder = try TemporaryFolder()
    let store = try SQLiteRunStore(path: folder.url.appendingPathComponent("store.db").path)
    let created = ScheduleTicker.timestamp(Self.start)
    try store.addSchedule(Schedule(name: LuaString("a"), cron: "61 * * * *", timeZone: "UTC", file: "a.lua", createdAt: created))
    try store.addSchedule(Schedule(name: LuaString("b"), cron: "@hourly", timeZone: "Mars/Olympus", file: "b.lua", createdAt: created))
    try store.addSchedule(Schedule(name: LuaString("c"), cron: "@hourly", timeZone: "UTC", file: "c.lua", createdAt: created))
    let (fired, problems) = try ScheduleTicker(store: store, fingerprint: Self.fingerprint).fire(
      now: Self.start.addingTimeInterval(3601))
    #expect(fired.map(\.schedule) == [LuaString("c")])
    #expect(problems == [
      "schedule \"a\": cron: minute field '61': 61 is out of range 0-59",
      "schedule \"b\": unknown time zone 'Mars/Olympus'",
    ])
  }
}
