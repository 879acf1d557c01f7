import LuaKit
import Testing

@testable import Lunar

@Suite struct WorkflowReporterTests {
  final class Output {
    var text = ""
    func write(_ s: String) { text += s }
  }

  @Test func plainLinesSayHowEachStepEnded() {
    let output = Output()
    let plain = PlainProgress(workflow: "report", write: output.write)
    plain.stepStarted("fetch", at: 0)
    plain.attemptFailed("fetch", attempt: 1, error: "x.lua:3: offline", retryingAfter: 0.5)
    plain.stepFinished(StepReport(name: "fetch", status: .succeeded, attempts: 2, duration: 1.234))
    plain.stepFinished(StepReport(name: "old", status: .reused, attempts: 0, duration: 0))
    plain.stepFinished(StepReport(name: "send", status: .failed, attempts: 1, duration: 12.345, detail: "x.lua:9: boom"))
    plain.stepFinished(StepReport(name: "after", status: .skipped, attempts: 0, duration: 0, detail: "needs send"))
    #expect(output.text == """
      [report] step fetch started
      [report] step fetch attempt 1 failed: x.lua:3: offline; retrying
      [report] step fetch succeeded in 1.23s
      [report] step old reused in 0.00s
      [report] step send failed: x.lua:9: boom
      [report] step after skipped (needs send)

      """)
  }

  @Test func plainLinesAreUTF8BytesWithNamesThatAreNotUTF8Repaired() {
    var lines: [[UInt8]] = []
    let plain = PlainProgress(workflow: "w", writeUTF8: { lines.append($0) })
    plain.stepStarted("fetch", at: 0)
    plain.stepStarted(LuaString(bytes: Array("b".utf8) + [0xFF] + Array("in".utf8)), at: 0)
    plain.stepStarted("café", at: 0)
    #expect(lines == [
      Array("[w] step fetch started\n".utf8), Array("[w] step b\u{FFFD}in started\n".utf8),
      Array("[w] step café started\n".utf8),
    ])
  }

  @Test func theLiveLineShowsOnlyWhatRuns() {
    let output = Output()
    var now = 10.0
    let live = LiveProgress(workflow: "w", total: 3, now: { now }, write: output.write)
    live.stepStarted("a", at: 10)
    now = 10.5
    live.stepStarted("b", at: 10.5)
    output.text = ""
    now = 11
    live.tick()
    #expect(output.text == "\r\u{1B}[2K⠙ a 1.00s  ⠙ b 0.50s (0/3)")
    output.text = ""
    live.stepFinished(StepReport(name: "a", status: .succeeded, attempts: 1, duration: 1))
    #expect(output.text == "\r\u{1B}[2K[w] step a succeeded in 1.00s\n\r\u{1B}[2K⠙ b 0.50s (1/3)")
  }

  @Test func theLiveTotalCountsTheChildrenOfAStepThatFansOut() {
    let output = Output()
    let live = LiveProgress(workflow: "w", total: 2, now: { 0 }, write: output.write)
    live.stepStarted("deploy", at: 0)
    live.stepFannedOut("deploy", children: 3)
    #expect(output.text.hasSuffix("⠋ deploy 0.00s (0/5)"), "\(output.text)")
    live.stepStarted("deploy[1]", at: 0)
    live.stepFinished(StepReport(name: "deploy[1]", status: .succeeded, attempts: 1, duration: 0))
    #expect(output.text.hasSuffix("⠋ deploy 0.00s (1/5)"), "\(output.text)")
  }

  @Test func theSummaryListsEveryStepAndTheOutcome() {
    let report = RunReport(workflow: "nightly", steps: [
      StepReport(name: "fetch", status: .succeeded, attempts: 1, duration: 0.25),
      StepReport(name: "notify-all", status: .failed, attempts: 3, duration: 61, detail: "boom"),
    ], duration: 61.3)
    #expect(RunSummaryTable.text(report) == """

      step        status     attempts   duration
      fetch       succeeded         1      0.25s
      notify-all  failed            3      61.0s
      workflow nightly: failed in 61.3s

      """)
    #expect(report.failedSteps == ["notify-all"])
  }

  /// A big run's summary: counts, then the failed, retried and slowest
  /// steps, not a row per step; `.full` still gives every row.
  @Test func aBigRunsSummaryShowsCountsAndTheStepsWorthALook() {
    var steps = (1...30).map { StepReport(name: LuaString("s\($0)"), status: .succeeded, attempts: 1, duration: Double($0) / 100) }
    steps[3] = StepReport(name: "s4", status: .failed, attempts: 2, duration: 0.01, detail: "boom")
    steps[4] = StepReport(name: "s5", status: .skipped, attempts: 0, duration: 0, detail: "needs s4")
    steps[6] = StepReport(name: "s7", status: .succeeded, attempts: 3, duration: 0.07)
    steps[7] = StepReport(name: "s8", status: .reused, attempts: 0, duration: 0)
    let report = RunReport(workflow: "big", steps: steps, duration: 2)
    #expect(RunSummaryTable.text(report) == """

      30 steps: 27 succeeded, 1 reused, 1 failed, 1 skipped

      failed:

      step  status     attempts   duration
      s4    failed            2      0.01s

      retried:

      step  status     attempts   duration
      s4    failed            2      0.01s
      s7    succeeded         3      0.07s

      slowest (5 of 28):

      step  status     attempts   duration
      s30   succeeded         1      0.30s
      s29   succeeded         1      0.29s
      s28   succeeded         1      0.28s
      s27   succeeded         1      0.27s
      s26   succeeded         1      0.26s
      (lunar run --summary full prints every step)
      workflow big: failed in 2.00s

      """)
    let full = RunSummaryTable.text(report, detail: .full)
    #expect(full.split(separator: "\n").count == 32, "\(full)")
    #expect(full.contains("\ns8    reused            0      0.00s\n"), "\(full)")
  }

  /// The slowest steps, picked in one pass, are those a stable sort by
  /// duration would list first: the earlier of equal durations first.
  @Test func theSlowestAreTheLongestAndTheEarlierOfEquals() {
    let durations = [0.2, 0.5, 0.1, 0.5, 0.3, 0.5, 0.2, 0.4, 0.5, 0.0]
    let steps = durations.enumerated().map {
      StepReport(name: LuaString("s\($0.offset)"), status: .succeeded, attempts: 1, duration: $0.element)
    }
    let sorted = steps.enumerated().sorted { a, b in
      a.element.duration != b.element.duration ? a.element.duration > b.element.duration : a.offset < b.offset
    }.map(\.element.name)
    for count in 0...11 {
      #expect(RunSummaryTable.slowest(steps, count: count).map(\.name) == Array(sorted.prefix(count)), "\(count)")
    }
    #expect(RunSummaryTable.slowest(steps, count: 3).map(\.name) == ["s1", "s3", "s5"])
  }

  @Test func aFailureThatContinuesLeavesTheRunSucceeded() {
    let report = RunReport(workflow: "w", steps: [
      StepReport(name: "lint", status: .failed, attempts: 1, duration: 0, detail: "style", continuesOnError: true),
      StepReport(name: "build", status: .succeeded, attempts: 1, duration: 0),
    ], duration: 0)
    #expect(report.succeeded)
    #expect(RunSummaryTable.text(report).hasSuffix("workflow w: succeeded in 0.00s (1 step failed and continued)\n"))
  }

  @Test func durationsRoundAsShown() {
    #expect(DurationText.format(0) == "0.00s")
    #expect(DurationText.format(0.005) == "0.01s")
    #expect(DurationText.format(9.999) == "10.00s")
    #expect(DurationText.format(10.04) == "10.0s")
    #expect(DurationText.format(3600) == "3600.0s")
    #expect(DurationText.format(.infinity) == "infs")
    #expect(DurationText.format(9e15) == "9e+15s")
  }
}
