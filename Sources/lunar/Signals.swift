#if canImport(Glibc)
import Glibc
#endif

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
}
