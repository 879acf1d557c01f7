import Foundation
import LuaKit
import Lunar
import LunarSchedules
import LunarStore

/// `lunar schedule`: schedules kept in the store, whose ticks workers turn
/// into submitted runs. `add` records one, `ls` lists them, `show` shows
/// one with its next tick, `pause`/`resume` stop and restart its ticks,
/// `rm` removes it, `trigger` submits a run of it now.
enum ScheduleCommand {
  static let spec = CommandSpec(
    name: "schedule",
    summary: "Keep schedules in the store: 'schedule add NAME --cron EXPR FILE [ARGS...]', ls, show NAME, pause NAME, resume NAME, rm NAME, trigger NAME.",
    operands: "add NAME FILE [ARGS...] | ls | show NAME | pause NAME | resume NAME | rm NAME | trigger NAME",
    options: [
      OptionSpec(
        name: "store", value: "URL", help: "use the schedules in URL (sqlite:PATH or postgres://...; default $LUNAR_STORE or ~/.local/state/lunar/lunar.db)"),
      OptionSpec(name: "cron", value: "EXPR", help: "add: when it ticks, a cron expression (5 fields, or 6 with leading seconds, or @hourly...)"),
      OptionSpec(name: "timezone", value: "TZ", help: "add: the IANA time zone EXPR is read in (default UTC)"),
      OptionSpec(
        name: "overlap", value: "skip|queue-one|allow",
        help: "add: while its previous run is unfinished a tick starts nothing (skip, the default), queues one run, or starts one"),
      OptionSpec(
        name: "catchup", value: "DURATION",
        help: "add: after downtime also run missed ticks up to DURATION old (90, 15m, 1h30m, 2d; default: the last missed tick only)"),
    ],
    run: run
  )

  /// What the command line asks for.
  private enum Request {
    case add(Schedule)
    case list
    case show(LuaString)
    case pause(LuaString)
    case resume(LuaString)
    case remove(LuaString)
    case trigger(LuaString)
  }

  static func run(_ parsed: ParsedArguments) -> Int32 {
    let request: Request
    let location: StoreLocation
    do {
      request = try readRequest(parsed)
      location = try StoreOption.location(parsed, command: "schedule")
    } catch {
      return LunarCommandLine.usageFailure(error)
    }
    do {
      let store: any SchedulingStore
      do {
        var createIfMissing = false
        if case .add = request { createIfMissing = true }
        store = try location.openSchedulingStore(createIfMissing: createIfMissing)
      } catch where error.kind == .missing {
        if case .list = request {
          print("no schedules in \(location) (there is no store there yet)")
          return 0
        }
        Console.error("lunar: no schedules in \(location): there is no store there yet")
        return 1
      }
      let now = Date()
      switch request {
      case .add(let schedule):
        try store.addSchedule(schedule)
        let next = nextTick(of: schedule, after: now).map { " (next tick \(text($0, schedule.timeZone)))" } ?? ""
        print("schedule '\(RunText.name(schedule.name))' added\(next)")
      case .list:
        let schedules = try store.schedules()
        if schedules.isEmpty {
          print("no schedules in \(store.location)")
          return 0
        }
        var rows: [[String]] = []
        for schedule in schedules {
          rows.append([
            RunText.name(schedule.name), schedule.cron, schedule.timeZone, schedule.overlap.rawValue,
            schedule.isPaused ? "paused" : "active",
            schedule.isPaused ? "-" : nextTick(of: schedule, after: now).map { text($0, schedule.timeZone) } ?? "-",
            RunText.printable(schedule.file),
          ])
        }
        let table = TextTable(headers: ["NAME", "CRON", "TIMEZONE", "OVERLAP", "STATE", "NEXT TICK", "FILE"])
        print(table.text(rows), terminator: "")
      case .show(let name):
        guard let schedule = try store.schedule(named: name) else { return unknown(name, in: store) }
        var lines = [
          "schedule \(RunText.name(schedule.name))",
          "  cron:      \(schedule.cron)",
          "  timezone:  \(schedule.timeZone)",
          "  overlap:   \(schedule.overlap.rawValue)",
          "  catchup:   \(schedule.catchupMicroseconds.map { "\(Double($0) / 1_000_000) s" } ?? "the last missed tick only")",
          "  file:      \(RunText.printable(schedule.file)) \(schedule.arguments.map(RunText.printable).joined(separator: " "))",
          "  state:     \(schedule.isPaused ? "paused" : "active")",
          "  last tick: \(schedule.lastTick.map { text(ScheduleTicker.date($0), schedule.timeZone) } ?? "none yet")",
        ]
        if !schedule.isPaused, let next = nextTick(of: schedule, after: now) {
          lines.append("  next tick: \(text(next, schedule.timeZone))")
        }
        print(lines.joined(separator: "\n"))
      case .pause(let name), .resume(let name):
        var pausing = false
        if case .pause = request { pausing = true }
        do {
          try store.setSchedule(name, paused: pausing, at: ScheduleTicker.timestamp(now))
        } catch where error.kind == .noSuchSchedule {
          return unknown(name, in: store)
        }
        print("schedule '\(RunText.name(name))' \(pausing ? "paused" : "resumed")")
      case .remove(let name):
        do {
          try store.removeSchedule(name)
        } catch where error.kind == .noSuchSchedule {
          return unknown(name, in: store)
        }
        print("schedule '\(RunText.name(name))' removed (its runs stay in the store)")
      case .trigger(let name):
        let submitted: SubmittedRun?
        do {
          submitted = try ScheduleTicker(store: store, fingerprint: Self.fingerprint).trigger(name, at: now)
        } catch let error as StoreError {
          Console.error("lunar: \(error.message)")
          return 1
        } catch {
          Console.error("lunar: schedule '\(RunText.name(name))': \(error)")
          return 1
        }
        guard let submitted else { return unknown(name, in: store) }
        print(submitted.run.id)
      }
      return 0
    } catch {
      Console.error("lunar: \(error.message)")
      return 1
    }
  }

