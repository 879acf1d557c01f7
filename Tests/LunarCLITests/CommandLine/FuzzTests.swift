import Foundation
import Testing
import TestSupport

/// Every public Lua function and method, called with hostile arguments
/// (wrong types, NaN, ±inf, ±2^63, -0.0, NUL and invalid UTF-8 strings, deep,
/// cyclic and booby-trapped tables) by `Tests/lua/fuzz_api.lua`: the process
/// must always end on its own, with a clear error at worst, never a signal,
/// and no error message may name Lunar's own chunks (`lunar.workflow:12:`).
@Suite struct FuzzTests {
  static let script = Repository.url("Tests/lua/fuzz_api.lua").path

  /// One process per target, so a crash names what caused it.
  static let targets = [
    "lunar", "lunar.queue", "lunar.machine", "lunar.actions", "lunar.launches", "lunar.workflow", "lunar.trace",
    "task", "queue", "machine", "services", "machine definitions", "confusion", "debug",
  ]

  @Test(arguments: targets)
  func everyCallEndsCleanly(target: String) async throws {
    let folder = try TemporaryFolder()  // files a fuzzed call may create land here
    // A guard against a hang, not a time limit: the debug build takes about
    // a minute over the services' huge values, twice that on a busy machine.
    let outcome = try await LunarProcess.run(
      ["run", "--clock", "virtual", "--max-memory", "1G", Self.script, target], in: folder.url, timeout: 300)
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    let lastLine = lines.last ?? ""
    #expect(outcome.status == 0, "lunar ended with \(outcome.status): \(outcome.stderr.suffix(2000))")
    #expect(lastLine.hasPrefix("fuzz \(target): "), "\(outcome.stderr.suffix(2000))")
    // A message must name the user's code, never Lunar's own chunks.
    let leaks = lines.filter { $0.hasPrefix("internal chunk named by ") }
    #expect(lastLine.hasSuffix(", 0 naming internal chunks"), "\(lastLine)")
    #expect(leaks.isEmpty, "\(leaks.count) messages name Lunar's chunks, such as:\n\(leaks.prefix(5).joined(separator: "\n"))")
  }

  /// Every command with flags and operands of random bytes (the same
  /// script, target `command line`): each run ends by itself with 0, 1 or 2
  /// and, failing, one clear message in text.
  @Test func commandLinesOfRandomBytesEndCleanly() async throws {
    let folder = try TemporaryFolder()
    let outcome = try await LunarProcess.run(
      ["run", Self.script, "command line", LunarProcess.binary], in: folder.url, timeout: 600)
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(outcome.status == 0, "lunar ended with \(outcome.status): \(outcome.stderr.suffix(2000))")
    let unclear = lines.filter { $0.hasPrefix("unclear run ") }
    #expect(unclear.isEmpty, "\(unclear.count) runs ended unclearly, such as:\n\(unclear.prefix(5).joined(separator: "\n"))")
    #expect(lines.last?.hasPrefix("fuzz command line: ") == true && lines.last?.hasSuffix(" runs, 0 unclear") == true)
  }

  /// The same calls with the text trace on: time and fields of every event
  /// are formatted, whatever the call asked for (`lunar.sleep(1e16)`).
  @Test func tracedCallsEndCleanly() async throws {
    let folder = try TemporaryFolder()
    let outcome = try await LunarProcess.run(
      ["run", "--clock", "virtual", "--trace-file", "trace.jsonl", "--trace", Self.script, "lunar"],
      in: folder.url, timeout: 120)
    #expect(outcome.status == 0, "lunar ended with \(outcome.status): \(outcome.stderr.suffix(2000))")
    #expect(outcome.stdout.contains("fuzz lunar: "))
  }
}
