import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `lunar runs show RUN --format gantt`: a recorded run's steps as a Mermaid
/// gantt chart, read back by the rules of Mermaid's gantt grammar
/// (`MermaidGantt`; no Mermaid runs here) and checked against the times
/// the store recorded.
@Suite struct RunsGanttTests {
  /// `runs show RUN --format gantt` on the local clock of UTC.
  static func gantt(_ fixture: RunsCommandTests.Fixture, _ run: String) async throws -> (MermaidGantt, String) {
    let outcome = try await fixture.lunar(
      ["runs", "show", run, "--store", fixture.storeURL, "--format", "gantt"], environment: ["TZ": "UTC"])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    return (MermaidGantt(outcome.stdout), outcome.stdout)
  }

  /// `time` as the chart writes it in UTC, to the millisecond below.
  static func written(_ time: StoreTimestamp) -> String {
    let (seconds, micros) = time.microseconds.quotientAndRemainder(dividingBy: 1_000_000)
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))) + String(format: ".%03d", micros / 1000)
  }

  /// What the chart must say of each recorded step, by name as shown:
  /// its section, tags, start and end.
  static func expected(_ store: SQLiteRunStore, run: RunID) throws -> [String: (String, [String], String, String)] {
    let record = try store.resolve(.id(run))
    var expected: [String: (String, [String], String, String)] = [:]
    for step in try store.steps(of: run) {
      let name = step.name.string ?? "?"
      switch step.status {
      case .succeeded:
        expected[name] = ("succeeded", ["done"], written(step.startedAt!), written(step.finishedAt!))
      case .failed:
        let start = step.startedAt ?? step.finishedAt!
        expected[name] = ("failed", step.startedAt == nil ? ["crit", "milestone"] : ["crit"], written(start), written(step.finishedAt!))
      case .reused:
        // Its earlier output was taken when it would have started.
        expected[name] = ("reused", ["done", "milestone"], written(step.finishedAt!), written(step.finishedAt!))
      case .skipped:
        // The store keeps no times for it: it stands at the run's end.
        expected[name] = ("skipped", ["milestone"], written(record.finishedAt!), written(record.finishedAt!))
      }
    }
    return expected
  }

  @Test func everyStepIsOnTheChartOnceAtItsRecordedTimes() async throws {
    let fixture = try RunsCommandTests.Fixture()
    try await fixture.recordThreeRuns()
    let store = try SQLiteRunStore(path: fixture.store)
    for (run, sections) in [("1", ["succeeded"]), ("2", ["succeeded", "failed", "skipped"]), ("3", ["failed", "reused", "skipped"])] {
      let (chart, text) = try await Self.gantt(fixture, run)
      #expect(chart.problems.isEmpty, "\(chart.problems)\n\(text)")
      #expect(chart.dateFormat == "YYYY-MM-DD HH:mm:ss.SSS")
      #expect(chart.axisFormat == "%H:%M:%S.%L", "a run of less than 10 s shows milliseconds")
      #expect(chart.sections.map(\.name) == sections, "\(text)")
      let workflow = run == "1" ? "deploy" : "flaky"
      #expect(chart.title == "\"\(workflow), run \(run)\"")
      let expected = try Self.expected(store, run: RunID(Int64(run)!))
      #expect(chart.tasks.map(\.text).sorted() == expected.keys.sorted(), "every step once: \(text)")
      for section in chart.sections {
        for task in section.tasks {
          let want = try #require(expected[task.text])
          #expect(section.name == want.0 && task.tags == want.1, "\(task.text): \(text)")
          #expect(task.start == want.2 && task.end == want.3, "\(task.text) at its recorded times: \(text)")
        }
        // Bars in a section are in the order they started.
        #expect(section.tasks.map(\.start) == section.tasks.map(\.start).sorted(), "\(text)")
      }
    }
    // A step starts after what it needs has ended (times written to the
    // millisecond sort as text).
    let (deploy, _) = try await Self.gantt(fixture, "1")
    let build = try #require(deploy.tasks.first { $0.text == "build" })
    let test = try #require(deploy.tasks.first { $0.text == "test" })
    #expect(build.end <= test.start)
  }

  @Test func namesAreEscapedSoThatEachIsOneTaskShownAsItIs() async throws {
    // Beside the names every drawing must keep apart, ones that would
    // begin a gantt statement or a date, or end a task's text.
    let names: [(bytes: [UInt8], display: String)] =
      HostileNames.all
      + ["section one", "Title two", "gantt", "dateFormat x", "click me", "call it", "2024-01-01 launch", "a:b#c;d",
         "%% not a comment", "x%y", "excludes weekends", "todayMarker", "accTitle: t", "Style:#a;"].map {
        (Array($0.utf8), $0)
      }
    let steps = names.map { "step(\(HostileNames.lua($0.bytes))) { run = function() return 1 end }" }
    let folder = try TemporaryFolder()
    try folder.write(
      "names.lua",
      "local workflow = require 'lunar.workflow'\nlocal step = workflow.step\nreturn workflow 'names' { \(steps.joined(separator: ",\n")) }")
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let ran = try await LunarProcess.run(["run", "--store", store, "names.lua"], in: folder.url)
    #expect(ran.status == 0, "\(ran.stderr)")
    let outcome = try await LunarProcess.run(["runs", "show", "last", "--store", store, "--format", "gantt"], in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let chart = MermaidGantt(outcome.stdout)
    #expect(chart.problems.isEmpty, "\(chart.problems)\n\(outcome.stdout)")
    #expect(chart.sections.map(\.name) == ["succeeded"])
    #expect(chart.tasks.map(\.text).sorted() == names.map(\.display).sorted(), "\(outcome.stdout)")
    #expect(chart.tasks.allSatisfy { $0.tags == ["done"] && !$0.start.isEmpty && !$0.end.isEmpty })
    // One line per step: no name broke its line.
    #expect(outcome.stdout.split(separator: "\n").filter { $0.hasPrefix("    ") }.count == names.count)
  }

  @Test func theFormatIsForShowOnly() async throws {
    let fixture = try RunsCommandTests.Fixture()
    try await fixture.recordThreeRuns()
    let list = try await fixture.lunar(["runs", "--store", fixture.storeURL, "--format", "gantt"])
    #expect(list.status == 2)
    #expect(list.stderr == "lunar: --format is for runs show, not for the list of runs\nTry 'lunar help runs'.\n")
    let unknown = try await fixture.lunar(["runs", "show", "1", "--store", fixture.storeURL, "--format", "png"])
    #expect(unknown.status == 2)
    #expect(unknown.stderr == "lunar: --format is 'text', 'gantt' or 'chrome', got 'png'\nTry 'lunar help runs'.\n")
    let text = try await fixture.lunar(["runs", "show", "1", "--store", fixture.storeURL, "--format", "text"])
    let plain = try await fixture.lunar(["runs", "show", "1", "--store", fixture.storeURL])
    #expect(text.status == 0 && text.stdout == plain.stdout)
  }
}
