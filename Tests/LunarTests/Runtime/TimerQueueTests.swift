import CLuaShim
import Foundation
import LuaKit
import Testing

@testable import Lunar

@Suite struct TimerQueueTests {
  @Test func timersFireInDeadlineOrderThenInOrderSet() {
    let timers = TimerQueue()
    var fired: [String] = []
    timers.schedule(at: 2) { fired.append("b") }
    timers.schedule(at: 1) { fired.append("a") }
    timers.schedule(at: 2) { fired.append("c") }
    while let fire = timers.popDue(at: 5) { fire() }
    #expect(fired == ["a", "b", "c"])
  }

  @Test func aDeadlineThatNeverComesIsNotKept() {
    let timers = TimerQueue()
    let never = timers.schedule(at: .infinity) { Issue.record("fired") }
    timers.schedule(at: .nan) { Issue.record("fired") }
    #expect(timers.nextDeadline == nil, "the loop must not wait for it or advance virtual time to it")
    #expect(timers.isEmpty)
    #expect(timers.popDue(at: .infinity) == nil)
    timers.cancel(never)
    timers.schedule(at: 3) {}
    #expect(timers.nextDeadline == 3)
  }

  @Test func cancellingATimerThatFiredLeavesTheNextOneAlone() {
    let timers = TimerQueue()
    var fired: [Int] = []
    let first = timers.schedule(at: 1) { fired.append(1) }
    timers.popDue(at: 1)?()
    timers.cancel(first)
    timers.schedule(at: 2) { fired.append(2) }
    timers.popDue(at: 2)?()
    #expect(fired == [1, 2])
  }

  @Test func deadlinesSaturateAtTheClocksHorizon() {
    let clock = RuntimeClock(.virtual(start: 1000))
    #expect(clock.deadline(after: 5) == 1005)
    #expect(clock.deadline(after: 1e16) == .infinity)
    #expect(clock.deadline(after: 1e300) == .infinity)
    #expect(clock.deadline(after: Double(Int64.max)) == .infinity)
    #expect(clock.deadline(after: .infinity) == .infinity)
    clock.advance(to: 1e300)
    #expect(clock.now == RuntimeClock.horizon, "virtual time stops at the horizon")
  }

  @Test func traceTimesAreFormattedForAnyClockReading() {
    #expect(TextTraceSink.formatTime(0.05) == "[   0.050]")
    #expect(TextTraceSink.formatTime(1234.5678) == "[1234.568]")
    #expect(TextTraceSink.formatTime(1e16) == "[   1e+16]")
    #expect(TextTraceSink.formatTime(RuntimeClock.horizon) == "[9.007199254741e+15]")
    #expect(TextTraceSink.formatTime(.infinity) == "[     inf]")
  }

  @Test func aHugeWaitOnTheWakeupSleepsUntilWoken() throws {
    // Before, the timespec deadline overflowed into the past: the wait
    // returned at once as a timeout and the loop spun.
    let state = try LuaState()
    let address = Int(bitPattern: state.L)
    let waker = Thread {
      usleep(50_000)
      lunar_wake(OpaquePointer(bitPattern: address))
    }
    waker.start()
    #expect(lunar_sleep(state.L, 1e300) == 1)
  }
}
