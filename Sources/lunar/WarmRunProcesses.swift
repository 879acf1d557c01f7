import Glibc
import LunarSchedules
import LunarStore

/// Starts each run a worker claims as `lunar run --adopt RUN:TOKEN FILE
/// ARGS...`: this same binary, in the worker's store, in the worker's
/// `--root`, writing to the worker's standard output and error.
///
/// The child is in a process group of its own, so a Ctrl-C meant for the
/// worker does not cancel its runs; it gets the store's URL through
/// `LUNAR_STORE`, never on its command line, where `ps` would show a
/// PostgreSQL password.
struct RunProcessLauncher: RunLauncher {
  /// The store's URL as the child reads it.
  var store: String
  /// The folder the child runs in: the worker's `--root`.
  var root: String
  /// The worker's environment, which each child inherits.
  var environment: [String: String]
  /// The lease each child holds its run with (`lunar run --lease`).
  var lease: Duration

  func launch(_ run: RunRecord, handover: RunHandover, file: String) throws -> any LaunchedRun {
    let seconds = Double(lease.components.seconds) + Double(lease.components.attoseconds) / 1e18
    let arguments =
      [ChildProcess.executable, "run", "--adopt", handover.description, "--lease", "\(seconds)", "--", file] + run.arguments
    var environment = self.environment
    environment["LUNAR_STORE"] = store
    // Without posix_spawn_file_actions_addchdir_np the child runs in the
    // worker's folder, and the file's path still holds the root.
    return RunProcess(pid: try ChildProcess.spawn(arguments, environment: environment, folder: root, ownGroup: true))
  }
}

/// A run's process, waited for by the worker thread that started it.
struct RunProcess: LaunchedRun {
  let pid: pid_t

  func waitForExit() -> Int32 { ChildProcess.waitForExit(pid) }
}

/// Why a run's worker could not start.
struct RunProcessError: Error, CustomStringConvertible {
  var description: String
}
