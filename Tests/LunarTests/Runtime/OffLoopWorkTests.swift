import LuaKit
import Synchronization
import Testing

@testable import Lunar

/// An `OffLoopWork` whose results the test serves itself, playing the loop:
/// each result posted waits in a stream until the test takes it, so the
/// test decides what happens between a result's arrival and its delivery.
private struct TestLoop {
  typealias Event = @Sendable (OffLoopWork) -> Void

  let work: OffLoopWork
  private let posts = PostCount()
  private var events: AsyncStream<Event>.Iterator

  init() {
    let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
    let posts = self.posts
    work = OffLoopWork(post: { event in
      posts.add()
      continuation.yield(event)
      return true
    })
    events = stream.makeAsyncIterator()
  }

  /// How many results have been posted so far.
  var posted: Int { posts.value }

  /// The next result posted, once it is (not yet delivered).
  mutating func nextResult() async -> Event {
    await events.next()!
  }

  /// Takes the next result posted and delivers it, as the loop would.
  mutating func serveNext() async {
    let event = await nextResult()
    event(work)
  }
}

/// An async function whose work ignores cancellation: it ends only when
/// the test opens the gate.
private struct StubbornPlugin: LunarPlugin {
  let name = "stubborn"
  let gate: Gate

  func install(in runtime: RuntimeCore) throws {
    var module = LuaModule("stubborn")
    let gate = self.gate
    module.asyncFunction("wait") { _ in
      await gate.wait()
      return .nil
    }
    try runtime.install(module)
  }
}

/// How many results were posted, counted on whichever thread posts them.
private final class PostCount: Sendable {
  private let count = Mutex(0)
  func add() { count.withLock { $0 += 1 } }
  var value: Int { count.withLock { $0 } }
}

@Suite struct OffLoopWorkTests {
  @Test func aResultIsDeliveredOnceAndCountedUntilThen() async {
    var loop = TestLoop()
    var delivered: [Int] = []
    loop.work.start({ 7 }) { delivered.append($0) }
    #expect(loop.work.count == 1)
    let result = await loop.nextResult()
    #expect(delivered.isEmpty && loop.work.count == 1, "the result waits for the loop to take it")
    result(loop.work)
    #expect(delivered == [7] && loop.work.count == 0)
    // The same result posted twice is still delivered once.
    result(loop.work)
    #expect(delivered == [7] && loop.work.count == 0)
  }

  @Test func cancellingBeforeTheResultArrivesDropsIt() async {
    var loop = TestLoop()
    let gate = Gate()
    var delivered = 0
    let ticket = loop.work.start({ await gate.wait() }) { delivered += 1 }
    loop.work.cancel(ticket)
    #expect(loop.work.count == 0 && !loop.work.isRunning(ticket))
    gate.open()
    await loop.serveNext()
    #expect(delivered == 0 && loop.work.count == 0)
  }

  @Test func cancellingAfterTheResultWasPostedDropsIt() async {
    var loop = TestLoop()
    var delivered = 0
    let ticket = loop.work.start({ 1 }) { _ in delivered += 1 }
    let result = await loop.nextResult()
    loop.work.cancel(ticket)
    #expect(loop.work.count == 0)
    result(loop.work)
    #expect(delivered == 0 && loop.work.count == 0)
  }

  @Test func cancellingTwiceCountsOnce() async {
    var loop = TestLoop()
    let gate = Gate()
    var delivered: [String] = []
    let first = loop.work.start({ await gate.wait(); return "first" }) { delivered.append($0) }
    loop.work.start({ await gate.wait(); return "second" }) { delivered.append($0) }
    loop.work.cancel(first)
    loop.work.cancel(first)
    #expect(loop.work.count == 1)
    gate.open()
    await loop.serveNext()
    await loop.serveNext()
    #expect(delivered == ["second"] && loop.work.count == 0)
  }

  @Test func aRequestedCancellationStillDeliversWhenTheWorkEnds() async {
    var loop = TestLoop()
    let gate = Gate()
    var sawCancellation: Bool?
    let ticket = loop.work.start({
      await withTaskCancellationHandler { await gate.wait() } onCancel: { gate.open() }
      return Task.isCancelled
    }) { sawCancellation = $0 }
    loop.work.requestCancellation(ticket)
    #expect(loop.work.count == 1 && loop.work.isRunning(ticket), "still in flight until the work has stopped")
    await loop.serveNext()
    #expect(sawCancellation == true && loop.work.count == 0)
  }

  @Test func aResultReadyAtOnceIsReturnedWithoutATicket() async throws {
    let loop = TestLoop()
    let state = try LuaState()
    var askedForDelivery = false
    let start = loop.work.startImmediately(holding: state.memoryBudget, { 5 }) { _ in
      askedForDelivery = true
      return { _ in }
    }
    guard case .finished(let result) = start else {
      Issue.record("expected the result at once, got \(start)")
      return
    }
    #expect(try result.get().value == 5)
    #expect(!askedForDelivery && loop.work.count == 0 && loop.posted == 0)
  }

