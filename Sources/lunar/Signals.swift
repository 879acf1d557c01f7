#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Counted by the handler `catchStopRequests` installs.
private let stopSignals = Atomic<Int>(0)
/// The first of them, set by that handler.
private let firstStopSignal = Atomic<Int32>(0)

/// Signal set-up for the command line.
enum Signals {
  /// Unblocks the signals a user sends to stop a command. A parent that
  /// started us from a thread blocking them (libdispatch workers do) would
  /// otherwise leave Ctrl-C and `kill` without effect.
  static func restoreDefaults() {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&set, signal) }
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
  }

  /// Makes SIGTERM and SIGINT requests to stop that a long-running command
  /// (`lunar worker`) honours in its own time, through `stopRequests`,
  /// instead of ending the process.
  static func catchStopRequests() {
    for signal in [SIGTERM, SIGINT] {
      var action = sigaction()
      // Only lock-free atomic operations: async-signal-safe.
      action.__sigaction_handler.sa_handler = { signal in
        _ = firstStopSignal.compareExchange(expected: 0, desired: signal, ordering: .relaxed)
        stopSignals.add(1, ordering: .relaxed)
      }
      sigemptyset(&action.sa_mask)
      sigaction(signal, &action, nil)
    }
  }

  /// How many times SIGTERM or SIGINT arrived after `catchStopRequests`.
  static var stopRequests: Int { stopSignals.load(ordering: .relaxed) }

  /// The exit status a shell expects of a command the first of those
  /// signals ended: 128 + its number (130 for SIGINT, 143 for SIGTERM).
  static var stopStatus: Int32 {
    let signal = firstStopSignal.load(ordering: .relaxed)
    return signal == 0 ? 1 : 128 + signal
  }
}
