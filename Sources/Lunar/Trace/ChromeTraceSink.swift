import LuaKit
import Synchronization

/// Draws a run's trace events as a timeline for Chrome's trace format (see
/// `TraceTimeline` for what becomes a slice): one process of a
/// `ChromeTraceFile`, which writes it when the command ends. What it keeps
/// counts against the run's memory limit, as a recorder's events do.
public final class ChromeTraceSink: BudgetedTraceSink {
  private struct State {
    var timeline: TraceTimeline
    var budget: LuaMemoryBudget?
    var charges: [LuaMemoryCharge] = []
  }

  private let state: Mutex<State>

  /// A sink for the process `process`, whose main chunk and loop are drawn
  /// on the track `mainTrack` (a spec file's tests are drawn there too).
  public init(process: String, mainTrack: String = "main") {
    state = Mutex(State(timeline: TraceTimeline(process: process, mainTrack: mainTrack)))
  }

  public func receive(_ event: TraceEvent) {
    state.withLock { state in
      state.timeline.take(event)
      if let charge = state.budget?.chargeAnyway(event.estimatedSize) { state.charges.append(charge) }
    }
  }

  public func charge(to budget: LuaMemoryBudget) {
    state.withLock { $0.budget = budget.isLimited ? budget : nil }
  }

  /// The timeline so far, what is still open ended at the latest event.
  public var finished: ChromeTimeline { state.withLock { $0.timeline.finished } }
}
