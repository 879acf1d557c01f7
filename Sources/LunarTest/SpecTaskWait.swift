import Lunar

/// Waits for the task running a test body, hook or block body, on the
/// loop nested under the spec file's main chunk. A deadlock there is that
/// test's error: the test's tasks are ended, so the file's next tests run
/// in the same runtime.
enum SpecTaskWait {
  /// How the wait ended.
  enum Outcome {
    /// The task finished; its result is in its handle.
    case finished
    /// Everything waited on something that could never happen; the report
    /// says who waited where. The task and those it started have ended.
    case deadlock(String)
    /// Ctrl-C (or a request) stopped the run; the file must stop.
    case interrupted(String)
  }

  /// Runs the loop on thread `L` until `task` finishes.
  static func wait(for task: LuaTask, in scheduler: Scheduler, on L: OpaquePointer) -> Outcome {
    do {
      try scheduler.runUntil(on: L) { task.isFinished }
      return .finished
    } catch {
      switch error {
      case .deadlock(let report):
        end(tasksFrom: task, in: scheduler, on: L)
        return .deadlock(report)
      case .interrupted(_, let message):
        return .interrupted(message)
      }
    }
  }

  /// Ends `first` and every live task started after it (task ids grow, so
  /// these are the ones the test started). Tasks from before it, such as a
  /// server a `setup` started, are left alone.
  private static func end(tasksFrom first: LuaTask, in scheduler: Scheduler, on L: OpaquePointer) {
    let stuck = scheduler.liveTasks.sorted.filter { $0.id >= first.id }
    for task in stuck { scheduler.cancel(task) }
    // Cancelled tasks unwind (their pcalls and to-be-closed variables run).
    // A queue job not started yet is cancelled only in its turn, which may
    // never come: it is settled as cancelled without running.
    try? scheduler.runUntil(on: L) { stuck.allSatisfy(\.isFinished) }
    for task in stuck where !task.isFinished { scheduler.finishCancelledBeforeStart(task) }
  }
}