  /// The fingerprint of a schedule's file as `trigger` submits it (a path
  /// relative to the current folder, as `schedule add` recorded it), read
  /// within Lunar's bound on files.
  @Sendable static func fingerprint(_ schedule: Schedule) throws -> Fingerprint {
    Fingerprint(ofContent: try BoundedFileReader.read(schedule.file))
  }

  /// The next tick of `schedule` after `date`, if its cron and zone read.
  private static func nextTick(of schedule: Schedule, after date: Date) -> Date? {
    guard let cron = try? CronExpression(schedule.cron), let zone = TimeZone(identifier: schedule.timeZone) else { return nil }
    return cron.next(after: date, in: zone)
  }

  /// `date` in `zone`, as `2026-12-02 02:00:00 +0100`.
  private static func text(_ date: Date, _ zone: String) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: zone)
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
    return formatter.string(from: date)
  }

  /// Reports that there is no schedule `name`; returns 1.
  private static func unknown(_ name: LuaString, in store: any SchedulingStore) -> Int32 {
    Console.error("lunar: no schedule '\(RunText.name(name))' in \(store.location)")
    return 1
  }

  /// The request the operands and flags make.
  private static func readRequest(_ parsed: ParsedArguments) throws(UsageError) -> Request {
    let operands = parsed.operands
    func usage(_ message: String) -> UsageError { UsageError(message: message, command: "schedule") }
    func name(_ word: String) throws(UsageError) -> LuaString {
      guard operands.count >= 2 else { throw usage("schedule \(word) needs a schedule NAME") }
      guard !parsed.operandBytes[1].bytes.isEmpty else { throw usage("a schedule NAME must not be empty") }
      // Names are bytes: the one asked for is matched by the bytes typed.
      return parsed.operandBytes[1]
    }
    let word = operands.first
    if word != "add" {
      for flag in ["cron", "timezone", "overlap", "catchup"] where parsed.has(flag) {
        throw usage("--\(flag) is for schedule add, not for schedule \(word.map(RunText.printable) ?? "")")
      }
    }
    switch word {
    case "add":
      let scheduleName = try name("add")
      guard operands.count >= 3 else { throw usage(parsed.missing("schedule add needs a NAME and a workflow FILE")) }
      guard let cronText = parsed.value("cron") else { throw usage("schedule add needs --cron EXPR") }
      let cron: CronExpression
      do {
        cron = try CronExpression(cronText)
      } catch {
        throw usage("--cron: \(error.description)")
      }
      let zoneName = parsed.value("timezone") ?? "UTC"
      guard TimeZone(identifier: zoneName) != nil, !zoneName.isEmpty else {
        throw usage("--timezone needs an IANA time zone name (Europe/London, America/New_York, UTC), got '\(zoneName)'")
      }
      let overlapName = parsed.value("overlap") ?? "skip"
      guard let overlap = ScheduleOverlap(rawValue: overlapName) else {
        throw usage("--overlap is 'skip', 'queue-one' or 'allow', got '\(overlapName)'")
      }
      var catchup: Int64?
      if let text = parsed.value("catchup") {
        guard let microseconds = ScheduleDuration.microseconds(text) else {
          throw usage("--catchup needs a duration over 0 and up to 366 days (90, 15m, 1h30m, 2d), got '\(text)'")
        }
        catchup = microseconds
      }
      return .add(
        Schedule(
          name: scheduleName, cron: cron.text, timeZone: zoneName, overlap: overlap, catchupMicroseconds: catchup,
          file: operands[2], arguments: Array(operands.dropFirst(3)), createdAt: .now))
    case "ls":
      guard operands.count == 1 else { throw usage("schedule ls takes no operands, got '\(RunText.printable(operands[1]))'") }
      return .list
    case "show", "pause", "resume", "rm", "trigger":
      let scheduleName = try name(word ?? "")
      guard operands.count == 2 else { throw usage("schedule \(word ?? "") takes one NAME, got \(operands.count - 1)") }
      switch word {
      case "show": return .show(scheduleName)
      case "pause": return .pause(scheduleName)
      case "resume": return .resume(scheduleName)
      case "rm": return .remove(scheduleName)
      default: return .trigger(scheduleName)
      }
    case nil:
      throw usage("schedule needs add, ls, show, pause, resume, rm or trigger")
    case let other?:
      throw usage("unknown word '\(RunText.printable(other))': use schedule add, ls, show, pause, resume, rm or trigger")
    }
  }
}
