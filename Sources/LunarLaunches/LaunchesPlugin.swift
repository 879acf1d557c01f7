import LuaKit
import Lunar

/// `lunar.launches`: the launch schedule from Lua, a thin binding over
/// `LaunchSchedule`.
///
/// ```lua
/// local launches = require "lunar.launches"
/// for _, l in ipairs(launches.upcoming { source = "rocketlaunch.live", limit = 5 }) do
///   print(l.name, l.provider or "?", l.planned_time or l.date_label)
/// end
/// print(launches.next().name)
/// ```
public struct LaunchesPlugin: LunarPlugin {
  public let name = "lunar.launches"
  /// Endpoint per source; `LUNAR_LAUNCHES_RLL_URL` / `LUNAR_LAUNCHES_LL2_URL`
  /// override the live APIs when not given here. `http(s)://` URLs are
  /// fetched; `file://` URLs are read by Lunar itself.
  public var endpoints: [String: String]
  /// The cooldown between fetches of one source.
  public var minimumRefreshInterval: Double

  public init(endpoints: [String: String] = [:], minimumRefreshInterval: Double = 60) {
    self.endpoints = endpoints
    self.minimumRefreshInterval = minimumRefreshInterval
  }

  /// Registers the `launches` service, so Swift interpreters and actions
  /// find it whether or not a script requires the module; the schedule is
  /// built when the service or the module is first used, so a run that
  /// never asks for launches does not pay for it at start-up. The Lua
  /// module is described on its first `require`. `launches.configure`
  /// changes this one schedule in place, so the service stays current.
  public func install(in runtime: RuntimeCore) throws {
    let http = runtime.component(ActionSystem.self).http
    let defaults = FeedDefaults(endpoints: endpoints, environment: runtime.configuration.environment)
    let makeProvider: @Sendable (String, LaunchFeedLocation) -> any LaunchProvider = { source, location in
      source == "launchlibrary2"
        ? LaunchLibrary2Provider(location: location, http: http) : RocketLaunchLiveProvider(location: location, http: http)
    }
    let (minimumRefreshInterval, now) = (minimumRefreshInterval, runtime.clock.sendableNow)
    let schedule = LazyService {
      let locations = defaults.locations
      return LaunchSchedule(
        providers: ["rocketlaunch.live", "launchlibrary2"].map { makeProvider($0, locations[$0]!) },
        minimumRefreshInterval: minimumRefreshInterval, now: now)
    }
    runtime.services.register("launches", schedule)
    runtime.install(moduleNamed: name) { runtime in
      module(runtime, schedule: schedule.value, feeds: FeedLocations(defaults.locations), makeProvider: makeProvider)
    }
  }

