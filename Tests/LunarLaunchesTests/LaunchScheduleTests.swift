import Foundation
import LuaKit
import Lunar
import Synchronization
import TestSupport
import Testing

@testable import LunarLaunches

/// A clock tests move by hand.
final class ManualClock: Sendable {
  private let time = Mutex<Double>(1_800_000_000)
  var now: Double { time.withLock { $0 } }
  func advance(_ seconds: Double) { time.withLock { $0 += seconds } }
  var reading: @Sendable () -> Double { { self.now } }
}

/// A RocketLaunch.Live response with launches at the given exact times
/// (nil: an estimate), named by their ids.
func rllBody(_ launches: [(id: Int, t0: Double?)]) -> String {
  let items = launches.map { launch -> String in
    let t0 = launch.t0.map { "\"\(iso($0))\"" } ?? "null"
    let sort = Int(launch.t0 ?? 1_900_000_000)
    return """
      {"id": \(launch.id), "name": "Launch \(launch.id)", "sort_date": "\(sort)", "provider": {"name": "SpaceX"},
       "vehicle": {"name": "Falcon 9"}, "pad": {"name": "SLC-40", "location": {"name": "Cape Canaveral", "country": "United States"}},
       "missions": [{"name": "Mission \(launch.id)"}], "launch_description": "", "t0": \(t0), "win_open": null, "win_close": null,
       "est_date": {"month": null, "day": null, "year": null, "quarter": null}, "date_str": "Soon", "slug": "launch-\(launch.id)"}
      """
  }
  return #"{"valid_auth": false, "count": \#(launches.count), "limit": 5, "total": 5, "last_page": 1, "result": [\#(items.joined(separator: ","))]}"#
}

/// "2027-01-15T12:30Z"-style time, as RocketLaunch.Live writes it.
func iso(_ epoch: Double) -> String {
  let formatter = DateFormatter()
  formatter.locale = Locale(identifier: "en_US_POSIX")
  formatter.timeZone = TimeZone(identifier: "UTC")
  formatter.dateFormat = "yyyy-MM-dd'T'HH:mm'Z'"
  return formatter.string(from: Date(timeIntervalSince1970: epoch))
}

@Suite struct LaunchScheduleTests {
  let clock = ManualClock()

  func schedule(_ server: TestHTTPServer, second: TestHTTPServer? = nil, cooldown: Double = 60) -> LaunchSchedule {
    var providers: [any LaunchProvider] = [RocketLaunchLiveProvider(endpoint: server.url + "/rll")]
    if let second { providers.append(LaunchLibrary2Provider(endpoint: second.url + "/ll2")) }
    return LaunchSchedule(providers: providers, minimumRefreshInterval: cooldown, now: clock.reading)
  }

