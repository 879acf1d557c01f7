import CLuaShim
import LuaKit

/// A time limit on a task (`Scheduler.setDeadline`). While the task waits,
/// a timer on the runtime clock fails it; while its Lua code computes, the
/// loop cannot fire timers, so a count hook on the code's coroutines
/// compares real time with the limit (`lunar_setdeadline`).
///
/// Under real time both count the same seconds from when the deadline was
/// set. Under virtual time, waiting counts virtual time (a sleep past the
/// limit fails at the limit, at once in real time) and computing counts the
/// real time the task's own code has run: a busy loop never moves virtual
/// time, so virtual time alone would never stop it. The two are not added.
final class TaskDeadline {
  /// The error the task fails with, a string.
  let message: LuaReference
  /// The same message, for a task driven from Swift.
  let text: String
  /// The timer that fails the task if it is waiting when time is up.
  let timer: Int
  /// True once that timer has fired: whenever the task's code runs again,
  /// it is stopped at its first step.
  var passed = false
  /// Under real time, when computing must stop (`lunar_monotonic`
  /// seconds); under virtual time, the real seconds of computing left.
  private var limit: Double
  private let countsComputingOnly: Bool
  /// When the task's code started its current stretch of computing, if it
  /// is computing now.
  private var computingSince: Double?

  init(message: LuaReference, text: String, timer: Int, seconds: Double, virtualClock: Bool) {
    self.message = message
    self.text = text
    self.timer = timer
    countsComputingOnly = virtualClock
    limit = virtualClock ? seconds : lunar_monotonic() + seconds
  }

  /// The failure the task's wait ends with.
  var failure: WaitResult {
    .failure { [message] L in message.push(on: L) }
  }

  /// The task's code starts computing at `now`: returns when the hook must
  /// stop it, in `lunar_monotonic` seconds (0 once time is up).
  func startComputing(at now: Double) -> Double {
    if passed { return 0 }
    guard countsComputingOnly else { return limit }
    computingSince = now
    return now + limit
  }

  /// The task's code stops computing (it waits, or finished) at `now`.
  func stopComputing(at now: Double) {
    guard let since = computingSince else { return }
    computingSince = nil
    limit -= now - since
  }

  /// True if time is up by `now` (`lunar_monotonic` seconds), by either
  /// clock.
  func hasPassed(now: Double) -> Bool {
    passed || (countsComputingOnly ? limit <= 0 : now >= limit)
  }
}