  /// The module, with its reminders, over `schedule`; `configure` gives a
  /// source a new provider from `makeProvider` when its location changes.
  private func module(
    _ runtime: RuntimeCore, schedule: LaunchSchedule, feeds: FeedLocations,
    makeProvider: @escaping @Sendable (String, LaunchFeedLocation) -> any LaunchProvider
  ) -> LuaModule {
    let reminders = ReminderDelivery(schedule: schedule, core: runtime)
    runtime.retain(reminders)
    let sandboxed = runtime.configuration.sandbox

    var module = LuaModule("lunar.launches")
    module.value("sources", .table(LuaTable(array: schedule.sources.map { .string(LuaString($0)) })))

    // launches.configure{ endpoints = { [source] = url }, samples = true|false, cooldown = seconds }:
    // changes only what it is given; snapshots and reminders stay.
    module.function("configure") { [unowned runtime] call in
      let value = call.isNil(1) ? LuaValue.nil : try call.value(1, name: "options")
      let options = try ConfigureOptions(value, known: schedule.sources, defaults: feeds.defaults, sandboxed: sandboxed)
      let changed = options.locations.filter { feeds.current[$0.key] != $0.value }
      feeds.current.merge(changed) { $1 }
      let providers = changed.keys.sorted().map { makeProvider($0, changed[$0]!) }
      let cooldown = options.cooldown
      if providers.isEmpty && cooldown == nil { return .none }
      // The caller waits until the schedule has changed (so its next call
      // sees the change); configure returns no values.
      let wait = Wait(subject: "launches configuration")
      runtime.afterAsync({
        if let cooldown { await schedule.setMinimumRefreshInterval(cooldown) }
        // Cannot throw: the options named only the schedule's own sources.
        for provider in providers { try? await schedule.replaceProvider(provider) }
        return .nil
      }) { [unowned runtime] _ in runtime.scheduler.complete(wait, .nothing) }
      return runtime.scheduler.suspend(call, on: wait)
    }

    // check_upcoming(options) -> nil, or what is wrong with them (for the
    // Lua wrapper below, which raises it in the caller's name and place)
    module.hostFunction("check_upcoming") { call in
      let options = call.type(1) == .table ? try call.value(1, name: "options") : .nil
      do throws(LuaArgumentError) {
        if !call.isNil(1) && call.type(1) != .table { throw .type(1, expected: "table") }
        _ = try UpcomingOptions(options, known: schedule.sources)
        call.pushNil()
      } catch {
        call.push(error.message ?? "\(error.expected ?? "table") expected, got \(call.type(1).name)")
      }
      return .one
    }

    // launches.upcoming{ source =, limit = } -> { launch, ... } (refreshes first)
    module.function("upcoming") { [unowned runtime] call in
      let options = try UpcomingOptions(call.isNil(1) ? .nil : try call.value(1, name: "options"), known: schedule.sources)
      let (sources, limit) = (options.sources, options.limit)
      return runtime.suspend(call, awaiting: "launches from \(sources.joined(separator: ", "))") {
        var all: [Launch] = []
        for source in sources {
          let snapshot = try await schedule.refresh(source)
          if case .failed(let error) = snapshot.phase { throw LuaScriptError("launches: \(source) failed: \(error)") }
          all += snapshot.launches
        }
        all.sort { $0.sortTime < $1.sortTime }
        return .table(LuaTable(array: all.prefix(limit).map(Self.table)))
      }
    }

    // launches.next() -> the next launch, or nil (no fetch)
    module.function("next") { [unowned runtime] call in
      return runtime.suspend(call, awaiting: "next launch") {
        await schedule.nextLaunch().map(Self.table) ?? .nil
      }
    }

    // launches.snapshot(source) -> { phase =, fetched_at =, requested_at =, next_refresh_at =, count =, error = }
    module.function("snapshot") { [unowned runtime] call in
      // An unknown source has an empty snapshot, as the schedule gives it.
      let source = Self.source(named: try call.bytes(1), in: schedule)
      return runtime.suspend(call, awaiting: "snapshot") {
        guard let source else { return Self.table(LaunchSchedule.Snapshot()) }
        return Self.table(await schedule.snapshot(source))
      }
    }

    // launches.remind(launch or id, minutes, target) -> reminder id; the
    // target (a function, or a machine sent { "reminder", ... }) is called
    // when the reminder is due on the runtime clock.
    module.function("set_reminder") { [unowned runtime] call in
      let id: String
      if call.type(1) == .table {
        guard let text = (try call.value(1, name: "launch"))["id"].stringValue else {
          throw LuaArgumentError.invalid(1, "a launch table with an 'id' expected")
        }
        id = text
      } else {
        id = try call.string(1)
      }
      let minutes = Int(try call.integer(2))
      return runtime.suspend(call, awaiting: "reminder") {
        do {
          return .integer(Int64(try await schedule.remind(id, minutesBefore: minutes).id))
        } catch {
          throw LuaScriptError("cannot set reminder: \(error)")
        }
      }
    }
    module.function("deliver_to") { [unowned runtime] call in
      let id = Int(try call.integer(1))
      guard call.type(2) == .function || call.type(2) == .userdata else {
        throw LuaArgumentError.type(2, expected: "function or machine")
      }
      reminders.register(id, target: call.reference(2, in: runtime.state))
      return .none
    }
    // remind, upcoming through the journal, the service and its action (launches.lua).
    module.lua(bytes: PackageResources.launches_lua, chunkName: "=lunar.launches")

    // launches.reminders() -> { { id =, launch =, minutes =, due_at =, state = }, ... }
    module.function("reminders") { [unowned runtime] call in
      return runtime.suspend(call, awaiting: "reminders") {
        .table(LuaTable(array: await schedule.reminders.map(Self.table)))
      }
    }
    return module
  }

  /// Where each source reads its launches now, and where it did at
  /// start (`samples = false` goes back there). Lives on the loop thread.
  final class FeedLocations {
    let defaults: [String: LaunchFeedLocation]
    var current: [String: LaunchFeedLocation]
    init(_ defaults: [String: LaunchFeedLocation]) {
      self.defaults = defaults
      current = defaults
    }
  }

