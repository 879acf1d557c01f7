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
    let executable = Self.executable
    let seconds = Double(lease.components.seconds) + Double(lease.components.attoseconds) / 1e18
    let arguments = [executable, "run", "--adopt", handover.description, "--lease", "\(seconds)", "--", file] + run.arguments
    var environment = self.environment
    environment["LUNAR_STORE"] = store
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    posix_spawnattr_setpgroup(&attributes, 0)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let changeDirectory = Self.changeDirectory {
      _ = root.withCString { changeDirectory(&actions, $0) }
    }
    var pid: pid_t = 0
    let status = Self.withCStrings(arguments) { argv in
      Self.withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
        posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
      }
    }
    guard status == 0 else { throw RunProcessError(description: "cannot start \(executable): \(String(cString: strerror(status)))") }
    return RunProcess(pid: pid)
  }

  /// This binary, so a worker's runs run with its own version.
  static var executable: String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
  }

  // glibc has it since 2.29, but Swift's Glibc module does not declare
  // this GNU extension: it is looked up. Without it (another libc), the
  // child runs in the worker's folder, and the file's path still holds
  // the root.
  private typealias ChangeDirectory =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
  private static let changeDirectory: ChangeDirectory? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
    .map { unsafeBitCast($0, to: ChangeDirectory.self) }

  private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T) -> T {
    var pointers = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
  }
}

/// A run's process, waited for by the worker thread that started it.
struct RunProcess: LaunchedRun {
  let pid: pid_t

  func waitForExit() -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { return 1 }
    }
    let signal = status & 0x7F
    return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
  }
}

/// Why a run's process could not start.
struct RunProcessError: Error, CustomStringConvertible {
  var description: String
}
