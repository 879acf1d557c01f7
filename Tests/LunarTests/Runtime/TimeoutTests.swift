import LuaKit
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

@testable import Lunar

/// A host function that holds the loop thread, as one long C call would.
private struct BlockingPlugin: LunarPlugin {
  let name = "blocking"

  func install(in runtime: RuntimeCore) throws {
    var module = LuaModule("blocking")
    module.function("hold") { call in
      usleep(UInt32((try call.number(1)) * 1_000_000))
      return .none
    }
    try runtime.install(module)
  }
}

@Suite struct TimeoutTests {
  @Test func anEmbeddedRuntimeWaitsForALongCallInsteadOfEndingTheProcess() async throws {
    let lua = try TestRuntime(clock: .real) {
      $0.plugins = [BlockingPlugin()]
      $0.timeout = 0.1
    }
    #expect(RuntimeConfiguration().ownsProcess == false)
    // Held past the limit and the grace after it: with ownsProcess
    // this test process would have ended.
    let failure = await lua.failure("require('blocking').hold(\(Runtime.stuckGrace + 0.5)); while true do end")
    guard case .timedOut(let message) = failure else {
      Issue.record("expected a timeout, got \(String(describing: failure))")
      return
    }
    #expect(message == "timeout: the script ran longer than 0.1 seconds")
  }

  @Test func theTimeoutStopsALoadedFileUnderCoverage() async throws {
    // The timeout's interrupt hook and coverage's line hook share the one
    // hook function; a pcall cannot keep the loop going.
    let folder = try TemporaryFolder()
    let file = try folder.write("spin.lua", "while true do\n  pcall(function() while true do end end)\nend\n")
    let coverage = LineCoverage()
    var failure: RunFailure?
    do {
      let lua = try TestRuntime(clock: .real) {
        $0.timeout = 0.1
        $0.coverage = coverage
      }
      failure = await lua.failure("dofile('\(file)')")
    }
    guard case .timedOut(let message) = failure else {
      Issue.record("expected a timeout, got \(String(describing: failure))")
      return
    }
    #expect(message == "timeout: the script ran longer than 0.1 seconds")
    let spin = try #require(coverage.coveredFiles.first)
    #expect((spin.hits[2] ?? 0) > 0)
  }
}
