import CLua
import Synchronization
import Testing

@testable import LuaKit

/// Copies Swift keeps of Lua values, as a host function would keep them.
private final class Keeper {
  var values: [ChargedValue] = []
}

@Suite struct LuaMemoryBudgetTests {
  /// A state limited to `megabytes` with `keep(v)`, which keeps a charged
  /// copy of `v`, and `release()`, which lets every copy go.
  private func keepingState(megabytes: Int) throws -> (LuaState, Keeper) {
    let state = try LuaState(memoryLimit: megabytes << 20)
    let keeper = Keeper()
    state.register("keep") { call in
      keeper.values.append(try call.chargedValue(1, name: "value"))
      return .none
    }
    state.register("release") { _ in
      keeper.values.removeAll()
      return .none
    }
    try run("big = {} for i = 1, 20000 do big[i] = ('x'):rep(40) .. i end", in: state)
    return (state, keeper)
  }

  @Test func keptCopiesCountAgainstTheLimitUntilReleased() throws {
    let (state, keeper) = try keepingState(megabytes: 16)
    let error = try failure("for i = 1, 1000 do keep(big) end", in: state)
    // Lua's own memory error: the status, the message, no position.
    #expect(error.kind == .memory)
    #expect(error.message == "not enough memory")
    #expect(!keeper.values.isEmpty)
    #expect(keeper.values.count < 1000)
    let budget = state.memoryBudget
    #expect(budget.held == keeper.values.reduce(0) { $0 + $1.charge!.bytes })
    #expect(state.memoryInUse + budget.held <= 16 << 20)
    // Lua's own allocations now fail too, and pcall sees the same error.
    #expect(try run("return select(2, pcall(function() local t = {} for i = 1, 1e6 do t[i] = i .. '' end end))", in: state)
      == "not enough memory")
    #expect(try run("return select(2, pcall(keep, big))", in: state) == "not enough memory")
    try run("release()", in: state)
    #expect(budget.held == 0)
    try run("keep(big)", in: state)
    #expect(keeper.values.count == 1)
  }

  @Test func theChargeIsWhatTheCopyTakes() throws {
    let keeper = Keeper()
    let state = try LuaState(memoryLimit: 64 << 20)
    state.register("keep") { call in
      keeper.values.append(try call.chargedValue(1, name: "value"))
      return .none
    }
    try run("keep({ 1, 2.5, 'three', { x = 'y', [10] = true }, name = ('n'):rep(100) }) keep('text') keep(42)", in: state)
    for kept in keeper.values {
      #expect(kept.charge?.bytes == kept.value.estimatedSize)
    }
    #expect(keeper.values.count == 3)
  }

  @Test func withoutALimitNothingIsCharged() throws {
    let state = try LuaState()
    var kept: ChargedValue?
    state.register("keep") { call in
      kept = try call.chargedValue(1)
      return .none
    }
    try run("keep({ 1, 2, 3 })", in: state)
    #expect(kept?.charge == nil)
    #expect(kept?.value == [1, 2, 3])
    #expect(state.memoryBudget.held == 0)
    #expect(try state.memoryBudget.charge(1 << 40) == nil)
  }

  @Test func pushingFromSwiftRespectsTheLimit() throws {
    let state = try LuaState(memoryLimit: 8 << 20)
    let big = LuaValue.table(LuaTable(array: (1...200_000).map { .string(LuaString("item \($0) " + String(repeating: "x", count: 40))) }))
    state.register("fetch") { call in
      try call.push(big)
      return .one
    }
    let error = try failure("local t = fetch()", in: state)
    #expect(error.kind == .memory)
    #expect(error.message == "not enough memory")
    state.collectGarbage()
    #expect(state.memoryInUse < 8 << 20)
    // Outside a host function the push throws, and leaves the state usable.
    #expect(throws: LuaConversionError.self) { try state.push(big) }
    state.top = 0
    state.collectGarbage()
    #expect(try run("return 1 + 1", in: state) == .integer(2))
  }

  @Test func aChargeMayOutliveItsStateAndThread() async throws {
    var budget: LuaMemoryBudget?
    var charge: LuaMemoryCharge?
    do {
      let state = try LuaState(memoryLimit: 1 << 20)
      budget = state.memoryBudget
      charge = try budget?.charge(1000)
      #expect(budget?.held == 1000)
      #expect(throws: LuaError.notEnoughMemory) { try budget?.charge(2 << 20) }
    }
    let held = Mutex(charge)
    charge = nil
    await Task.detached { held.withLock { $0 = nil } }.value
    #expect(budget?.held == 0)
  }
}
