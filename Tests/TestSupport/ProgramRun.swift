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
    let stdout = try TemporaryFile()
    let stderr = try TemporaryFile()
    // posix_spawn, not Foundation's Process.run (see SpawnedProcess).
    let null = open("/dev/null", O_RDWR)
    defer { close(null) }
    let process = try SpawnedProcess(
      executable: executable, arguments: arguments.map { Array($0.utf8) },
      environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, directory: directory?.path,
      stdin: null, stdout: stdout.handle.fileDescriptor,
      stderr: stderr.handle.fileDescriptor)
    guard await ChildProcess.wait(for: process, timeout: timeout) else { throw TimedOut(command: [executable] + arguments) }
    return Outcome(status: process.terminationStatus, stdout: try stdout.contents(), stderr: try stderr.contents())
  }
}
