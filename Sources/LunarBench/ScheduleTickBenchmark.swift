import Foundation
import LuaKit
import LunarStore

/// Exactly one decision per schedule tick, however workers die: 200
/// schedules firing every second, 3 `lunar worker --runs 1` processes for
/// 10 seconds, one killed with SIGKILL halfway. Counts, per schedule, the
/// ticks decided (started or skipped), duplicates and gaps between the
/// first and the last, and the runs per tick; the baseline is the number of
/// ticks the 10 seconds hold, so the ratio says how many of them were decided.
enum ScheduleTickBenchmark {
  static let schedules = 200
  static let seconds = 10

  static func run() throws {
    let lunar = ProcessInfo.processInfo.environment["LUNAR_BIN"] ?? StartupBenchmark.siblingBinary("lunar")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-bench-ticks-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(SubmittedRunBenchmark.source.utf8).write(to: folder.appendingPathComponent("flow.lua"))
    let path = folder.appendingPathComponent("ticks.db").path
    let store = try SQLiteRunStore(path: path)
    let start = Date()
    for index in 0..<schedules {
      try store.addSchedule(
        Schedule(
          name: LuaString("s\(index)"), cron: "* * * * * *", timeZone: "UTC", file: "flow.lua", arguments: ["\(index)", "0"],
          createdAt: StoreTimestamp(microseconds: Int64(start.timeIntervalSince1970 * 1_000_000))))
    }
    let url = "sqlite:" + path
    let workers = (0..<3).map { _ in
      SubmittedRunBenchmark.spawn(lunar, ["worker", "--store", url, "--runs", "1", "--lease", "3"], in: folder)
    }
    usleep(UInt32(seconds * 1_000_000 / 2))
    kill(workers[0], SIGKILL)
    _ = SubmittedRunBenchmark.wait(workers[0])
    usleep(UInt32(seconds * 1_000_000 / 2))
    for worker in workers.dropFirst() { kill(worker, SIGTERM) }
    for worker in workers.dropFirst() { _ = SubmittedRunBenchmark.wait(worker) }

    let database = try SQLiteDatabase(path: path)
    var ticks: [[UInt8]: [Int64]] = [:]
    var started = 0
    var runsPerTick: [Int64: Int] = [:]
    try database.query("SELECT schedule, tick, outcome, run FROM schedule_tick") { row in
      ticks[row.blob(0), default: []].append(row.int64(1))
      if row.text(2) == "started" {
        started += 1
        if !row.isNull(3) { runsPerTick[row.int64(3), default: 0] += 1 }
      }
    }
    var gaps = 0
    var duplicates = 0
    var decided = 0
    for (_, list) in ticks {
      let sorted = list.sorted()
      decided += sorted.count
      duplicates += sorted.count - Set(sorted).count
      for (earlier, later) in zip(sorted, sorted.dropFirst()) where later - earlier > 1_000_000 {
        gaps += Int((later - earlier) / 1_000_000) - 1
      }
    }
    let sharedRuns = runsPerTick.values.filter { $0 > 1 }.count
    Harness.report(
      "schedule ticks decided, a worker killed", subject: Double(decided), baseline: Double(schedules * seconds),
      baselineName: "ticks in \(seconds) s:", unit: "", goal: "every tick once")
    print("    \(ticks.count) schedules fired; \(duplicates) duplicate ticks, \(gaps) gaps, \(started) runs started, \(sharedRuns) runs shared by two ticks")
  }
}
