import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A child process started with `posix_spawn`, for tests that start
/// hundreds of them side by side. Foundation's `Process.run()` on this
/// toolchain reads past a buffer while listing `/proc/self/fd` and crashes
/// now and then under load (swift-corelibs-foundation pull request 5472);
/// and its pipes can leak into a child another test starts at that moment.
/// Here the child's standard streams are the given descriptors and every
/// other descriptor is closed in it.
public final class SpawnedProcess {
  /// How a finished child ended.
  public enum TerminationReason: Sendable {
    /// It called exit (`terminationStatus` is its status).
    case exit
    /// A signal ended it (`terminationStatus` is the signal).
    case uncaughtSignal
  }

  /// The child's process id.
  public let processIdentifier: pid_t
  private let lock = NSLock()
  private var waitStatus: Int32?

  /// Starts `executable` with `arguments` (bytes, without the program
  /// name: `executable` is argument 0), `environment`, in `directory` (or
  /// the current one), its standard streams on the given descriptors.
  public init(
    executable: String, arguments: [[UInt8]], environment: [String: String], directory: String? = nil,
    stdin: Int32, stdout: Int32, stderr: Int32
  ) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, stdin, 0)
    posix_spawn_file_actions_adddup2(&actions, stdout, 1)
    posix_spawn_file_actions_adddup2(&actions, stderr, 2)
    try Self.closeFrom(3, in: &actions)
    if let directory { try Self.changeDirectory(to: directory, in: &actions) }
    let words = [Array(executable.utf8)] + arguments
    let argv = words.map { word in
      word.withUnsafeBufferPointer { bytes -> UnsafeMutablePointer<CChar>? in
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        bytes.withMemoryRebound(to: CChar.self) { copy.initialize(from: $0.baseAddress!, count: bytes.count) }
        copy[bytes.count] = 0
        return copy
      }
    } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for word in argv { word?.deallocate() }
      for entry in envp { free(entry) }
    }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    guard status == 0 else { throw SpawnError(executable: executable, errno: status) }
    processIdentifier = pid
  }

  /// Whether the child has not ended yet (reaps it once it has).
  public var isRunning: Bool {
    lock.withLock {
      if waitStatus != nil { return false }
      var status: Int32 = 0
      if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier { waitStatus = status }
      return waitStatus == nil
    }
  }

  /// Blocks until the child ends.
  public func waitUntilExit() {
    lock.withLock {
      guard waitStatus == nil else { return }
      var status: Int32 = 0
      while waitpid(processIdentifier, &status, 0) == -1 && errno == EINTR {}
      waitStatus = status
    }
  }

  /// The exit status, or the signal that ended the child (after it ended).
  public var terminationStatus: Int32 {
    let status = lock.withLock { waitStatus } ?? 0
    return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
  }

  /// How the child ended (after it ended).
  public var terminationReason: TerminationReason {
    (lock.withLock { waitStatus } ?? 0) & 0x7f == 0 ? .exit : .uncaughtSignal
  }

  /// A child that could not be started.
  public struct SpawnError: Error, CustomStringConvertible {
    let executable: String
    let errno: Int32
    public var description: String { "cannot start \(executable): \(String(cString: strerror(errno)))" }
  }

  // glibc has both since 2.34 (Debian 12 has 2.36), but Swift's Glibc
  // module does not declare these GNU extensions: they are looked up.
  private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
  private typealias ChangeDirectory =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

  private static func function<T>(_ name: String, as: T.Type) throws -> T {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
      throw SpawnError(executable: name, errno: ENOSYS)
    }
    return unsafeBitCast(symbol, to: T.self)
  }

  private static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) throws {
    let closeFrom = try function("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self)
    _ = closeFrom(&actions, first)
  }

  private static func changeDirectory(to directory: String, in actions: inout posix_spawn_file_actions_t) throws {
    let changeDirectory = try function("posix_spawn_file_actions_addchdir_np", as: ChangeDirectory.self)
    _ = directory.withCString { changeDirectory(&actions, $0) }
  }
}
