import Foundation
import Testing

@testable import Lunar

@Suite struct BlockingHandoffTests {
  @Test func aValuePutFirstIsTakenAtOnce() {
    let handoff = BlockingHandoff<[String]>()
    handoff.put(["ready"])
    #expect(handoff.take() == ["ready"])
  }

  @Test func takeWaitsForAValueFromAnotherThread() throws {
    let handoff = BlockingHandoff<Result<Int, RunFailure>>()
    // A thread of its own, not the cooperative pool: it never waits on us.
    Thread.detachNewThread { handoff.put(.success(42)) }
    #expect(try handoff.take().get() == 42)
  }
}
