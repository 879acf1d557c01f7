import Foundation
import LuaKit
import Lunar
import TestSupport
import Testing

@testable import LunarLaunches

@Suite struct LaunchesModuleTests {
  func runtime(_ server: TestHTTPServer, start: Double = 1_800_000_000) throws -> Runtime {
    var configuration = RuntimeConfiguration()
    configuration.clock = .virtual(start: start)
    configuration.plugins = [
      LaunchesPlugin(endpoints: ["rocketlaunch.live": server.url + "/rll", "launchlibrary2": server.url + "/ll2"])
    ]
    return try Runtime(configuration)
  }

  func run(_ runtime: Runtime, _ source: String) async throws -> [LuaValue] {
    try await runtime.run(Script(source: .text(source, chunkName: "@test.lua")))
  }

  @Test func aHundredTasksAskingCauseOneRequest() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_003_600)]), delay: 0.02) }
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      local tasks = {}
      for i = 1, 100 do
        tasks[i] = lunar.spawn(function() return #launches.upcoming { source = "rocketlaunch.live" } end)
      end
      local total = 0
      for i = 1, 100 do total = total + tasks[i]:await() end
      return total
      """)
    #expect(results == [100])
    #expect(server.requests.count == 1)
  }

  @Test func theServiceIsThereWithoutTheModule() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(3, 1_800_003_600)])) }
    defer { server.stop() }
    let runtime = try runtime(server)
    _ = try await run(runtime, "return 1")  // never requires lunar.launches
    let schedule = try await runtime.perform { core in core.services.service("launches", as: LaunchSchedule.self) }
    let snapshot = try await #require(schedule).refresh("rocketlaunch.live")
    #expect(snapshot.launches.map(\.id) == ["rll:3"])
  }

  @Test func upcomingGivesLaunchTables() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(7, 1_800_003_600), (8, nil)])) }
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      local list = launches.upcoming { source = "rocketlaunch.live", limit = 5 }
      local first = list[1]
      return #list, first.id, first.name, first.provider, first.planned_time, list[2].planned_time, list[2].date_label,
        launches.next().id, launches.snapshot("rocketlaunch.live").phase
      """)
    #expect(results == [2, "rll:7", "Launch 7", "SpaceX", .number(1_800_003_600), .nil, "Soon", "rll:7", "loaded"])
  }

  @Test func unknownFieldsAreNilAndMissionsDatesAndCountriesAreThere() async throws {
    let bare = ProviderTests.rllItem(
      1, sortDate: "1799000000", t0: NSNull(),
      changes: ["provider": NSNull(), "vehicle": NSNull(), "pad": NSNull(), "date_str": NSNull()], removing: ["missions", "est_date"])
    let whole = ProviderTests.rllItem(2, changes: ["est_date": ["month": 2, "day": NSNull(), "year": 2027]])
    let ll2 = ProviderTests.ll2Item("a", changes: ["pad": ["name": "LC-1A", "country": ["name": "New Zealand", "alpha_3_code": "NZL"]]])
    let (rllFeed, ll2Feed) = (ProviderTests.rllBody([bare, whole]), ProviderTests.ll2Body([ll2]))
    let server = try TestHTTPServer { request in .init(body: request.path == "/rll" ? rllFeed : ll2Feed) }
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      local rll = launches.upcoming { source = "rocketlaunch.live" }
      local ll2 = launches.upcoming { source = "launchlibrary2" }
      local out = {}
      local function add(...) for i = 1, select("#", ...) do out[#out + 1] = tostring((select(i, ...))) end end
      local bare, whole = rll[1], rll[2]
      add(bare.provider, bare.vehicle, bare.pad, bare.country, bare.country_code, bare.planned_time, bare.date_label,
        bare.mission_description, #bare.missions, next(bare.estimated_date))
      add(whole.provider, whole.vehicle, whole.pad, whole.country, whole.country_code, whole.date_label, whole.missions[1].name,
        whole.missions[1].description, whole.mission_description, whole.estimated_date.month, whole.estimated_date.day,
        whole.estimated_date.year, math.type(whole.estimated_date.year))
      add(ll2[1].country, ll2[1].country_code, ll2[1].mission_description, ll2[1].missions[1].name, ll2[1].pad)
      return table.concat(out, "|")
      """)
    #expect(results == [
      .string(LuaString(
        "nil|nil|nil|nil|nil|nil|nil|nil|0|nil|"
          + "SpaceX|Falcon 9|SLC-40, Cape Canaveral SFS, Florida|United States|nil|Jan 05|Mission 2|A mission.|A mission.|2|nil|2027|integer|"
          + "New Zealand|NZL|A mission.|Mission a|LC-1A"))
    ])
  }

  @Test func aMalformedFeedIsAClearLuaError() async throws {
    let wrong = ProviderTests.rllItem(1, changes: ["provider": ["name": 42]])
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    let rllFeed = ProviderTests.rllBody([wrong])
    let server = try TestHTTPServer { request in
      .init(body: request.path == "/rll" ? rllFeed : #"{"results": [], "extra": \#(deep)}"#)
    }
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      local _, rll = pcall(launches.upcoming, { source = "rocketlaunch.live" })
      local _, ll2 = pcall(launches.upcoming, { source = "launchlibrary2" })
      return rll, ll2
      """)
    #expect(results.count == 2)
    #expect(
      results.first?.stringValue
        == "test.lua:2: launches: rocketlaunch.live failed: invalid data: result[0].provider.name: string expected, got number")
    let deepError = try #require(results.last?.stringValue)
    #expect(deepError.hasPrefix("test.lua:3: launches: launchlibrary2 failed: invalid data: not JSON: "), "\(deepError)")
    #expect(deepError.contains("nesting deeper than"), "\(deepError)")
  }

  @Test func failuresAreLuaErrors() async throws {
    let server = try TestHTTPServer { _ in .init(status: 503, body: "{}") }
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      local ok, err = pcall(launches.upcoming, { source = "rocketlaunch.live" })
      local ok2, err2 = pcall(launches.upcoming, { source = "nowhere" })
      return err, err2
      """)
    #expect(results[0].stringValue?.hasSuffix("launches: rocketlaunch.live failed: server error (HTTP 503)") == true)
    #expect(results[1].stringValue?.contains("unknown source 'nowhere'") == true)
  }

  @Test func remindersArriveOnTheRuntimeClock() async throws {
    let server = try TestHTTPServer { _ in .init(body: rllBody([(1, 1_800_007_200)])) }
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      local machine = require "lunar.machine"
      local list = launches.upcoming { source = "rocketlaunch.live" }
      local got = {}
      launches.remind(list[1], 15, function(reminder) got[#got + 1] = reminder.launch.name .. "@" .. lunar.now() end)
      local watcher = machine.new { name = "watch", initial = "waiting", states = {
        waiting = { on = { reminder = function(ctx, msg) return "reminded" end } }, reminded = {},
      } }
      launches.remind(list[1].id, 60, watcher)
      local ok, err = pcall(launches.remind, list[1], 7, print)
      lunar.sleep(7200)
      watcher:settle()
      return got[1], watcher.state, err
      """)
    #expect(results[0] == .string(LuaString("Launch 1@\(1_800_007_200 - 900).0")))
    #expect(results[1] == "reminded")
    #expect(results[2] == "bad argument #2 to 'remind' (5, 15 or 60 minutes expected, got 7)")
  }

  /// A runtime whose launch sources must never be asked (any request fails
  /// the run with an unreachable host).
  func offlineRuntime(sandbox: Bool = false) throws -> Runtime {
    var configuration = RuntimeConfiguration()
    configuration.clock = .virtual(start: 1_800_000_000)
    configuration.sandbox = sandbox
    configuration.plugins = [
      LaunchesPlugin(endpoints: ["rocketlaunch.live": "http://127.0.0.1:1/rll", "launchlibrary2": "http://127.0.0.1:1/ll2"])
    ]
    return try Runtime(configuration)
  }

  @Test func badLimitsAreBadArgumentsNotTraps() async throws {
    let results = try await run(try offlineRuntime(), """
      local launches = require "lunar.launches"
      local messages = {}
      for _, limit in ipairs { -1, math.mininteger, 0/0, 1/0, -1/0, 2.5, "5", 1e300, {}, true } do
        local ok, err = pcall(launches.upcoming, { source = "rocketlaunch.live", limit = limit })
        messages[#messages + 1] = ok and "accepted" or err
      end
      local ok, err = pcall(function() launches.upcoming { limit = -1 } end)
      messages[#messages + 1] = err
      return table.concat(messages, "\\n")
      """)
    let lines = try #require(results.first?.stringValue).split(separator: "\n").map(String.init)
    let shown = ["-1", "-9223372036854775808", "-nan", "inf", "-inf", "2.5", "string", "1e+300", "table", "boolean"]
    #expect(lines.count == shown.count + 1)
    for (line, value) in zip(lines, shown) {
      #expect(line == "bad argument #1 to 'upcoming' (field 'limit' must be a non-negative integer, got \(value))")
    }
    #expect(lines.last == "test.lua:7: bad argument #1 to 'upcoming' (field 'limit' must be a non-negative integer, got -1)")
  }

  @Test func configureChecksItsNumbersAndEndpoints() async throws {
    let results = try await run(try offlineRuntime(), """
      local launches = require "lunar.launches"
      local function message(options) return select(2, pcall(launches.configure, options)) end
      return message { cooldown = -1 }, message { cooldown = 0/0 }, message { cooldown = 1/0 },
        message { endpoints = { nowhere = "http://x" } }, message { samples = true, endpoints = {} }
      """)
    #expect(results == [
      "bad argument #1 to 'lunar.launches.configure' (field 'cooldown' must be a non-negative number of seconds, got -1)",
      "bad argument #1 to 'lunar.launches.configure' (field 'cooldown' must be a non-negative number of seconds, got -nan)",
      "bad argument #1 to 'lunar.launches.configure' (field 'cooldown' must be a non-negative number of seconds, got inf)",
      "bad argument #1 to 'lunar.launches.configure' (field 'endpoints' names an unknown source, 'nowhere' (rocketlaunch.live, launchlibrary2))",
      "bad argument #1 to 'lunar.launches.configure' (give 'samples' or 'endpoints', not both)",
    ])
  }

  /// A server answering every path with one launch whose id is the
  /// path's length (so each endpoint's launches are told apart).
  func pathServer() throws -> TestHTTPServer {
    try TestHTTPServer { request in .init(body: rllBody([(request.path.count, 1_800_007_200)])) }
  }

  @Test func configureKeepsTheEndpointsWhenTheCooldownChanges() async throws {
    let server = try pathServer()
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      launches.configure { endpoints = { ["rocketlaunch.live"] = "\(server.url)/other" } }
      local returned = select("#", launches.configure { cooldown = 5 })
      local first = launches.upcoming { source = "rocketlaunch.live" }[1].id
      launches.upcoming { source = "rocketlaunch.live" }          -- inside the cooldown: no request
      lunar.sleep(6)
      launches.upcoming { source = "rocketlaunch.live" }          -- after it: asks again
      local snapshot = launches.snapshot("rocketlaunch.live")
      return first, snapshot.next_refresh_at - snapshot.fetched_at, returned
      """)
    #expect(results == ["rll:6", .number(5), 0])
    #expect(server.requests.map(\.path) == ["/other", "/other"])
  }

  @Test func configureKeepsTheCooldownWhenAnEndpointChanges() async throws {
    let server = try pathServer()
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      launches.configure { cooldown = 5 }
      launches.configure { endpoints = { ["rocketlaunch.live"] = "\(server.url)/other" } }
      launches.upcoming { source = "rocketlaunch.live" }
      lunar.sleep(6)
      launches.upcoming { source = "rocketlaunch.live" }
      local snapshot = launches.snapshot("rocketlaunch.live")
      return snapshot.next_refresh_at - snapshot.fetched_at
      """)
    #expect(results == [.number(5)])
    #expect(server.requests.map(\.path) == ["/other", "/other"])
  }

  @Test func aNewCooldownKeepsSnapshotsAndReminders() async throws {
    let server = try pathServer()
    defer { server.stop() }
    let runtime = try runtime(server)
    let results = try await run(runtime, """
      local launches = require "lunar.launches"
      local list = launches.upcoming { source = "rocketlaunch.live" }
      local got
      launches.remind(list[1], 15, function(reminder) got = reminder.launch.id end)
      launches.configure { cooldown = 1 }
      local snapshot = launches.snapshot("rocketlaunch.live")
      local kept = { snapshot.phase, snapshot.count, snapshot.next_refresh_at - snapshot.fetched_at,
        #launches.reminders(), launches.next().id }
      lunar.sleep(7200)
      return table.concat(kept, " "), got
      """)
    #expect(results == ["loaded 1 1.0 1 rll:4", "rll:4"])
    #expect(server.requests.count == 1)
    // Swift code using the `launches` service sees the same schedule.
    let schedule = try await runtime.perform { core in core.services.service("launches", as: LaunchSchedule.self) }
    #expect(await schedule?.minimumRefreshInterval == 1)
  }

  @Test func aNewEndpointKeepsTheLaunchesButNotTheCooldown() async throws {
    let server = try pathServer()
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      launches.upcoming { source = "rocketlaunch.live" }
      launches.configure { endpoints = { ["rocketlaunch.live"] = "\(server.url)/elsewhere" } }
      local before = launches.snapshot("rocketlaunch.live")
      local kept = { before.phase, before.count, tostring(before.next_refresh_at), launches.next().id }
      local after = launches.upcoming { source = "rocketlaunch.live" }[1].id
      -- The same endpoint again changes nothing: the cooldown stays.
      launches.configure { endpoints = { ["rocketlaunch.live"] = "\(server.url)/elsewhere" } }
      launches.upcoming { source = "rocketlaunch.live" }
      return table.concat(kept, " "), after
      """)
    #expect(results == ["loaded 1 nil rll:4", "rll:10"])
    #expect(server.requests.map(\.path) == ["/rll", "/elsewhere"])
  }

  @Test func configureDetachesTheRequestInFlight() async throws {
    // The old endpoint answers slowly; the new one at once.
    let server = try TestHTTPServer { request in
      request.path == "/rll" ? .init(body: rllBody([(1, 1_800_007_200)]), delay: 0.3) : .init(body: rllBody([(2, 1_800_007_200)]))
    }
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      local interrupted = lunar.spawn(function() return launches.upcoming { source = "rocketlaunch.live" } end)
      -- Each snapshot call waits on the schedule: the spawned task gets to start its request.
      while launches.snapshot("rocketlaunch.live").phase ~= "loading" do end
      launches.configure { endpoints = { ["rocketlaunch.live"] = "\(server.url)/new" } }
      local fresh = launches.upcoming { source = "rocketlaunch.live" }
      local old = interrupted:await()
      return #old, fresh[1].id, launches.next().id
      """)
    #expect(results == [0, "rll:2", "rll:2"])
    // The old request may be cancelled before it reaches the server.
    #expect(server.requests.map(\.path).filter { $0 != "/rll" } == ["/new"])
  }

  @Test func samplesFalseGoesBackToTheStartingEndpoints() async throws {
    let server = try pathServer()
    defer { server.stop() }
    let results = try await run(try runtime(server), """
      local launches = require "lunar.launches"
      launches.configure { cooldown = 5 }
      launches.configure { samples = true }
      local sample = launches.upcoming { source = "rocketlaunch.live", limit = 1 }[1].id
      launches.configure { samples = false }
      local live = launches.upcoming { source = "rocketlaunch.live" }[1].id
      lunar.sleep(6)
      launches.upcoming { source = "rocketlaunch.live" }
      return sample, live
      """)
    #expect(results == ["rll:5001", "rll:4"])
    #expect(server.requests.map(\.path) == ["/rll", "/rll"])
  }

  @Test func configureAndUpcomingRefuseUnknownFieldsAndBadURLs() async throws {
    let results = try await run(try offlineRuntime(), """
      local launches = require "lunar.launches"
      local function message(f, options) return select(2, pcall(f, options)) end
      return message(launches.configure, { cooldwn = 5 }), message(launches.configure, { 5 }),
        message(launches.configure, { samples = "yes" }),
        message(launches.configure, { endpoints = { ["rocketlaunch.live"] = "ftp://x/feed" } }),
        message(launches.configure, { endpoints = { launchlibrary2 = "" } }),
        message(launches.upcoming, { limt = 3 })
      """)
    #expect(results == [
      "bad argument #1 to 'lunar.launches.configure' (unknown field 'cooldwn' (fields are endpoints, samples, cooldown))",
      "bad argument #1 to 'lunar.launches.configure' (unknown field [1] (fields are endpoints, samples, cooldown))",
      "bad argument #1 to 'lunar.launches.configure' (field 'samples' must be a boolean, got string)",
      "bad argument #1 to 'lunar.launches.configure' (endpoints['rocketlaunch.live'] must be an http(s):// or file:// URL, got 'ftp://x/feed')",
      "bad argument #1 to 'lunar.launches.configure' (endpoints['launchlibrary2'] must be an http(s):// or file:// URL, got '')",
      "bad argument #1 to 'upcoming' (unknown field 'limt' (fields are source, limit))",
    ])
  }

  @Test func theShippedSamplesWorkOfflineEvenInTheSandbox() async throws {
    let results = try await run(try offlineRuntime(sandbox: true), """
      local launches = require "lunar.launches"
      launches.configure { samples = true }
      local list = launches.upcoming { source = "rocketlaunch.live", limit = 3 }
      return #list, list[1].id
      """)
    #expect(results == [3, "rll:5001"])
  }

  @Test func theSandboxRefusesFileEndpointsFromTheScript() async throws {
    let results = try await run(try offlineRuntime(sandbox: true), """
      local launches = require "lunar.launches"
      return select(2, pcall(launches.configure, { endpoints = { ["launchlibrary2"] = "file:///etc/passwd" } }))
      """)
    #expect(results == ["bad argument #1 to 'lunar.launches.configure' (endpoints['launchlibrary2'] is a local file, refused under --sandbox)"])
  }
}