  /// Where each source reads its launches unless `configure` says
  /// otherwise: the plugin's endpoint, else `LUNAR_LAUNCHES_RLL_URL` /
  /// `LUNAR_LAUNCHES_LL2_URL`, else the live API. Worked out when used.
  struct FeedDefaults: Sendable {
    let endpoints: [String: String]
    let environment: [String: String]

    var locations: [String: LaunchFeedLocation] {
      let given: [String: String?] = [
        "rocketlaunch.live": endpoints["rocketlaunch.live"] ?? environment["LUNAR_LAUNCHES_RLL_URL"],
        "launchlibrary2": endpoints["launchlibrary2"] ?? environment["LUNAR_LAUNCHES_LL2_URL"],
      ]
      let builtIn = [
        "rocketlaunch.live": RocketLaunchLiveProvider.defaultEndpoint, "launchlibrary2": LaunchLibrary2Provider.defaultEndpoint,
      ]
      return builtIn.mapValues(LaunchFeedLocation.init(endpoint:)).merging(
        given.compactMapValues { $0.map(LaunchFeedLocation.init(endpoint:)) }) { $1 }
    }
  }

  /// The schedule's source whose name has exactly the bytes `name`.
  static func source(named name: LuaString, in schedule: LaunchSchedule) -> String? {
    schedule.sources.first { LuaString($0) == name }
  }

  /// A launch as Lua sees it: an unknown field is absent (nil).
  static func table(_ launch: Launch) -> LuaValue {
    var t = LuaTable()
    t["id"] = .string(LuaString(launch.id))
    t["name"] = .string(LuaString(launch.name))
    t["missions"] = .table(LuaTable(array: launch.missions.map(table)))
    if let description = launch.missionDescription { t["mission_description"] = .string(LuaString(description)) }
    var estimated = LuaTable()
    if let month = launch.estimatedDate.month { estimated["month"] = .integer(Int64(month)) }
    if let day = launch.estimatedDate.day { estimated["day"] = .integer(Int64(day)) }
    if let year = launch.estimatedDate.year { estimated["year"] = .integer(Int64(year)) }
    t["estimated_date"] = .table(estimated)
    if let provider = launch.provider { t["provider"] = .string(LuaString(provider)) }
    if let vehicle = launch.vehicle { t["vehicle"] = .string(LuaString(vehicle)) }
    if let pad = launch.pad { t["pad"] = .string(LuaString(pad)) }
    if let country = launch.country { t["country"] = .string(LuaString(country)) }
    if let code = launch.countryCode { t["country_code"] = .string(LuaString(code)) }
    if let planned = launch.plannedTime { t["planned_time"] = .number(planned) }
    t["sort_time"] = .number(launch.sortTime)
    if let label = launch.dateLabel { t["date_label"] = .string(LuaString(label)) }
    if let url = launch.detailsURL { t["details_url"] = .string(LuaString(url)) }
    return .table(t)
  }

  static func table(_ mission: LaunchMission) -> LuaValue {
    var t = LuaTable()
    t["name"] = .string(LuaString(mission.name))
    if let description = mission.description { t["description"] = .string(LuaString(description)) }
    return .table(t)
  }

  static func table(_ snapshot: LaunchSchedule.Snapshot) -> LuaValue {
    var t = LuaTable()
    switch snapshot.phase {
    case .idle: t["phase"] = "idle"
    case .loading: t["phase"] = "loading"
    case .loaded: t["phase"] = "loaded"
    case .failed(let error):
      t["phase"] = "failed"
      t["error"] = .string(LuaString(error.description))
    }
    if let time = snapshot.fetchedAt { t["fetched_at"] = .number(time) }
    if let time = snapshot.requestedAt { t["requested_at"] = .number(time) }
    if let time = snapshot.nextRefreshAllowedAt { t["next_refresh_at"] = .number(time) }
    t["count"] = .integer(Int64(snapshot.launches.count))
    return .table(t)
  }

  static func table(_ reminder: Reminder) -> LuaValue {
    var t = LuaTable()
    t["id"] = .integer(Int64(reminder.id))
    t["launch"] = .string(LuaString(reminder.launchID))
    t["minutes"] = .integer(Int64(reminder.minutesBefore))
    t["due_at"] = .number(reminder.dueAt)
    switch reminder.state {
    case .pending: t["state"] = "pending"
    case .delivered: t["state"] = "delivered"
    case .failed(let reason):
      t["state"] = "failed"
      t["reason"] = .string(LuaString(reason))
    }
    return .table(t)
  }
}
