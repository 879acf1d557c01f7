import Foundation

/// Waiting for a child process from a test without holding one of the
/// cooperative pool's threads (two on a 2-core machine): a test blocked in
/// `waitUntilExit` or a sleep loop starves the async tests beside it.
public enum ChildProcess {
  /// Waits until `process` has exited, polling; kills it after `timeout`
  /// seconds and returns false then.
  @discardableResult
  public static func wait(for process: Process, timeout: TimeInterval = 30) async -> Bool {
    await wait(timeout: timeout, isRunning: { process.isRunning }, end: process.waitUntilExit, pid: process.processIdentifier)
  }

  /// The same for a child started with `posix_spawn`.
  @discardableResult
  public static func wait(for process: SpawnedProcess, timeout: TimeInterval = 30) async -> Bool {
    await wait(timeout: timeout, isRunning: { process.isRunning }, end: process.waitUntilExit, pid: process.processIdentifier)
  }

  private static func wait(
    timeout: TimeInterval, isRunning: () -> Bool, end: () -> Void, pid: pid_t
  ) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while isRunning() && Date() < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    guard isRunning() else {
      end()
      return true
    }
    kill(pid, SIGKILL)
    end()
    return false
  }
}
