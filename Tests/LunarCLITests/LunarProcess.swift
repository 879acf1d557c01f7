import Foundation
import TestSupport

/// Runs the built `lunar` binary as a child process, as a user would.
struct LunarProcess {
  /// What the child did.
  struct Outcome {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// The `lunar` binary built beside this test bundle (or `LUNAR_BIN`).
  static let binary: String = {
    if let override = ProcessInfo.processInfo.environment["LUNAR_BIN"] { return override }
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("lunar").path
  }()

  /// Runs `lunar ARGUMENTS` in `directory`, feeding `input` on standard
  /// input; kills the child after `timeout` seconds so a hang fails the test.
  static func run(
    _ arguments: [String], input: String? = nil, in directory: URL? = nil,
    environment: [String: String] = [:], timeout: TimeInterval = 20
  ) throws -> Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    var env = ProcessInfo.processInfo.environment
    env["LUA_INIT"] = nil
    env["LUA_INIT_5_4"] = nil
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let stdinPipe = Pipe()
    let stdoutFile = try TemporaryFile()
    let stderrFile = try TemporaryFile()
    process.standardInput = stdinPipe
    process.standardOutput = stdoutFile.handle
    process.standardError = stderrFile.handle
    Self.ignoreBrokenPipes
    try process.run()
    // A child may exit without reading its input: the write then fails
    // with EPIPE, which is no concern of the test.
    if let input { try? stdinPipe.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
    try? stdinPipe.fileHandleForWriting.close()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(2000) }
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      throw TimedOut(arguments: arguments)
    }
    process.waitUntilExit()
    return Outcome(status: process.terminationStatus, stdout: try stdoutFile.contents(), stderr: try stderrFile.contents())
  }

  /// Writing to a child that has exited raises SIGPIPE, whose default
  /// action would end the whole test process: ignored once, for good.
  private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

  struct TimedOut: Error, CustomStringConvertible {
    let arguments: [String]
    var description: String { "lunar \(arguments.joined(separator: " ")) did not finish in time" }
  }
}

/// A file in a fresh temporary folder, removed with the folder.
final class TemporaryFile {
  let url: URL
  let handle: FileHandle

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    handle = try FileHandle(forWritingTo: url)
  }

  func contents() throws -> String {
    String(decoding: try Data(contentsOf: url), as: UTF8.self)
  }

  deinit {
    try? handle.close()
    try? FileManager.default.removeItem(at: url)
  }
}
