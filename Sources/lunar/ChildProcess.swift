import Glibc

/// Starting this same binary as a child process (`posix_spawn`): a run a
/// worker hands over, a `--processes` step worker. The child gets the
/// environment it is given and nothing else of the caller's but its
/// standard streams.
enum ChildProcess {
  /// Starts `arguments` (the first is the executable) with `environment`,
  /// in `folder` if given, in a process group of its own if `ownGroup`;
  /// `socket` becomes the child's descriptor 3, and its standard input
  /// /dev/null.
  static func spawn(
    _ arguments: [String], environment: [String: String], folder: String? = nil, ownGroup: Bool = false,
    socket: Int32? = nil
  ) throws(ChildProcessError) -> pid_t {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    if ownGroup {
      posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
      posix_spawnattr_setpgroup(&attributes, 0)
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let socket {
      // Above the standard streams and 3, so no dup2 overwrites another.
      precondition(socket > 3, "the child's socket must be above descriptor 3")
      posix_spawn_file_actions_adddup2(&actions, socket, 3)
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    if let folder, let changeDirectory {
      _ = folder.withCString { changeDirectory(&actions, $0) }
    }
    var pid: pid_t = 0
    let executable = arguments[0]
    let status = withCStrings(arguments) { argv in
      withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
        posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
      }
    }
    guard status == 0 else {
      throw ChildProcessError(description: "cannot start \(executable): \(String(cString: strerror(status)))")
    }
    return pid
  }

  /// Waits for child `pid` to end: its exit status, or 128 plus the signal
  /// that ended it.
  static func waitForExit(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { return 1 }
    }
    let signal = status & 0x7F
    return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
  }

  /// This binary, so a child runs with its own version.
  static var executable: String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
  }

  // glibc has it since 2.29, but Swift's Glibc module does not declare
  // this GNU extension: it is looked up. Without it (another libc), the
  // child runs in the caller's folder.
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

/// Why a child process could not start.
struct ChildProcessError: Error, CustomStringConvertible {
  var description: String
}
