import Dispatch
import Glibc

/// Stops this process, as SIGTERM does, once the process that started it
/// is gone (it is then another's child): a `--processes` step worker never
/// outlives its `lunar run`, even one ended by SIGKILL.
enum ParentWatch {
  /// How often the parent is looked at.
  static let interval = DispatchTimeInterval.milliseconds(200)

  /// Watches from now on, on a queue of its own; `parent` is the process
  /// that must stay this one's parent.
  static func start(_ parent: pid_t) {
    let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "lunar.parent-watch"))
    timer.schedule(deadline: .now(), repeating: interval)
    timer.setEventHandler {
      guard getppid() != parent else { return }
      timer.cancel()
      kill(getpid(), SIGTERM)
    }
    // The handler holds the timer: it lives as long as the process.
    timer.resume()
  }
}