  @Test func immediateWorkThatSuspendsIsDeliveredLater() async throws {
    var loop = TestLoop()
    let state = try LuaState(memoryLimit: 1 << 20)
    let gate = Gate()
    var deliveries = 0
    var delivered: [LuaValue] = []
    var heldWhenDelivered = 0
    let start = loop.work.startImmediately(holding: state.memoryBudget, {
      await gate.wait()
      return "nine"
    }) { _ in
      deliveries += 1
      return { result in
        heldWhenDelivered = state.memoryBudget.held
        delivered.append((try? result.get().value) ?? .nil)
      }
    }
    guard case .running(let ticket) = start else {
      Issue.record("expected the work to suspend, got \(start)")
      return
    }
    #expect(deliveries == 1 && loop.work.count == 1 && loop.work.isRunning(ticket))
    gate.open()
    await loop.serveNext()
    #expect(delivered == ["nine"] && loop.work.count == 0 && loop.posted == 1)
    // The value was charged while it travelled, and is no longer.
    #expect(heldWhenDelivered > 0 && state.memoryBudget.held == 0)
  }

  /// Cancels race with results arriving: each piece of work is delivered
  /// exactly once unless cancelled while in flight, never after that, and
  /// the count is always the work neither delivered nor cancelled.
  @Test func cancelsRacingResultsKeepTheCountRight() async {
    var loop = TestLoop()
    let n = 300
    var delivered = [Int](repeating: 0, count: n)
    var tickets: [OffLoopWork.Ticket] = []
    for i in 0..<n {
      tickets.append(
        loop.work.start({
          for _ in 0..<(i % 7) { await Task.yield() }
          return i
        }) { delivered[$0] += 1 })
    }
    var cancelledInFlight = Set<Int>()
    var settled = Set<Int>()
    func cancel(_ i: Int) {
      if loop.work.isRunning(tickets[i]) {
        cancelledInFlight.insert(i)
        settled.insert(i)
      }
      loop.work.cancel(tickets[i])
    }
    for i in stride(from: 0, to: n, by: 3) { cancel(i) }
    for served in 0..<n {
      await loop.serveNext()
      // Cancel one more while results are still arriving: before or after
      // its own, whichever comes first.
      cancel((served * 5 + 1) % n)
      for i in 0..<n where delivered[i] > 0 { settled.insert(i) }
      #expect(loop.work.count == n - settled.count)
    }
    #expect(loop.work.count == 0)
    for i in 0..<n {
      #expect(delivered[i] == (cancelledInFlight.contains(i) ? 0 : 1), "work \(i)")
    }
  }

  // MARK: In a runtime

  /// A cancelled wait for Swift work no longer counts as work in flight:
  /// the loop then sees the deadlock instead of sleeping for a result that
  /// will never be taken.
  @Test func aCancelledWaitNoLongerHoldsOffTheDeadlock() async throws {
    let gate = Gate()
    defer { gate.open() }
    let lua = try TestRuntime(clock: .virtual(start: 0)) {
      $0.plugins = [StubbornPlugin(gate: gate)]
      // A guard only: a hang fails the test as a timeout, not a deadlock.
      $0.timeout = 30
    }
    let failure = await lua.failure("""
      local stubborn = require 'stubborn'
      local t = lunar.spawn(function() stubborn.wait() end)
      lunar.sleep(0)
      t:cancel()
      lunar.sleep(math.huge)
      """)
    // The main chunk is told, as a Lua error where it waits.
    let message = failure?.luaMessage ?? "\(String(describing: failure))"
    #expect(message.hasPrefix("deadlock: every task is waiting and nothing can wake them\n"), "\(message)")
    #expect(message.contains("main chunk waits for sleep forever at test.lua:5"), "\(message)")
  }

  /// Work in flight is not a deadlock: the loop sleeps until its result
  /// arrives, for each way Lua waits for Swift work.
  @Test func workInFlightIsWaitedFor() async throws {
    let lua = try TestRuntime(clock: .virtual(start: 0)) { $0.plugins = [GreeterPlugin()] }
    let results = try await lua.run("""
      local g = require 'greeter'
      local t = lunar.spawn(function() return g.later(3) end)
      return g.later(1), t:await()
      """)
    #expect(results == [1, 3])
  }

  /// A Swift queue job cancelled while it runs ends when its work has
  /// stopped, not before: the next job starts only then.
  @Test func aRunningSwiftJobEndsWhenItsWorkStops() async throws {
    let lua = try TestRuntime(clock: .real) { $0.plugins = [SwiftJobsPlugin()] }
    let results = try await lua.run("""
      local queue, jobs = require 'lunar.queue', require 'swiftjobs'
      local q = queue.new('q')
      local job = jobs.submit(q, 'x')
      local after = q:submit(function() return job:status() end)
      job:cancel()
      return job:status(), after:await()
      """)
    #expect(results == ["running", "cancelled"])
  }
}