  @Test func creatingItFetchesNothing() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)])) }
    defer { server.stop() }
    let schedule = schedule(server)
    #expect(await schedule.snapshot("rocketlaunch.live").phase == .idle)
    try await Task.sleep(for: .milliseconds(20))
    #expect(server.requests.isEmpty)
  }

  @Test func concurrentRefreshesShareOneRequest() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)]), delay: 0.05) }
    defer { server.stop() }
    let schedule = schedule(server)
    try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<10 { group.addTask { try await schedule.refresh("rocketlaunch.live").launches.count } }
      for try await count in group { #expect(count == 1) }
    }
    #expect(server.requests.count == 1)
  }

  @Test func theCooldownAnswersWithoutARequest() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)])) }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 60)
    _ = try await schedule.refresh("rocketlaunch.live")
    clock.advance(30)
    let inside = try await schedule.refresh("rocketlaunch.live")
    #expect(server.requests.count == 1)
    #expect(inside.nextRefreshAllowedAt == 1_800_000_060)
    clock.advance(31)
    _ = try await schedule.refresh("rocketlaunch.live")
    #expect(server.requests.count == 2)
  }

  @Test func aNewCooldownCountsFromTheLastFetch() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)])) }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 60)
    _ = try await schedule.refresh("rocketlaunch.live")
    await schedule.setMinimumRefreshInterval(10)
    #expect(await schedule.snapshot("rocketlaunch.live").nextRefreshAllowedAt == 1_800_000_010)
    clock.advance(11)
    let again = try await schedule.refresh("rocketlaunch.live")
    #expect(server.requests.count == 2)
    #expect(again.nextRefreshAllowedAt == 1_800_000_021)
  }

  @Test func aFailedFetchStartsTheCooldownToo() async throws {
    let server = try TestHTTPServer { _ in .init(status: 500, body: "{}") }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 60)
    for _ in 0..<3 {
      let snapshot = try await schedule.refresh("rocketlaunch.live")
      #expect(snapshot.phase == .failed(.server(code: 500)))
      #expect(snapshot.nextRefreshAllowedAt == 1_800_000_060)
    }
    #expect(server.requests.count == 1, "three refreshes against a failing server make one request")
    clock.advance(60)
    _ = try await schedule.refresh("rocketlaunch.live")
    #expect(server.requests.count == 2)
  }

  @Test func theCooldownCountsFromTheStartOfTheRequest() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)]), hold: true) }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 60)
    let waiter = Task { try await schedule.refresh("rocketlaunch.live") }
    while server.requests.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
    #expect(await schedule.snapshot("rocketlaunch.live").nextRefreshAllowedAt == 1_800_000_060)
    clock.advance(30)
    server.release()
    let snapshot = try await waiter.value
    #expect(snapshot.fetchedAt == 1_800_000_030)
    #expect(snapshot.nextRefreshAllowedAt == 1_800_000_060, "60 s after the request started, not after it finished")
    // Joining is never blocked by the cooldown the request itself started.
    clock.advance(29)
    _ = try await schedule.refresh("rocketlaunch.live")
    #expect(server.requests.count == 1)
  }

  @Test func aNewProviderDetachesTheRequestInFlight() async throws {
    let old = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)]), delay: 0.3) }
    let new = try TestHTTPServer { _ in .init(body: rllBody([(2, 1_800_003_600)])) }
    defer {
      old.stop()
      new.stop()
    }
    let schedule = schedule(old)
    let waiter = Task { try await schedule.refresh("rocketlaunch.live") }
    while old.requests.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
    try await schedule.replaceProvider(RocketLaunchLiveProvider(endpoint: new.url + "/rll"))
    // Asked while the old request is still in flight, the next refresh
    // asks the new endpoint instead of joining the old request.
    let next = try await schedule.refresh("rocketlaunch.live")
    #expect(next.launches.map(\.id) == ["rll:2"], "the next refresh asks the new endpoint")
    // The detached request's waiter has the snapshot from before it, without
    // a cooldown: never the old endpoint's launches.
    #expect(try await waiter.value == LaunchSchedule.Snapshot())
    #expect(new.requests.count == 1)
    while await schedule.droppedCompletions == 0 { await Task.yield() }
    #expect(await schedule.snapshot("rocketlaunch.live") == next, "the old request's completion was dropped")
    await #expect(throws: LaunchSchedule.ScheduleError.unknownSource("launchlibrary2")) {
      try await schedule.replaceProvider(LaunchLibrary2Provider(endpoint: new.url))
    }
  }

  @Test func oneWaiterCancellingDoesNotCancelTheOthers() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)]), hold: true) }
    defer { server.stop() }
    let schedule = schedule(server)
    let staying = Task { try await schedule.refresh("rocketlaunch.live") }
    let leaving = Task { try await schedule.refresh("rocketlaunch.live") }
    while server.requests.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
    leaving.cancel()
    await #expect(throws: CancellationError.self) { try await leaving.value }
    server.release()
    let snapshot = try await staying.value
    #expect(snapshot.phase == .loaded)
    #expect(snapshot.launches.map(\.id) == ["rll:1"])
    #expect(server.requests.count == 1)
  }

  @Test func theLastWaiterLeavingCancelsAndRestoresTheSnapshot() async throws {
    let slow = Mutex(false)
    let server = try TestHTTPServer { _ in
      slow.withLock { $0 } ? .init(body: rllBody([(2, 1_800_007_200)]), hold: true) : .init(body: rllBody([(1, 1_800_003_600)]))
    }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 10)
    let before = try await schedule.refresh("rocketlaunch.live")
    clock.advance(11)
    slow.withLock { $0 = true }
    let waiter = Task { try await schedule.refresh("rocketlaunch.live") }
    while server.requests.count < 2 { try await Task.sleep(for: .milliseconds(2)) }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(await schedule.snapshot("rocketlaunch.live") == before, "restored exactly, cooldown included")
    #expect(before.nextRefreshAllowedAt == 1_800_000_010)
    // The cancelled request's own cooldown went with it: the next refresh asks again.
    slow.withLock { $0 = false }
    let again = try await schedule.refresh("rocketlaunch.live")
    #expect(server.requests.count == 3)
    #expect(again.nextRefreshAllowedAt == 1_800_000_021)
    server.release()
  }

  @Test func theLastWaiterLeavingRestoresAFailedSnapshotAndItsCooldown() async throws {
    let failing = Mutex(true)
    let server = try TestHTTPServer { _ in
      failing.withLock { $0 } ? .init(status: 503, body: "{}") : .init(body: rllBody([(2, 1_800_007_200)]), hold: true)
    }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 10)
    let before = try await schedule.refresh("rocketlaunch.live")
    #expect(before.phase == .failed(.server(code: 503)) && before.nextRefreshAllowedAt == 1_800_000_010)
    clock.advance(10)
    failing.withLock { $0 = false }
    let first = Task { try await schedule.refresh("rocketlaunch.live") }
    let second = Task { try await schedule.refresh("rocketlaunch.live") }
    while server.requests.count < 2 { try await Task.sleep(for: .milliseconds(2)) }
    first.cancel()
    await #expect(throws: CancellationError.self) { try await first.value }
    #expect(await schedule.snapshot("rocketlaunch.live").phase == .loading, "another waiter still wants it")
    second.cancel()
    await #expect(throws: CancellationError.self) { try await second.value }
    #expect(await schedule.snapshot("rocketlaunch.live") == before)
    server.release()
  }

  @Test func aCancelledCallerStartsNoRequest() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)])) }
    defer { server.stop() }
    let schedule = schedule(server)
    let task = Task {
      while !Task.isCancelled { await Task.yield() }
      return try await schedule.refresh("rocketlaunch.live")
    }
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(await schedule.snapshot("rocketlaunch.live") == LaunchSchedule.Snapshot())
    #expect(server.requests.isEmpty)
  }

  @Test func aStaleCompletionNeverOverwritesANewerOne() async throws {
    let calls = Mutex(0)
    let server = try TestHTTPServer { _ in
      let call = calls.withLock { $0 += 1; return $0 }
      // The first request is slow and answers with old data; the second is quick.
      return call == 1 ? .init(body: rllBody([(1, 1_800_003_600)]), delay: 0.2) : .init(body: rllBody([(2, 1_800_007_200)]))
    }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 0)
    let first = Task { try await schedule.refresh("rocketlaunch.live") }
    while server.requests.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
    first.cancel()
    _ = try? await first.value
    let second = try await schedule.refresh("rocketlaunch.live")
    #expect(second.launches.map(\.id) == ["rll:2"])
    try await Task.sleep(for: .milliseconds(300))
    #expect(await schedule.snapshot("rocketlaunch.live").launches.map(\.id) == ["rll:2"])
  }

  @Test func sourcesRefreshIndependently() async throws {
    let good = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)])) }
    let bad = try TestHTTPServer { _ in .init(status: 500, body: "{}") }
    defer {
      good.stop()
      bad.stop()
    }
    let schedule = schedule(good, second: bad)
    _ = try await schedule.refresh("rocketlaunch.live")
    let failed = try await schedule.refresh("launchlibrary2")
    #expect(failed.phase == .failed(.server(code: 500)))
    #expect(await schedule.snapshot("rocketlaunch.live").phase == .loaded)
    #expect(await schedule.nextLaunch()?.id == "rll:1")
  }

  @Test func aFailedSourceKeepsItsOldLaunches() async throws {
    let failing = Mutex(false)
    let server = try TestHTTPServer { _ in
      failing.withLock { $0 } ? .init(status: 503, body: rllBody([(9, 1_800_009_000)])) : .init(body: rllBody([(1, 1_800_003_600)]))
    }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 0)
    _ = try await schedule.refresh("rocketlaunch.live")
    failing.withLock { $0 = true }
    let snapshot = try await schedule.refresh("rocketlaunch.live")
    #expect(snapshot.phase == .failed(.server(code: 503)))
    #expect(snapshot.launches.map(\.id) == ["rll:1"])
  }

  @Test func theNextLaunchMovesWithTheClock() async throws {
    let server = try TestHTTPServer { _ in
      .init(body: rllBody([(1, 1_800_000_600), (2, 1_800_003_600), (3, nil)]))
    }
    defer { server.stop() }
    let schedule = schedule(server)
    _ = try await schedule.refresh("rocketlaunch.live")
    #expect(await schedule.nextLaunch()?.id == "rll:1")
    clock.advance(601)
    #expect(await schedule.nextLaunch()?.id == "rll:2", "a launch whose time has passed is never next")
    clock.advance(3600)
    #expect(await schedule.nextLaunch()?.id == "rll:3", "then one with an unknown time")
    #expect(server.requests.count == 1)
  }

  @Test func remindersFollowTheirRules() async throws {
    let moved = Mutex(false)
    let server = try TestHTTPServer { _ in
      moved.withLock { $0 }
        ? .init(body: rllBody([(1, 1_800_007_200), (2, nil)]))
        : .init(body: rllBody([(1, 1_800_003_600), (2, 1_800_007_200), (3, nil), (4, 1_800_000_120)]))
    }
    defer { server.stop() }
    let schedule = schedule(server, cooldown: 0)
    _ = try await schedule.refresh("rocketlaunch.live")
    await #expect(throws: ReminderError.invalidOffset(10)) { try await schedule.remind("rll:1", minutesBefore: 10) }
    await #expect(throws: ReminderError.noExactTime("Launch 3")) { try await schedule.remind("rll:3", minutesBefore: 5) }
    await #expect(throws: ReminderError.tooLate("Launch 4")) { try await schedule.remind("rll:4", minutesBefore: 5) }
    await #expect(throws: ReminderError.unknownLaunch("rll:99")) { try await schedule.remind("rll:99", minutesBefore: 5) }
    let first = try await schedule.remind("rll:1", minutesBefore: 15)
    let second = try await schedule.remind("rll:2", minutesBefore: 60)
    #expect(first.dueAt == Double(1_800_003_600 - 900))
    moved.withLock { $0 = true }
    _ = try await schedule.refresh("rocketlaunch.live")
    let reminders = await schedule.reminders
    #expect(reminders.first { $0.id == first.id }?.dueAt == Double(1_800_007_200 - 900), "moved with the launch")
    #expect(reminders.first { $0.id == second.id }?.state == .failed("the launch no longer has an exact time"))
    clock.advance(7_200)
    #expect(await schedule.takeDueReminders().map(\.id) == [first.id])
  }

  @Test func atMostFiftyRemindersArePending() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_900_000)])) }
    defer { server.stop() }
    let schedule = schedule(server)
    _ = try await schedule.refresh("rocketlaunch.live")
    for _ in 0..<50 { _ = try await schedule.remind("rll:1", minutesBefore: 5) }
    await #expect(throws: ReminderError.tooMany(limit: 50)) { try await schedule.remind("rll:1", minutesBefore: 5) }
  }
}
