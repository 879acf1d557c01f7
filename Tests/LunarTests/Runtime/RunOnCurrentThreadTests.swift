import Foundation
import LuaKit
import Testing

@testable import Lunar

/// `Runtime.runOnCurrentThread`, which `lunar run` uses: the caller's thread
/// is the loop thread for one script. Each test gives it a thread of its own,
/// as the command line's main thread is, never one of the test pool's.
@Suite struct RunOnCurrentThreadTests {
  /// Runs `source` on a new dedicated thread and returns the outcome.
  func runOnThread(_ source: String, configure: @Sendable (inout RuntimeConfiguration) -> Void = { _ in })
    async throws -> Result<[LuaValue], RunFailure>
  {
    var configuration = RuntimeConfiguration()
    configuration.clock = .virtual(start: 0)
    configure(&configuration)
    let ready = configuration
    return try await withCheckedThrowingContinuation { continuation in
      let thread = Thread {
        continuation.resume(with: Result {
          try Runtime.runOnCurrentThread(ready, Script(source: .text(source, chunkName: "@main.lua")))
        })
      }
      thread.stackSize = 16 << 20
      thread.start()
    }
  }

  @Test func returnsTheChunksResultsAfterItsTasksFinish() async throws {
    let recorder = TraceRecorder()
    let outcome = try await runOnThread("""
      lunar.spawn(function() lunar.sleep(60) end)
      return 6 * 7, "answer"
      """) { $0.traceSinks = [recorder] }
    #expect(try outcome.get() == [42, "answer"])
    // The task's sleep ended before the run did.
    #expect(recorder.events.contains { $0.kind == "timer.fired" })
  }

  @Test func reportsALuaErrorWithItsLine() async throws {
    let outcome = try await runOnThread("local x = 1\nerror('broken')")
    guard case .failure(.lua(let error)) = outcome else {
      Issue.record("expected a Lua error, got \(outcome)")
      return
    }
    #expect(error.message == "main.lua:2: broken")
  }

  @Test func aTimeoutStopsARunawayLoop() async throws {
    let outcome = try await runOnThread("while true do end") {
      $0.clock = .real
      $0.timeout = 0.2
    }
    guard case .failure(.timedOut(let message)) = outcome else {
      Issue.record("expected a timeout, got \(outcome)")
      return
    }
    #expect(message.contains("0.2"))
  }
}
