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
    try start(arguments.map { Array($0.utf8) }, shown: arguments, input: input, in: directory, environment: environment)
  }

  /// Runs `lunar` with words that are bytes (`b\377in`), which no Swift
  /// string holds (see `start(bytes:)`).
  static func run(
    bytes words: [[UInt8]], input: String? = nil, in directory: URL? = nil,
    environment: [String: String] = [:], timeout: TimeInterval = 20
  ) async throws -> Outcome {
    try await start(bytes: words, input: input, in: directory, environment: environment).wait(timeout: timeout)
  }

  /// Starts `lunar` with words that are bytes, given to it as they are.
  /// A word holds no NUL (no command line can).
  static func start(
    bytes words: [[UInt8]], input: String? = nil, in directory: URL? = nil, environment: [String: String] = [:]
  ) throws -> Running {
    let shown = words.map { String(decoding: $0, as: UTF8.self) }
    return try start(words, shown: shown, input: input, in: directory, environment: environment)
  }

  /// Runs the shell script `script` with `arguments` in `directory`, with
  /// the `lunar` under test first on `PATH`, as a user runs an example.
  static func shell(
    _ script: String, _ arguments: [String] = [], in directory: URL, timeout: TimeInterval = 60
  ) async throws -> Outcome {
    let path = URL(fileURLWithPath: binary).deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    return try await start(
      ([script] + arguments).map { Array($0.utf8) }, shown: ["sh", script] + arguments, input: nil, in: directory,
      environment: ["PATH": path], executable: "/bin/sh"
    ).wait(timeout: timeout)
  }

  private static func start(
    _ words: [[UInt8]], shown arguments: [String], input: String?, in directory: URL?, environment: [String: String],
    executable: String = binary
  ) throws -> Running {
    var env = ProcessInfo.processInfo.environment
    env["LUA_INIT"] = nil
    env["LUA_INIT_5_4"] = nil
    // Each child records its workflow runs in a store of its own (the
    // default store under a fresh XDG_STATE_HOME), never in the user's.
    let state = try TemporaryFolder()
    env["XDG_STATE_HOME"] = state.url.path
    env["LUNAR_STORE"] = nil
    for (key, value) in environment { env[key] = value }
    // The input is a file, not a pipe: a child reading its input to the
    // end never waits on a write end that leaked into another child.
    let stdin = try TemporaryFile()
    if let input { try stdin.handle.write(contentsOf: Data(input.utf8)) }
    let reading = try FileHandle(forReadingFrom: stdin.url)
    defer { try? reading.close() }
    let stdout = try TemporaryFile()
    let stderr = try TemporaryFile()
    let process = try SpawnedProcess(
      executable: executable, arguments: words, environment: env, directory: directory?.path,
      stdin: reading.fileDescriptor, stdout: stdout.handle.fileDescriptor, stderr: stderr.handle.fileDescriptor)
    return Running(process: process, arguments: arguments, stdin: stdin, stdout: stdout, stderr: stderr, state: state)
  }

  /// A child started by `start`.
  final class Running {
    let process: SpawnedProcess
    let arguments: [String]
    /// The child's standard input, written whole before it started.
    let stdin: TemporaryFile
    let stdout: TemporaryFile
    let stderr: TemporaryFile
    /// The child's XDG_STATE_HOME, where its default store lives.
    let state: TemporaryFolder

    init(
      process: SpawnedProcess, arguments: [String], stdin: TemporaryFile, stdout: TemporaryFile, stderr: TemporaryFile,
      state: TemporaryFolder
    ) {
      self.process = process
      self.arguments = arguments
      self.stdin = stdin
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

  struct TimedOut: Error, CustomStringConvertible {
    let arguments: [String]
    var description: String { "lunar \(arguments.joined(separator: " ")) did not finish in time" }
  }
}
