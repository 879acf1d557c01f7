import Foundation

/// A program (a shell, `man`, a script) run to its end from a test, with
/// what it printed.
public enum ProgramRun {
  /// What the program did.
  public struct Outcome {
    public var status: Int32
    public var stdout: String
    public var stderr: String
  }

  /// The program took longer than the test allows.
  public struct TimedOut: Error, CustomStringConvertible {
    public let command: [String]
    public var description: String { "\(command.joined(separator: " ")) did not finish in time" }
  }

  /// Runs `executable ARGUMENTS` in `directory` with `environment` added to
  /// this process's, standard input empty; kills it after `timeout` seconds.
  public static func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil,
    timeout: TimeInterval = 120
  ) async throws -> Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let stdout = try TemporaryFile()
    let stderr = try TemporaryFile()
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = stdout.handle
    process.standardError = stderr.handle
    try process.run()
    guard await ChildProcess.wait(for: process, timeout: timeout) else { throw TimedOut(command: [executable] + arguments) }
    return Outcome(status: process.terminationStatus, stdout: try stdout.contents(), stderr: try stderr.contents())
  }
}
