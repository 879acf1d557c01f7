#if canImport(Glibc)
import Glibc
#endif

/// Sends what a script writes to standard output (`print`, `io.write`,
/// `io.stdout:write`, a child process's output) to `/dev/null` while it
/// runs, so a command that prints its own result there (`lunar graph`'s
/// diagram) keeps it whole. It works on the descriptor, not on Lua's
/// functions, so no way of writing escapes it.
enum OutputDiversion {
  /// Runs `body` with standard output diverted, then puts it back (what
  /// stdio buffered meanwhile is flushed into `/dev/null` first).
  static func silencingStandardOutput<T>(_ body: () throws -> T) rethrows -> T {
    fflush(nil)
    let saved = dup(STDOUT_FILENO)
    let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
    guard saved >= 0, null >= 0 else {
      if saved >= 0 { close(saved) }
      if null >= 0 { close(null) }
      return try body()
    }
    dup2(null, STDOUT_FILENO)
    close(null)
    defer {
      fflush(nil)
      dup2(saved, STDOUT_FILENO)
      close(saved)
    }
    return try body()
  }
}
