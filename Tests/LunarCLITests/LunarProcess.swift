import Foundation
import TestSupport

/// Runs the built `lunar` binary as a child process, as a user would.
struct LunarProcess {
  /// What the child did.
  struct Outcome {
    var status: Int32
    var stdout: String
    var stderr: String
    /// False when a signal ended the child (`status` is then the signal).
    var exitedNormally = true
  }

  /// The `lunar` binary built beside this test bundle (or `LUNAR_BIN`).
  static let binary: String = {
    if let override = ProcessInfo.processInfo.environment["LUNAR_BIN"] { return override }
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("lunar").path
  }()

  /// Runs `lunar ARGUMENTS` in `directory`, feeding `input` on standard
  /// input; kills the child after `timeout` seconds so a hang fails the test.
  /// Waits without holding a thread of Swift's cooperative pool (two on a
  /// 2-core machine), which async tests running beside it need.
  static func run(
    _ arguments: [String], input: String? = nil, in directory: URL? = nil,
    environment: [String: String] = [:], timeout: TimeInterval = 20
  ) async throws -> Outcome {
    try await start(arguments, input: input, in: directory, environment: environment).wait(timeout: timeout)
  }

  /// Starts `lunar ARGUMENTS` in `directory` with `input` on standard input
  /// (then closed), and returns at once: the caller may watch its output
  /// and signal it before waiting for it.
  static func start(
    _ arguments: [String], input: String? = nil, in directory: URL? = nil,
    environment: [String: String] = [:]
  ) throws -> Running {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    return try start(process, arguments, input: input, in: directory, environment: environment)
  }

  /// Runs `lunar` with words that are bytes (`b\377in`), which no Swift
  /// string holds (see `start(bytes:)`).
  static func run(
    bytes words: [[UInt8]], input: String? = nil, in directory: URL? = nil,
    environment: [String: String] = [:], timeout: TimeInterval = 20
  ) async throws -> Outcome {
    try await start(bytes: words, input: input, in: directory, environment: environment).wait(timeout: timeout)
  }

  /// Starts `lunar` with words that are bytes: a shell makes each word with
  /// printf and runs `lunar` with them. A word holds no NUL (no command
  /// line can).
  static func start(
    bytes words: [[UInt8]], input: String? = nil, in directory: URL? = nil, environment: [String: String] = [:]
  ) throws -> Running {
    var script = ""
    for (index, word) in words.enumerated() {
      let escaped = word.map { "\\0" + String($0, radix: 8) }.joined()
      // The x keeps trailing newlines, which $(...) would drop.
      script += "w\(index)=$(printf '%bx' '\(escaped)'); w\(index)=${w\(index)%x}\n"
    }
    script += "exec \"$0\"" + words.indices.map { " \"$w\($0)\"" }.joined() + "\n"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script, binary]
    let shown = words.map { String(decoding: $0, as: UTF8.self) }
    return try start(process, shown, input: input, in: directory, environment: environment)
  }

  private static func start(
    _ process: Process, _ arguments: [String], input: String?, in directory: URL?, environment: [String: String]
  ) throws -> Running {
    if let directory { process.currentDirectoryURL = directory }
    var env = ProcessInfo.processInfo.environment
    env["LUA_INIT"] = nil
    env["LUA_INIT_5_4"] = nil
    // Each child records its workflow runs in a store of its own (the
    // default store under a fresh XDG_STATE_HOME), never in the user's.
    let state = try TemporaryFolder()
    env["XDG_STATE_HOME"] = state.url.path
    env["LUNAR_STORE"] = nil
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let stdinPipe = Pipe()
    let running = Running(
      process: process, arguments: arguments, stdout: try TemporaryFile(), stderr: try TemporaryFile(), state: state)
    process.standardInput = stdinPipe
    process.standardOutput = running.stdout.handle
    process.standardError = running.stderr.handle
    Self.ignoreBrokenPipes
    try process.run()
    // A child may exit without reading its input: the write then fails
    // with EPIPE, which is no concern of the test.
    if let input { try? stdinPipe.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
    try? stdinPipe.fileHandleForWriting.close()
    return running
  }

  /// A child started by `start`.
  final class Running {
    let process: Process
    let arguments: [String]
    let stdout: TemporaryFile
    let stderr: TemporaryFile
    /// The child's XDG_STATE_HOME, where its default store lives.
    let state: TemporaryFolder

    init(process: Process, arguments: [String], stdout: TemporaryFile, stderr: TemporaryFile, state: TemporaryFolder) {
      self.process = process
      self.arguments = arguments
      self.stdout = stdout
      self.stderr = stderr
      self.state = state
    }

    /// Waits until standard output contains `text`; kills the child and
    /// throws if it does not within `timeout` seconds or exits first.
    func waitForOutput(_ text: String, timeout: TimeInterval = 20) async throws {
      let deadline = Date().addingTimeInterval(timeout)
      while !(try stdout.contents().contains(text)) {
        guard process.isRunning && Date() < deadline else {
          if process.isRunning { kill(process.processIdentifier, SIGKILL) }
          process.waitUntilExit()
          throw MissingOutput(arguments: arguments, text: text)
        }
        try await Task.sleep(for: .milliseconds(2))
      }
    }

    /// Sends `signal` (for example `SIGINT`, as Ctrl-C does) to the child.
    func send(_ signal: Int32) {
      kill(process.processIdentifier, signal)
    }

    /// Waits for the child to exit; kills it after `timeout` seconds so a
    /// hang fails the test.
    func wait(timeout: TimeInterval = 20) async throws -> Outcome {
      let deadline = Date().addingTimeInterval(timeout)
      while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw TimedOut(arguments: arguments)
      }
      process.waitUntilExit()
      return Outcome(
        status: process.terminationStatus, stdout: try stdout.contents(), stderr: try stderr.contents(),
        exitedNormally: process.terminationReason == .exit)
    }
  }

  struct MissingOutput: Error, CustomStringConvertible {
    let arguments: [String]
    let text: String
    var description: String { "lunar \(arguments.joined(separator: " ")) never printed \(text.debugDescription)" }
  }

  /// Writing to a child that has exited raises SIGPIPE, whose default
  /// action would end the whole test process: ignored once, for good.
  private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

  struct TimedOut: Error, CustomStringConvertible {
    let arguments: [String]
    var description: String { "lunar \(arguments.joined(separator: " ")) did not finish in time" }
  }
}
