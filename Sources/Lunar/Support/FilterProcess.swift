#if canImport(Glibc)
import Glibc
#endif

/// A program run as a filter (`dot -Tsvg`): bytes on its standard input,
/// what it writes to standard output and standard error read back whole,
/// and how it ended.
public enum FilterProcess {
  /// What the program did.
  public struct Outcome: Sendable {
    /// Its exit status, or 128 plus the signal that ended it.
    public var status: Int32
    /// What it wrote to standard output.
    public var output: [UInt8]
    /// What it wrote to standard error.
    public var errors: [UInt8]
  }

  /// The program could not be started: not found on `PATH`, or the system
  /// refused (no more processes, no pipes).
  public struct LaunchError: Error, Sendable {
    /// True when no program of that name is on `PATH`.
    public let isMissing: Bool
    /// The system's reason.
    public let reason: String
  }

  /// Runs `program` (looked up on `PATH`) with `arguments`, writes `input`
  /// to it while reading its output, and waits for it to end.
  public static func run(_ program: String, _ arguments: [String], input: [UInt8]) throws(LaunchError) -> Outcome {
    guard let toChild = makePipe() else { throw LaunchError(isMissing: false, reason: lastError) }
    guard let fromChild = makePipe() else {
      closeAll(toChild)
      throw LaunchError(isMissing: false, reason: lastError)
    }
    guard let errorsFromChild = makePipe() else {
      closeAll(toChild + fromChild)
      throw LaunchError(isMissing: false, reason: lastError)
    }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // dup2 clears close-on-exec on the copies; every original closes on exec.
    posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
    posix_spawn_file_actions_adddup2(&actions, errorsFromChild[1], 2)
    // The child starts with no signal blocked and default actions, whatever
    // this process has set up for itself.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv = ([program] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
    closeAll([toChild[0], fromChild[1], errorsFromChild[1]])
    guard spawned == 0 else {
      closeAll([toChild[1], fromChild[0], errorsFromChild[0]])
      throw LaunchError(isMissing: spawned == ENOENT, reason: String(cString: strerror(spawned)))
    }

    let (output, errors) = exchange(input, writingTo: toChild[1], readingFrom: fromChild[0], and: errorsFromChild[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // The wait status: the low 7 bits are the signal that ended the
    // process (0 if it exited), the next byte its exit status.
    let signal = status & 0x7F
    return Outcome(status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal, output: output, errors: errors)
  }

  /// Writes `input` and reads both outputs at once, so that a child
  /// blocked writing a full pipe never waits on us writing to it; closes
  /// the three descriptors.
  private static func exchange(
    _ input: [UInt8], writingTo inputFD: Int32, readingFrom outputFD: Int32, and errorsFD: Int32
  ) -> ([UInt8], [UInt8]) {
    var output: [UInt8] = []
    var errors: [UInt8] = []
    var writing: Int32? = inputFD
    var offset = 0
    _ = fcntl(inputFD, F_SETFL, fcntl(inputFD, F_GETFL) | O_NONBLOCK)
    if input.isEmpty {
      close(inputFD)
      writing = nil
    }
    var reading: [Int32] = [outputFD, errorsFD]
    // A child that exits without reading all of its input would raise
    // SIGPIPE here; blocked on this thread, the write fails with EPIPE
    // instead, and the pending signal is taken back below.
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var previousMask = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previousMask)
    defer {
      var pending = sigset_t()
      sigpending(&pending)
      if sigismember(&pending, SIGPIPE) == 1 && sigismember(&previousMask, SIGPIPE) == 0 {
        var immediately = timespec(tv_sec: 0, tv_nsec: 0)
        _ = sigtimedwait(&pipeSignal, nil, &immediately)
      }
      pthread_sigmask(SIG_SETMASK, &previousMask, nil)
    }

    var buffer = [UInt8](repeating: 0, count: 65536)
    while writing != nil || !reading.isEmpty {
      var fds = reading.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      if let writing { fds.append(pollfd(fd: writing, events: Int16(POLLOUT), revents: 0)) }
      guard poll(&fds, nfds_t(fds.count), -1) >= 0 else {
        if errno == EINTR { continue }
        break
      }
      for entry in fds where entry.revents != 0 {
        if entry.fd == writing {
          let written = input.withUnsafeBytes { write(entry.fd, $0.baseAddress! + offset, input.count - offset) }
          if written > 0 { offset += written }
          if offset == input.count || (written < 0 && errno != EAGAIN && errno != EINTR) {
            close(entry.fd)
            writing = nil
          }
          continue
        }
        let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
        if count > 0 {
          if entry.fd == outputFD { output += buffer[..<count] } else { errors += buffer[..<count] }
        } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
          close(entry.fd)
          reading.removeAll { $0 == entry.fd }
        }
      }
    }
    if let writing { close(writing) }
    closeAll(reading)
    return (output, errors)
  }

  /// A pipe (read end, write end) whose ends close on exec.
  private static func makePipe() -> [Int32]? {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return nil }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return ends
  }

  private static var lastError: String { String(cString: strerror(errno)) }

  private static func closeAll(_ descriptors: [Int32]) {
    for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
  }
}
