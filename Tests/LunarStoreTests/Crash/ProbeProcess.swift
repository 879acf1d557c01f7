import Foundation

/// A `LunarStoreProbe` child writing steps to a store or working its queues
/// (see its main.swift):
/// started, watched through its output, killed or waited for.
final class ProbeProcess {
  /// The probe built beside this test bundle.
  static let binary: String = {
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("LunarStoreProbe").path
  }()

  let process = Process()
  private let output: URL
  private let errors: URL

  /// Starts `LunarStoreProbe write STORE WORKFLOW STEPS BATCH SEED` (STORE: a
  /// SQLite file's path or a postgres:// URL).
  convenience init(store: String, workflow: String, steps: Int, batch: Int, seed: UInt64) throws {
    try self.init(arguments: ["write", store, workflow, String(steps), String(batch), String(seed)])
  }

  /// Starts `LunarStoreProbe` with `arguments`.
  init(arguments: [String]) throws {
    let folder = FileManager.default.temporaryDirectory
    output = folder.appendingPathComponent("probe-\(UUID().uuidString).out")
    errors = folder.appendingPathComponent("probe-\(UUID().uuidString).err")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    process.executableURL = URL(fileURLWithPath: Self.binary)
    process.arguments = arguments
    process.standardOutput = try FileHandle(forWritingTo: output)
    process.standardError = try FileHandle(forWritingTo: errors)
    try process.run()
  }

  deinit {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    try? FileManager.default.removeItem(at: output)
    try? FileManager.default.removeItem(at: errors)
  }

  /// The lines printed so far (the last one only once complete).
  var lines: [String] {
    let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    return text.split(separator: "\n", omittingEmptySubsequences: true).dropLast(text.hasSuffix("\n") ? 0 : 1).map(String.init)
  }

  /// What it wrote to standard error.
  var errorText: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

  /// Waits (without holding a thread of Swift's pool) until it has printed
  /// `count` lines or exited.
  func waitForLines(_ count: Int, timeout: TimeInterval = 60) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while lines.count < count && process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(1)) }
  }

  /// Waits for it to exit; kills it after `timeout` seconds so a hang fails the test.
  func wait(timeout: TimeInterval = 60) async throws -> Int32 {
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// Ends it with SIGKILL, as a crash or the OOM killer would, and reaps it.
  func killNow() async throws {
    kill(process.processIdentifier, SIGKILL)
    _ = try await wait()
  }

  /// The run it began, if it said so.
  var run: Int64? {
    lines.first { $0.hasPrefix("run ") }.flatMap { Int64($0.dropFirst(4)) }
  }

  /// Position → fingerprint of the output, for each step it reported committed.
  var committed: [Int: String] {
    var steps: [Int: String] = [:]
    for line in lines where line.hasPrefix("committed ") {
      let parts = line.split(separator: " ")
      if parts.count == 3, let position = Int(parts[1]) { steps[position] = String(parts[2]) }
    }
    return steps
  }
}
