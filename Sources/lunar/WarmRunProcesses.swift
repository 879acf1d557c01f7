import Foundation
import Glibc
import LunarSchedules
import LunarStore
import Synchronization

/// The processes `lunar worker` runs its claimed runs in: warm `lunar run
/// --host-runs` children of this same binary, each running one run at a
/// time and kept for the next (so a run after the first pays no process
/// start and no store connection), each retired after `runsPerProcess`
/// runs. A run still has a process to itself while it runs: its crash,
/// `os.exit` or kill ends that process, never the worker or another run.
///
/// Each child runs in the worker's `--root`, in a process group of its own
/// (a Ctrl-C meant for the worker does not cancel its runs), with the
/// store's URL in `LUNAR_STORE`, never on its command line, where `ps`
/// would show a PostgreSQL password. The worker and a child talk over a
/// socket pair (the child's descriptor 3; see `HostedRunRequest`): when
/// the worker ends, its children see the socket close and end after their
/// run.
final class WarmRunProcesses: RunLauncher {
  /// How many runs one process runs before another replaces it, so what a
  /// run leaks in the process (C libraries' memory) stays bounded.
  static let runsPerProcess = 100

  /// The store's URL as the children read it.
  private let store: String
  /// The folder the children run in: the worker's `--root`.
  private let root: String
  /// The worker's environment, which each child inherits.
  private let environment: [String: String]
  /// The lease each child holds its runs with (`lunar run --lease`).
  private let lease: Duration
  /// The children waiting for a run.
  private let idle = Mutex<[WarmRunProcess]>([])

  /// Children for `store`, run in `root` with `environment`, holding runs with `lease`.
  init(store: String, root: String, environment: [String: String], lease: Duration) {
    self.store = store
    self.root = root
    self.environment = environment
    self.lease = lease
  }

  func launch(_ run: RunRecord, handover: RunHandover, file: String) throws -> any LaunchedRun {
    let request = HostedRunRequest(handover: handover, file: file, arguments: run.arguments).line
    // An idle child may have died since its last run (killed, or its
    // store failed): its socket refuses the request, and a fresh one is
    // started.
    while let child = idle.withLock({ $0.popLast() }) {
      if child.socket.write(request) { return HostedRun(child: child, pool: self) }
      child.retire()
    }
    let child = try start()
    guard child.socket.write(request) else {
      child.retire()
      throw RunProcessError(description: "its process \(child.pid) ended before it could take the run")
    }
    return HostedRun(child: child, pool: self)
  }

  /// Ends the children waiting for a run, and waits until they did: the
  /// worker stops. A child still running a run ends after it.
  func stopIdle() {
    for child in idle.withLock({ kept in defer { kept.removeAll() }; return kept }) {
      shutdown(child.socket.descriptor, Int32(SHUT_RDWR))
      _ = ChildProcess.waitForExit(child.pid)
    }
  }

  /// Puts `child` back for the next run, or retires it after its last.
  fileprivate func ran(_ child: WarmRunProcess) {
    if child.runs >= Self.runsPerProcess {
      child.retire()
    } else {
      idle.withLock { $0.append(child) }
    }
  }

  private func start() throws -> WarmRunProcess {
    let seconds = Double(lease.components.seconds) + Double(lease.components.attoseconds) / 1e18
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
      throw RunProcessError(description: "cannot make a socket for its process: \(String(cString: strerror(errno)))")
    }
    // The child's end above descriptor 3 (see ChildProcess.spawn), and
    // close-on-exec like ours, so no other child holds it open.
    let childEnd = fcntl(pair[1], F_DUPFD_CLOEXEC, 10)
    close(pair[1])
    let ours = SocketLines(descriptor: pair[0])
    guard childEnd >= 0 else {
      throw RunProcessError(description: "cannot make a socket for its process: \(String(cString: strerror(errno)))")
    }
    defer { close(childEnd) }
    var environment = self.environment
    environment["LUNAR_STORE"] = store
    // Without posix_spawn_file_actions_addchdir_np the child runs in the
    // worker's folder, and each file's path still holds the root.
    let pid = try ChildProcess.spawn(
      [ChildProcess.executable, "run", "--host-runs", "--lease", "\(seconds)"], environment: environment, folder: root,
      ownGroup: true, socket: childEnd)
    return WarmRunProcess(pid: pid, socket: ours)
  }
}

/// One warm run process, and how many runs it took.
private struct WarmRunProcess: Sendable {
  let pid: pid_t
  let socket: SocketLines
  var runs = 0

  /// Closes its socket, so it ends once its run (if any) did, and reaps it
  /// on a thread of its own.
  func retire() {
    let pid = pid
    // Closed with the last reference to the socket, which this thread holds.
    Thread.detachNewThread { [socket] in
      shutdown(socket.descriptor, Int32(SHUT_RDWR))
      _ = ChildProcess.waitForExit(pid)
    }
  }
}

/// A run handed to a warm process, waited for by the worker thread that
/// launched it.
private struct HostedRun: LaunchedRun {
  let child: WarmRunProcess
  let pool: WarmRunProcesses

  func waitForExit() -> Int32 {
    if let line = child.socket.read(), let (_, status) = HostedRunRequest.status(ofReply: line) {
      var child = child
      child.runs += 1
      pool.ran(child)
      return status
    }
    // The process ended during the run (os.exit, a crash, a kill): its status.
    shutdown(child.socket.descriptor, Int32(SHUT_RDWR))
    return ChildProcess.waitForExit(child.pid)
  }
}

/// Why a run's process could not start.
struct RunProcessError: Error, CustomStringConvertible {
  var description: String
}
