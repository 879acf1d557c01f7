#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Set by the handler `catchStopRequests` installs.
private let stopSignals = Atomic<Int>(0)

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
  /// (`lunar worker`) honours in its own time, through `stopRequested`,
  /// instead of ending the process.
  static func catchStopRequests() {
    for signal in [SIGTERM, SIGINT] {
      var action = sigaction()
      // Only an atomic store: async-signal-safe.
      action.__sigaction_handler.sa_handler = { _ in stopSignals.add(1, ordering: .relaxed) }
      sigemptyset(&action.sa_mask)
      sigaction(signal, &action, nil)
    }
  }

  /// True once SIGTERM or SIGINT arrived after `catchStopRequests`.
  static var stopRequested: Bool { stopSignals.load(ordering: .relaxed) > 0 }
}
