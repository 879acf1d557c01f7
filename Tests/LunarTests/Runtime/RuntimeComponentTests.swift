import Testing

@testable import Lunar

/// A third party's own component, counting the runs that used it.
private final class RunCounter: RuntimeComponent {
  var runs = 0
  init(core: RuntimeCore) {}
}

@Suite struct RuntimeComponentTests {
  @Test func aComponentIsMadeOnceAndFoundByItsType() async throws {
    let lua = try TestRuntime()
    let runs = try await lua.runtime.perform { core in
      core.component(RunCounter.self).runs += 1
      core.component(RunCounter.self).runs += 1
      return core.component(RunCounter.self).runs
    }
    #expect(runs == 2)
  }
}
