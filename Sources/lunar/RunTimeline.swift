import LuaKit
import Lunar
import LunarStore

/// `lunar runs show RUN --format chrome`: a recorded run as a Chrome trace
/// (what `--trace-format chrome` writes): the run on the track `run`, each
/// step a slice on its workflow's track, steps that ran at once on lanes of
/// their own; times from the run's start, step fields as arguments.
enum RunTimeline {
  /// The trace's text.
  static func text(_ run: RunRecord, steps: [StepRecord]) -> String {
    ChromeTraceFile.text([(timeline(run, steps: steps), 0)])
  }

  /// The run's timeline.
  static func timeline(_ run: RunRecord, steps: [StepRecord]) -> ChromeTimeline {
    var timeline = ChromeTimeline(name: "run \(run.id) \(RunText.name(run.workflow))")
    // Steps are timed on the run's clock, the run itself on the wall
    // clock: under a virtual clock (which starts where it is told), the
    // steps' times count from the first of them instead.
    let stepTimes = steps.flatMap { [$0.startedAt, $0.finishedAt].compactMap { $0 } }
    let first = stepTimes.min() ?? run.startedAt
    let origin = first >= run.startedAt && first <= (run.finishedAt ?? first) ? run.startedAt : first
    /// Nanoseconds from the origin.
    func time(_ moment: StoreTimestamp) -> Int64 {
      ChromeTimeline.nanoseconds(Double(moment.microseconds - origin.microseconds) / 1e6)
    }
    let track = ChromeTimeline.Track(.workflow, run.workflow)
    var last: Int64 = 0
    var unfinished: [Int] = []
    for step in steps.sorted(by: { $0.position < $1.position }) {
      var args: [TraceEvent.Field] = [
        .init("step", .string(step.name)), .init("status", .string(LuaString(step.status.rawValue))),
        .init("attempts", .integer(Int64(step.attempts))),
      ]
      if let error = step.error { args.append(.init("error", .string(error))) }
      let name = RunText.name(step.name)
      switch (step.startedAt.map(time), step.finishedAt.map(time)) {
      case (let start?, let end?):
        timeline.add(track, name, category: "step", from: start, to: end, args: args)
        last = max(last, end)
      case (nil, let end?):
        // Reused: it took no time in this run.
        timeline.add(track, name, category: "step", from: end, to: end, args: args)
        last = max(last, end)
      case (let start?, nil):
        unfinished.append(timeline.open(track, name, category: "step", at: start, args: args))
        last = max(last, start)
      case (nil, nil):
        // Skipped before it started: a mark at the run's start.
        timeline.addInstant(track, name, category: "step", at: 0, args: args)
      }
    }
    let end = run.finishedAt.map { ChromeTimeline.nanoseconds(run.startedAt.seconds(until: $0)) } ?? last
    var args: [TraceEvent.Field] = [
      .init("run", .integer(run.id.rawValue)), .init("workflow", .string(run.workflow)),
      .init("status", .string(LuaString(run.status.rawValue))), .init("file", .string(LuaString(run.file))),
    ]
    if let resumed = run.resumedFrom { args.append(.init("resumed_from", .integer(resumed.rawValue))) }
    let main = ChromeTimeline.Track(.main, "run")
    timeline.add(main, "workflow \(RunText.name(run.workflow))", category: "run", from: 0, to: max(end, last), args: args)
    for index in unfinished { timeline.close(index, at: max(end, last), args: [.init("unfinished", .boolean(true))]) }
    return timeline
  }
}
