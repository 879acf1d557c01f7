import Foundation
import Lunar
import Synchronization
import TestSupport
import Testing

@testable import LunarLaunches

/// The two launch providers against a real local HTTP server: decoding,
/// ordering, invalid data, statuses, transport failures and cancellation.
@Suite struct ProviderTests {
  typealias Reply = TestHTTPServer.Reply

  // MARK: - Helpers

  /// The sample feed `<name>` shipped in `Sources/LunarLaunches/Samples`.
  static func samplePath(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Sources/LunarLaunches/Samples/\(name)").path
  }

  static func sample(_ name: String) throws -> String {
    try String(contentsOfFile: samplePath(name), encoding: .utf8)
  }

  /// The test feed `<name>` in `Tests/LunarLaunchesTests/Fixtures`.
  static func fixture(_ name: String) throws -> String {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)").path
    return try String(contentsOfFile: path, encoding: .utf8)
  }

  /// JSON text for a Foundation object (`NSNull()` for null).
  static func json(_ object: Any) -> String {
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: data, as: UTF8.self)
  }

  /// A complete RocketLaunch.Live item; `changes` replace or add fields,
  /// `removing` drops them.
  static func rllItem(_ id: Int, sortDate: Any = "1799158800", t0: Any = "2027-01-05T14:20Z", changes: [String: Any] = [:], removing: [String] = [])
    -> [String: Any]
  {
    var item: [String: Any] = [
      "id": id, "name": "Launch \(id)", "sort_date": sortDate,
      "provider": ["id": 1, "name": "SpaceX", "slug": "spacex"],
      "vehicle": ["id": 1, "name": "Falcon 9", "company_id": 1, "slug": "falcon-9"],
      "pad": ["id": 2, "name": "SLC-40", "location": ["id": 61, "name": "Cape Canaveral SFS, Florida", "state": "FL", "country": "United States"]],
      "missions": [["id": 9, "name": "Mission \(id)", "description": "A mission."]],
      "mission_description": "A mission.", "launch_description": "A launch.",
      "win_open": NSNull(), "t0": t0, "win_close": NSNull(),
      "est_date": ["month": NSNull(), "day": NSNull(), "year": NSNull(), "quarter": NSNull()],
      "date_str": "Jan 05", "slug": "launch-\(id)", "tags": [], "media": [], "quicktext": "Falcon 9 - Launch",
    ]
    for (key, value) in changes { item[key] = value }
    for key in removing { item.removeValue(forKey: key) }
    return item
  }

  static func rllBody(_ items: [[String: Any]]) -> String {
    json(["valid_auth": false, "count": items.count, "limit": 5, "total": items.count, "last_page": 1, "result": items])
  }

  /// A complete Launch Library 2 item.
  static func ll2Item(
    _ id: String, net: Any = "2027-01-06T09:31:20Z", precision: Any? = ["id": 0, "name": "Second", "abbrev": "SEC"],
    status: Any = ["id": 1, "name": "Go for Launch", "abbrev": "Go"], changes: [String: Any] = [:], removing: [String] = []
  ) -> [String: Any] {
    var item: [String: Any] = [
      "id": id, "url": "https://ll.thespacedevs.com/2.2.0/launch/\(id)/", "name": "Falcon 9 Block 5 | Mission \(id)",
      "status": status, "net": net, "window_start": net, "window_end": net,
      "launch_service_provider": ["id": 121, "name": "SpaceX", "type": "Commercial"],
      "rocket": ["id": 1, "configuration": ["id": 164, "name": "Falcon 9", "full_name": "Falcon 9 Block 5"]],
      "mission": ["id": 5, "name": "Mission \(id)", "description": "A mission.", "orbit": ["name": "Low Earth Orbit"]],
      "pad": ["id": 80, "name": "SLC-40", "location": ["id": 12, "name": "Cape Canaveral SFS, FL, USA", "country_code": "USA"], "country_code": "USA"],
      "probability": NSNull(), "program": [],
    ]
    if let precision { item["net_precision"] = precision }
    for (key, value) in changes { item[key] = value }
    for key in removing { item.removeValue(forKey: key) }
    return item
  }

  static func ll2Body(_ items: [[String: Any]]) -> String {
    json(["count": items.count, "next": NSNull(), "previous": NSNull(), "results": items])
  }

  /// A server that answers every request with `body` (and `status`).
  static func serving(_ body: String, status: Int = 200) throws -> TestHTTPServer {
    try TestHTTPServer { _ in Reply(status: status, body: body) }
  }

  static func result(_ provider: some LaunchProvider, limit: Int = 10) async -> Result<[Launch], LaunchFetchError> {
    do {
      return .success(try await provider.fetch(limit: limit))
    } catch {
      return .failure(error)
    }
  }

  static func rll(_ body: String, limit: Int = 10) async throws -> Result<[Launch], LaunchFetchError> {
    let server = try serving(body)
    defer { server.stop() }
    return await result(RocketLaunchLiveProvider(endpoint: server.url + "/json/launches/next/5"), limit: limit)
  }

  static func ll2(_ body: String, limit: Int = 10) async throws -> Result<[Launch], LaunchFetchError> {
    let server = try serving(body)
    defer { server.stop() }
    return await result(LaunchLibrary2Provider(endpoint: server.url + "/2.2.0/launch/upcoming/"), limit: limit)
  }

  // MARK: - Samples

  @Test func rocketLaunchLiveSampleDecodes() async throws {
    let server = try Self.serving(try Self.sample("rocketlaunch-live.json"))
    defer { server.stop() }
    let provider = RocketLaunchLiveProvider(endpoint: server.url + "/json/launches/next/5")
    #expect(provider.source == "rocketlaunch.live")
    let launches = try await provider.fetch(limit: 10)
    #expect(server.requests.map(\.path) == ["/json/launches/next/5"])
    // Sorted by sort_date; the tied pair (5004, 5005) in source order; the
    // month estimate (5003, source position 2) last.
    #expect(launches.map(\.id) == ["rll:5001", "rll:5002", "rll:5004", "rll:5005", "rll:5003"])
    #expect(
      launches[0]
        == Launch(
          id: "rll:5001", name: "Starlink Group 12-7",
          missions: [
            LaunchMission(
              name: "Starlink Group 12-7",
              description: "A batch of 24 Starlink V2 Mini satellites for the low Earth orbit broadband constellation.")
          ],
          provider: "SpaceX", vehicle: "Falcon 9", pad: "SLC-40, Cape Canaveral SFS, Florida", country: "United States",
          countryCode: nil, plannedTime: 1_799_158_800, sortTime: 1_799_158_800, dateLabel: "Jan 05",
          detailsURL: "https://www.rocketlaunch.live/launch/starlink-12-7"))
    #expect(launches[0].missionDescription == "A batch of 24 Starlink V2 Mini satellites for the low Earth orbit broadband constellation.")
    // Only a window: plannedTime falls back to win_open.
    #expect(launches[1].plannedTime == 1_799_532_000)
    #expect(launches[1].provider == "United Launch Alliance (ULA)")
    #expect(
      launches[4]
        == Launch(
          id: "rll:5003", name: "Blue Moon MK1 Pathfinder",
          missions: [
            LaunchMission(
              name: "Blue Moon MK1 Pathfinder",
              description: "An uncrewed demonstration landing of the Blue Moon Mark 1 lander near the lunar south pole.")
          ],
          estimatedDate: EstimatedLaunchDate(month: 2, year: 2027), provider: "Blue Origin", vehicle: "New Glenn",
          pad: "LC-36, Cape Canaveral SFS, Florida", country: "United States", plannedTime: nil, sortTime: 1_803_859_199,
          dateLabel: "Feb 2027", detailsURL: "https://www.rocketlaunch.live/launch/blue-moon-mk1-pathfinder"))
    #expect(launches[2].country == "New Zealand" && launches[2].plannedTime == nil && launches[2].dateLabel == "Jan 14")
    #expect(launches[2].estimatedDate == EstimatedLaunchDate(month: 1, day: 14, year: 2027))
    // A mission without a description (null or missing) has none, nor has its launch.
    #expect(launches[1].missions == [LaunchMission(name: "USSF-112")] && launches[1].missionDescription == nil)
    #expect(launches[2].missions == [LaunchMission(name: "Owl For One, One For Owl")])
    #expect(launches.allSatisfy { $0.countryCode == nil }, "RocketLaunch.Live gives no country codes")
  }

  @Test func launchLibrary2SampleDecodesAnAPI230Response() async throws {
    #expect(LaunchLibrary2Provider(http: UnusedHTTP()).endpoint == "https://ll.thespacedevs.com/2.3.0/launches/upcoming/")
    let server = try Self.serving(try Self.sample("launch-library-2.json"))
    defer { server.stop() }
    let provider = LaunchLibrary2Provider(endpoint: server.url + "/2.3.0/launches/upcoming/")
    let launches = try await provider.fetch(limit: 10)
    // The Success (Starlink 12-4, first in the file) is dropped; the rest sorted by net.
    #expect(
      launches.map(\.name) == [
        "Progress MS-38", "Starlink Group 12-9", "Qianfan Group 12", "Blue Moon MK1 Pathfinder", "Project Kuiper KA-05",
      ])
    #expect(launches.map(\.provider) == [
      "Russian Federal Space Agency (ROSCOSMOS)", "SpaceX", "China Aerospace Science and Technology Corporation", "Blue Origin",
      "Arianespace",
    ])
    #expect(launches.map(\.vehicle) == ["Soyuz 2.1a", "Falcon 9", "Long March 8A", "New Glenn", "Ariane 64"])
    // API 2.3.0 gives the country in `pad.country`, an object with a name and codes.
    #expect(launches.map(\.country) == ["Kazakhstan", "United States of America", "China", "United States of America", "French Guiana"])
    #expect(launches.map(\.countryCode) == ["KAZ", "USA", "CHN", "USA", "GUF"])
    #expect(launches.map(\.missionDescription) == [
      "Progress MS-38 is a Russian uncrewed cargo craft launched to the International Space Station.",
      "A batch of 24 satellites for the Starlink mega-constellation.",
      "Batch of 18 satellites for the Qianfan (Thousand Sails) constellation.",
      "Uncrewed demonstration landing of the Blue Moon Mark 1 lander.", nil,
    ])
    #expect(launches.allSatisfy { $0.estimatedDate == EstimatedLaunchDate() })
    #expect(
      launches[0]
        == Launch(
          id: "ll2:b2c3d4e5-f6a7-4b89-8c0d-1e2f3a4b5c66", name: "Progress MS-38", missions: [Self.progressMS38],
          provider: "Russian Federal Space Agency (ROSCOSMOS)", vehicle: "Soyuz 2.1a",
          pad: "31/6, Baikonur Cosmodrome, Republic of Kazakhstan", country: "Kazakhstan", countryCode: "KAZ",
          plannedTime: 1_799_061_720, sortTime: 1_799_061_720, dateLabel: "Jan 04",
          detailsURL: "https://ll.thespacedevs.com/2.3.0/launches/b2c3d4e5-f6a7-4b89-8c0d-1e2f3a4b5c66/"))
    // Minute and Second are exact; Hour, Month and Quarter are estimates.
    #expect(launches.map(\.plannedTime) == [1_799_061_720, 1_799_227_880, nil, nil, nil])
    #expect(launches.map(\.dateLabel) == ["Jan 04", "Jan 06", "Jan 18 ~14:00 UTC", "Mar 2027", "Q2 2027"])
    #expect(launches[2].sortTime == 1_800_280_800)
  }

  @Test func launchLibrary2DecodesAnAPI220Response() async throws {
    let server = try Self.serving(try Self.fixture("launch-library-2-v2.2.0.json"))
    defer { server.stop() }
    let provider = LaunchLibrary2Provider(endpoint: server.url + "/2.2.0/launch/upcoming/")
    #expect(provider.source == "launchlibrary2")
    let launches = try await provider.fetch(limit: 10)
    // The Success (Starlink 12-4, first in the file) is dropped; the rest sorted by net.
    #expect(
      launches.map(\.name) == [
        "Progress MS-38", "Starlink Group 12-9", "Qianfan Group 12", "Blue Moon MK1 Pathfinder", "Project Kuiper KA-05",
      ])
    #expect(
      launches[0]
        == Launch(
          id: "ll2:b2c3d4e5-f6a7-4b89-8c0d-1e2f3a4b5c66", name: "Progress MS-38", missions: [Self.progressMS38],
          provider: "Russian Federal Space Agency (ROSCOSMOS)", vehicle: "Soyuz 2.1a",
          pad: "31/6, Baikonur Cosmodrome, Republic of Kazakhstan", country: nil, countryCode: "KAZ",
          plannedTime: 1_799_061_720, sortTime: 1_799_061_720, dateLabel: "Jan 04",
          detailsURL: "https://ll.thespacedevs.com/2.2.0/launch/b2c3d4e5-f6a7-4b89-8c0d-1e2f3a4b5c66/"))
    // API 2.2.0 gives only the three-letter code, no name.
    #expect(launches.map(\.country) == [nil, nil, nil, nil, nil])
    #expect(launches.map(\.countryCode) == ["KAZ", "USA", "CHN", "USA", "GUF"])
    #expect(launches[1].plannedTime == 1_799_227_880)
    // Day, Month and Quarter precision: estimates with labels.
    #expect(launches[2].plannedTime == nil && launches[2].dateLabel == "Jan 18" && launches[2].countryCode == "CHN")
    #expect(launches[3].plannedTime == nil && launches[3].dateLabel == "Mar 2027" && launches[3].sortTime == 1_806_451_200)
    #expect(
      launches[4]
        == Launch(
          id: "ll2:9a3b4c5d-6e7f-4a80-9b1c-2d3e4f5a6b75", name: "Project Kuiper KA-05", missions: [], provider: "Arianespace",
          vehicle: "Ariane 64", pad: "Ensemble de Lancement Ariane 4, Guiana Space Centre, French Guiana", country: nil,
          countryCode: "GUF", plannedTime: nil, sortTime: 1_814_313_600, dateLabel: "Q2 2027",
          detailsURL: "https://ll.thespacedevs.com/2.2.0/launch/9a3b4c5d-6e7f-4a80-9b1c-2d3e4f5a6b75/"))
  }

  static let progressMS38 = LaunchMission(
    name: "Progress MS-38 (99P)",
    description: "Progress MS-38 is a Russian uncrewed cargo craft launched to the International Space Station.")

  @Test func limitCapsTheList() async throws {
    let body = try Self.sample("rocketlaunch-live.json")
    #expect(try await Self.rll(body, limit: 2).get().map(\.id) == ["rll:5001", "rll:5002"])
    #expect(try await Self.rll(body, limit: 0).get() == [])
    let ll2 = try Self.sample("launch-library-2.json")
    #expect(try await Self.ll2(ll2, limit: 1).get().map(\.name) == ["Progress MS-38"])
  }

  @Test func fileEndpoints() async throws {
    let rll = RocketLaunchLiveProvider(endpoint: "file://" + Self.samplePath("rocketlaunch-live.json"))
    #expect(try await rll.fetch(limit: 3).map(\.id) == ["rll:5001", "rll:5002", "rll:5004"])
    let ll2 = LaunchLibrary2Provider(endpoint: "file://" + Self.samplePath("launch-library-2.json"))
    #expect(try await ll2.fetch(limit: 10).count == 5)
    let missing = RocketLaunchLiveProvider(endpoint: "file:///nonexistent/lunar-launches.json")
    let failure = await Self.result(missing)
    guard case .failure(.network) = failure else {
      Issue.record("expected a network error, got \(failure)")
      return
    }
  }

  /// An HTTP service that counts how often it is asked.
  final class UnusedHTTP: HTTPService {
    let asked = Mutex(0)
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      asked.withLock { $0 += 1 }
      return HTTPResponse(status: 200, body: Array(#"{"result":[]}"#.utf8))
    }
  }

  @Test func fileEndpointsAreReadByLunarNotTheHTTPService() async throws {
    let http = UnusedHTTP()
    let rll = RocketLaunchLiveProvider(endpoint: "file://" + Self.samplePath("rocketlaunch-live.json"), http: http)
    #expect(try await rll.fetch(limit: 2).map(\.id) == ["rll:5001", "rll:5002"])
    #expect(http.asked.withLock { $0 } == 0)
  }

  @Test(arguments: [
    ("/dev/zero", "not a regular file (a character device)"), ("/tmp", "not a regular file (a folder)"),
  ])
  func fileEndpointsRefuseWhatIsNotARegularFile(path: String, reason: String) async throws {
    let provider = RocketLaunchLiveProvider(endpoint: "file://" + path, http: UnusedHTTP())
    #expect(await Self.result(provider) == .failure(.network("cannot read \(path): \(reason)")))
  }

  @Test func theShippedSamplesNeedNoFileAndNoNetwork() async throws {
    let http = UnusedHTTP()
    let rll = RocketLaunchLiveProvider(location: .sample, http: http)
    #expect(try await rll.fetch(limit: 10) == RocketLaunchLiveProvider.launches(from: Array(try Self.sample("rocketlaunch-live.json").utf8)))
    let ll2 = LaunchLibrary2Provider(location: .sample, http: http)
    #expect(try await ll2.fetch(limit: 10) == LaunchLibrary2Provider.launches(from: Array(try Self.sample("launch-library-2.json").utf8)))
    #expect(http.asked.withLock { $0 } == 0)
  }

  @Test func endpointsReadAsLocations() {
    #expect(LaunchFeedLocation(endpoint: "file:///srv/feed.json") == .file(path: "/srv/feed.json"))
    #expect(LaunchFeedLocation(endpoint: "FILE://localhost/srv/feed.json") == .file(path: "/srv/feed.json"))
    #expect(LaunchFeedLocation(endpoint: "file:/srv/feed.json") == .file(path: "/srv/feed.json"))
    #expect(LaunchFeedLocation(endpoint: "https://example.org/feed") == .web("https://example.org/feed"))
  }

  // MARK: - Times and ordering

  @Test(arguments: [
    ("2027-01-05T14:20Z", 1_799_158_800.0),
    ("2027-01-05T14:20:30Z", 1_799_158_830.0),
    ("2027-01-05T14:20:30.25Z", 1_799_158_830.25),
    ("2027-01-05T16:20:30.250+02:00", 1_799_158_830.25),
    ("2027-01-05T09:20-05:00", 1_799_158_800.0),
  ])
  func t0Formats(t0: String, expected: Double) async throws {
    let launches = try await Self.rll(Self.rllBody([Self.rllItem(1, t0: t0)])).get()
    #expect(launches.map(\.plannedTime) == [expected])
    let ll2 = try await Self.ll2(Self.ll2Body([Self.ll2Item("a", net: t0)])).get()
    #expect(ll2.map(\.plannedTime) == [expected])
    #expect(ll2.map(\.sortTime) == [expected])
  }

  @Test func plannedTimePrefersT0ToTheWindow() async throws {
    let item = Self.rllItem(1, t0: "2027-01-05T14:20Z", changes: ["win_open": "2027-01-05T14:00Z", "win_close": "2027-01-05T15:00Z"])
    #expect(try await Self.rll(Self.rllBody([item])).get().map(\.plannedTime) == [1_799_158_800])
    let window = Self.rllItem(2, t0: NSNull(), changes: ["win_open": "2027-01-05T14:00Z"])
    #expect(try await Self.rll(Self.rllBody([window])).get().map(\.plannedTime) == [1_799_157_600])
  }

  @Test func iso8601Parsing() {
    #expect(ISO8601.parse("1970-01-01T00:00:00Z") == 0)
    #expect(ISO8601.parse("1969-12-31T23:59:59Z") == -1)
    #expect(ISO8601.parse("2000-03-01T00:00Z") == 951_868_800)
    #expect(ISO8601.parse("2024-02-29T12:00:00Z") == 1_709_208_000)
    #expect(ISO8601.parse("2027-01-05t14:20z") == 1_799_158_800)
    #expect(ISO8601.parse("2027-01-05 14:20Z") == 1_799_158_800)
    #expect(ISO8601.parse("2027-01-05T19:50+0530") == 1_799_158_800)
    #expect(ISO8601.parse("2027-01-05T14:20:00.000001Z")! - 1_799_158_800 < 0.00001)
    for bad in [
      "soon", "", "2027-01-05", "2027-01-05T14:20", "2027-01-05T14Z", "2027-13-05T14:20Z", "2027-02-29T14:20Z",
      "2100-02-29T00:00Z", "2027-01-05T24:00Z", "2027-01-05T14:60Z", "2027-01-05T14:20:61Z", "2027-01-05T14:20:30.Z",
      "2027-01-05T14:20+2:00", "2027-01-05T14:20Z ", "27-01-05T14:20Z", "2027-1-5T14:20Z", "2027-01-05T14:20+24:00",
    ] {
      #expect(ISO8601.parse(bad) == nil, "\(bad)")
    }
    #expect(ISO8601.format(1_799_158_830.75) == "2027-01-05T14:20:30Z")
    #expect(ISO8601.format(-1) == "1969-12-31T23:59:59Z")
    for time in stride(from: -5_000_000_000.0, through: 5_000_000_000, by: 86_399 * 37) {
      #expect(ISO8601.parse(ISO8601.format(time)) == time)
    }
  }

  @Test func tiedSortDatesKeepSourceOrder() async throws {
    // Twelve launches on one estimated day, and one earlier launch last in
    // the source: it moves to the front, the twelve keep their order.
    let tied = (1...12).map { Self.rllItem($0, sortDate: "1799971199", t0: NSNull()) }
    let early = Self.rllItem(99, sortDate: "1799000000", t0: NSNull())
    let launches = try await Self.rll(Self.rllBody(tied + [early]), limit: 20).get()
    #expect(launches.map(\.id) == ["rll:99"] + (1...12).map { "rll:\($0)" })
    let ll2Tied = (1...12).map { Self.ll2Item("t\($0)", net: "2027-03-31T00:00:00Z", precision: ["name": "Month"]) }
    let ll2 = try await Self.ll2(Self.ll2Body(ll2Tied + [Self.ll2Item("early", net: "2027-01-01T00:00Z")]), limit: 20).get()
    #expect(ll2.map(\.id) == ["ll2:early"] + (1...12).map { "ll2:t\($0)" })
  }

  @Test func sortDateAsNumberOrStringOnly() async throws {
    let number = try await Self.rll(Self.rllBody([Self.rllItem(1, sortDate: 1_799_000_000)])).get()
    #expect(number.map(\.sortTime) == [1_799_000_000])
    for bad in ["soonish", "", "1e9", "inf", " 1799000000"] {
      let result = try await Self.rll(Self.rllBody([Self.rllItem(1, sortDate: bad)]))
      #expect(result == .failure(.invalidData("result[0].sort_date: not epoch seconds: '\(bad)'")))
    }
  }

  // MARK: - Null, missing, malformed and unknown fields

  @Test func rocketLaunchLiveNullAndMissingOptionalFields() async throws {
    let item = Self.rllItem(
      7, t0: NSNull(),
      changes: ["slug": NSNull(), "pad": ["name": "LC-39A"], "mission_description": NSNull(), "launch_description": NSNull()],
      removing: ["win_open", "win_close", "missions", "est_date", "tags", "media"])
    let launches = try await Self.rll(Self.rllBody([item])).get()
    #expect(
      launches == [
        Launch(
          id: "rll:7", name: "Launch 7", missions: [], provider: "SpaceX", vehicle: "Falcon 9", pad: "LC-39A", country: nil,
          plannedTime: nil, sortTime: 1_799_158_800, dateLabel: "Jan 05", detailsURL: nil)
      ])
  }

  @Test(arguments: [false, true])
  func rocketLaunchLiveOptionalFieldsMissingOrNullAreUnknown(null: Bool) async throws {
    // One launch in a feed of two lacks each field in turn: the feed still
    // decodes, that launch has just that unknown, the other is whole.
    let whole = try await Self.rll(Self.rllBody([Self.rllItem(1), Self.rllItem(2, sortDate: "1799158801")])).get()
    for field in ["provider", "vehicle", "pad", "t0", "date_str", "missions", "est_date"] {
      let item = null ? Self.rllItem(1, changes: [field: NSNull()]) : Self.rllItem(1, removing: [field])
      let launches = try await Self.rll(Self.rllBody([item, Self.rllItem(2, sortDate: "1799158801")])).get()
      var expected = whole[0]
      switch field {
      case "provider": expected.provider = nil
      case "vehicle": expected.vehicle = nil
      case "pad": (expected.pad, expected.country) = (nil, nil)
      case "t0": expected.plannedTime = nil
      case "date_str": expected.dateLabel = nil
      case "missions": expected.missions = []
      default: expected.estimatedDate = EstimatedLaunchDate()
      }
      #expect(launches == [expected, whole[1]], "\(field)")
    }
    let bare = Self.rllItem(
      1, t0: NSNull(),
      changes: null ? ["provider": NSNull(), "vehicle": NSNull(), "pad": NSNull(), "date_str": NSNull(), "est_date": NSNull()] : [:],
      removing: null ? [] : ["provider", "vehicle", "pad", "t0", "date_str", "est_date"])
    let launch = try #require(try await Self.rll(Self.rllBody([bare])).get().first)
    #expect(
      launch
        == Launch(
          id: "rll:1", name: "Launch 1", missions: [LaunchMission(name: "Mission 1", description: "A mission.")], provider: nil,
          vehicle: nil, pad: nil, country: nil, plannedTime: nil, sortTime: 1_799_158_800, dateLabel: nil,
          detailsURL: "https://www.rocketlaunch.live/launch/launch-1"))
  }

  @Test(arguments: [
    (#"{"name": "LC-39A"}"#, "LC-39A", nil as String?),
    (#"{"name": null, "location": {"name": "Kennedy Space Center, FL", "country": "United States"}}"#, "Kennedy Space Center, FL", "United States"),
    (#"{"location": {"name": null, "country": null}}"#, nil, nil),
    (#"{"name": "LC-39A", "location": {"country": "United States"}}"#, "LC-39A", "United States"),
    (#"{"name": "", "location": {"name": "", "country": ""}}"#, nil, nil),
    ("{}", nil, nil),
  ])
  func rocketLaunchLivePadPartsAreOptional(pad: String, label: String?, country: String?) async throws {
    let fields = try JSONSerialization.jsonObject(with: Data(pad.utf8))
    let launches = try await Self.rll(Self.rllBody([Self.rllItem(1, changes: ["pad": fields])])).get()
    #expect(launches.map(\.pad) == [label])
    #expect(launches.map(\.country) == [country])
  }

  @Test func rocketLaunchLiveNamelessProviderAndVehicleAreUnknown() async throws {
    let item = Self.rllItem(1, changes: ["provider": ["id": 1], "vehicle": ["name": NSNull()]])
    let launches = try await Self.rll(Self.rllBody([item])).get()
    #expect(launches.map(\.provider) == [nil] && launches.map(\.vehicle) == [nil])
  }

  @Test func rocketLaunchLiveMissionsAndEstimatedDate() async throws {
    let item = Self.rllItem(
      1, t0: NSNull(),
      changes: [
        "missions": [["name": "First", "description": "The first."], ["name": "Second", "description": NSNull()], ["name": "Third"]],
        "est_date": ["month": 3, "day": NSNull(), "year": 2027, "quarter": 1],
      ])
    let launch = try #require(try await Self.rll(Self.rllBody([item])).get().first)
    #expect(launch.missions == [
      LaunchMission(name: "First", description: "The first."), LaunchMission(name: "Second"), LaunchMission(name: "Third"),
    ])
    #expect(launch.missionDescription == "The first.")
    #expect(launch.estimatedDate == EstimatedLaunchDate(month: 3, year: 2027))
    // Only the first mission's description is the launch's.
    let second = Self.rllItem(2, changes: ["missions": [["name": "A"], ["name": "B", "description": "Only B's."]]])
    #expect(try await Self.rll(Self.rllBody([second])).get().map(\.missionDescription) == [nil])
    let partial = Self.rllItem(3, changes: ["est_date": ["year": 2028]])
    #expect(try await Self.rll(Self.rllBody([partial])).get().map(\.estimatedDate) == [EstimatedLaunchDate(year: 2028)])
  }

  @Test(arguments: [
    (#"{"country": {"id": 2, "name": "United States of America", "alpha_2_code": "US", "alpha_3_code": "USA"}}"#,
     "United States of America", "USA"),
    (#"{"country": {"name": "New Zealand", "alpha_2_code": "NZ"}}"#, "New Zealand", nil),
    (#"{"country": {"name": "New Zealand"}}"#, "New Zealand", nil),
    (#"{"country": "New Zealand"}"#, "New Zealand", nil),
    (#"{"country": {"name": "", "alpha_3_code": ""}}"#, nil, nil),
    (#"{"location": {"name": "Mahia", "country": {"name": "New Zealand", "alpha_3_code": "NZL"}}}"#, "New Zealand", "NZL"),
    (#"{"location": {"name": "Mahia", "country_code": "NZL"}}"#, nil, "NZL"),
    (#"{"country_code": "NZL"}"#, nil, "NZL"),
    (#"{"location": {"name": "Mahia", "country_code": "NZL"}, "country": {"name": "New Zealand", "alpha_3_code": "NZL"}}"#,
     "New Zealand", "NZL"),
    (#"{"country": null, "location": {"country": null, "country_code": null}, "country_code": null}"#, nil, nil),
  ])
  func launchLibrary2CountryFromEitherAPIShape(pad: String, name: String?, code: String?) async throws {
    var fields = try #require(try JSONSerialization.jsonObject(with: Data(pad.utf8)) as? [String: Any])
    fields["name"] = "LC-1A"
    let launches = try await Self.ll2(Self.ll2Body([Self.ll2Item("c", changes: ["pad": fields])])).get()
    #expect(launches.map(\.country) == [name])
    #expect(launches.map(\.countryCode) == [code])
  }

  @Test func launchLibrary2NullAndMissingOptionalFields() async throws {
    // No net_precision: treated as exact. No mission, null status, a pad
    // without location (the pad's own country code is used), no url.
    let item = Self.ll2Item(
      "x", net: "2027-01-05T14:20:00Z", precision: nil, status: NSNull(),
      changes: ["pad": ["name": "LC-1A", "location": NSNull(), "country_code": "NZL"], "name": "Electron | The Owl"],
      removing: ["mission", "url"])
    let launches = try await Self.ll2(Self.ll2Body([item])).get()
    #expect(
      launches == [
        Launch(
          id: "ll2:x", name: "The Owl", missions: [], provider: "SpaceX", vehicle: "Falcon 9", pad: "LC-1A", country: nil,
          countryCode: "NZL", plannedTime: 1_799_158_800, sortTime: 1_799_158_800, dateLabel: "Jan 05", detailsURL: nil)
      ])
    // A null net_precision reads the same; a name without " | " is kept whole.
    let plain = try await Self.ll2(
      Self.ll2Body([Self.ll2Item("y", net: "2027-01-05T14:20:00Z", precision: NSNull(), changes: ["name": "Plain"])])
    ).get()
    #expect(plain.map(\.plannedTime) == [1_799_158_800] && plain.map(\.name) == ["Plain"])
  }

  @Test(arguments: [false, true])
  func launchLibrary2OptionalFieldsMissingOrNullAreUnknown(null: Bool) async throws {
    for field in ["launch_service_provider", "rocket", "pad", "mission", "status", "net_precision", "url"] {
      let item = null ? Self.ll2Item("a", changes: [field: NSNull()]) : Self.ll2Item("a", removing: [field])
      let launches = try await Self.ll2(Self.ll2Body([item, Self.ll2Item("b")])).get()
      #expect(launches.count == 2, "\(field)")
      #expect(launches[1] == (try await Self.ll2(Self.ll2Body([Self.ll2Item("b")])).get()[0]), "\(field)")
    }
    let fields = ["launch_service_provider", "rocket", "pad", "mission"]
    let bare =
      null ? Self.ll2Item("z", changes: Dictionary(uniqueKeysWithValues: fields.map { ($0, NSNull() as Any) })) : Self.ll2Item("z", removing: fields)
    let launch = try #require(try await Self.ll2(Self.ll2Body([bare])).get().first)
    #expect(
      launch
        == Launch(
          id: "ll2:z", name: "Mission z", missions: [], provider: nil, vehicle: nil, pad: nil, country: nil, countryCode: nil,
          plannedTime: 1_799_227_880, sortTime: 1_799_227_880, dateLabel: "Jan 06",
          detailsURL: "https://ll.thespacedevs.com/2.2.0/launch/z/"))
    // The parts inside: a rocket without a configuration, a configuration
    // or provider without a name, a pad without a name or location.
    let parts = Self.ll2Item(
      "p",
      changes: [
        "rocket": ["configuration": null ? NSNull() : [:] as Any], "launch_service_provider": ["id": 1, "name": NSNull()],
        "pad": ["name": NSNull(), "location": ["name": "Mahia", "country_code": "NZL"]],
        "mission": ["name": "Owl", "description": NSNull()],
      ])
    let inner = try #require(try await Self.ll2(Self.ll2Body([parts])).get().first)
    #expect(inner.vehicle == nil && inner.provider == nil && inner.pad == "Mahia" && inner.countryCode == "NZL")
    #expect(inner.missions == [LaunchMission(name: "Owl")] && inner.missionDescription == nil)
  }

  @Test func unknownFieldsAreIgnored() async throws {
    let extra: [String: Any] = [
      "weather_summary": ["nested": [1, 2, ["deep": true]]], "quicktext": 42, "brand_new_field": NSNull(), "tags": "not even a list",
    ]
    let launches = try await Self.rll(Self.rllBody([Self.rllItem(1, changes: extra)])).get()
    #expect(launches.map(\.id) == ["rll:1"])
    let ll2 = try await Self.ll2(Self.ll2Body([Self.ll2Item("u", changes: extra)])).get()
    #expect(ll2.map(\.id) == ["ll2:u"])
  }

  @Test(arguments: [
    (Self.json(Self.rllItem(1, t0: "soon")), "result[1].t0: not an ISO 8601 time: 'soon'"),
    (Self.json(Self.rllItem(1, changes: ["win_open": "2027-01-05"])), "result[1].win_open: not an ISO 8601 time: '2027-01-05'"),
    (Self.json(Self.rllItem(1, removing: ["name"])), "result[1].name: missing field"),
    (Self.json(Self.rllItem(1, changes: ["provider": "SpaceX"])), "result[1].provider: object or array expected, got string"),
    (Self.json(Self.rllItem(1, changes: ["vehicle": ["name": 9]])), "result[1].vehicle.name: string expected, got number"),
    (Self.json(Self.rllItem(1, changes: ["pad": ["name": ["LC-39A"]]])), "result[1].pad.name: string expected, got object or array"),
    (Self.json(Self.rllItem(1, changes: ["pad": ["location": ["country": false]]])), "result[1].pad.location.country: string expected, got boolean"),
    (Self.json(Self.rllItem(1, changes: ["date_str": 5])), "result[1].date_str: string expected, got number"),
    (Self.json(Self.rllItem(1, changes: ["missions": [["name": "M", "description": 3]]])), "result[1].missions[0].description: string expected, got number"),
    (Self.json(Self.rllItem(1, changes: ["est_date": ["month": "May"]])), "result[1].est_date.month: integer expected, got string"),
    (Self.json(Self.rllItem(1, changes: ["est_date": ["day": 1.5]])), "result[1].est_date.day: number has no integer representation"),
    (Self.json(Self.rllItem(1, changes: ["est_date": ["year": 1e300]])), "result[1].est_date.year: 1e+300 is out of range for Int"),
    (Self.json(Self.rllItem(1, changes: ["est_date": "Feb 2027"])), "result[1].est_date: object or array expected, got string"),
    (Self.json(Self.rllItem(1, changes: ["id": 1e300])), "result[1].id: 1e+300 is out of range for Int"),
    (Self.json(Self.rllItem(1, removing: ["sort_date"])), "result[1].sort_date: missing field"),
    (Self.json(Self.rllItem(1, changes: ["id": "abc"])), "result[1].id: integer expected, got string"),
    (Self.json(Self.rllItem(1, changes: ["t0": 1_799_158_800])), "result[1].t0: string expected, got number"),
    (Self.json(Self.rllItem(1, changes: ["pad": "SLC-40"])), "result[1].pad: object or array expected, got string"),
    (Self.json(Self.rllItem(1, changes: ["missions": [["id": 3]]])), "result[1].missions[0].name: missing field"),
  ])
  func rocketLaunchLiveMalformedItems(item: String, message: String) async throws {
    // The bad item is the second one: the error names it, no partial list.
    let result = try await Self.rll(#"{"result": ["# + Self.json(Self.rllItem(0)) + "," + item + "]}")
    #expect(result == .failure(.invalidData(message)))
  }

  @Test(arguments: [
    (Self.json(Self.ll2Item("b", net: "tomorrow")), "results[1].net: not an ISO 8601 time: 'tomorrow'"),
    (Self.json(Self.ll2Item("b", removing: ["net"])), "results[1].net: missing field"),
    (Self.json(Self.ll2Item("b", changes: ["rocket": ["configuration": "Falcon 9"]])), "results[1].rocket.configuration: object or array expected, got string"),
    (Self.json(Self.ll2Item("b", changes: ["launch_service_provider": ["name": 121]])), "results[1].launch_service_provider.name: string expected, got number"),
    (Self.json(Self.ll2Item("b", changes: ["pad": ["name": 40]])), "results[1].pad.name: string expected, got number"),
    (Self.json(Self.ll2Item("b", changes: ["pad": ["country": ["alpha_3_code": 840]]])), "results[1].pad.country.alpha_3_code: string expected, got number"),
    (Self.json(Self.ll2Item("b", changes: ["mission": ["description": "no name"]])), "results[1].mission.name: missing field"),
    (Self.json(Self.ll2Item("b", changes: ["mission": ["name": "M", "description": ["x"]]])), "results[1].mission.description: string expected, got object or array"),
    (Self.json(Self.ll2Item("b", changes: ["id": 17])), "results[1].id: string expected, got number"),
    (Self.json(Self.ll2Item("b", changes: ["status": "Go"])), "results[1].status: object or array expected, got string"),
    (Self.json(Self.ll2Item("b", changes: ["launch_service_provider": true])), "results[1].launch_service_provider: object or array expected, got boolean"),
  ])
  func launchLibrary2MalformedItems(item: String, message: String) async throws {
    let result = try await Self.ll2(#"{"results": ["# + Self.json(Self.ll2Item("a")) + "," + item + "]}")
    #expect(result == .failure(.invalidData(message)))
  }

  @Test func malformedEnvelopes() async throws {
    #expect(try await Self.rll(#"{"count": 1}"#) == .failure(.invalidData("result: missing field")))
    #expect(try await Self.rll(#"[1, 2]"#) == .failure(.invalidData("result: missing field")))
    #expect(try await Self.rll(#""text""#) == .failure(.invalidData("body: object or array expected, got string")))
    #expect(try await Self.ll2(#"{"results": {"a": 1}}"#) == .failure(.invalidData("results: array expected, got object")))
    #expect(try await Self.ll2(#"{"results": {}}"#) == .success([]))
    let missions = Self.rllItem(1, changes: ["missions": ["name": "not a list"]])
    #expect(try await Self.rll(Self.rllBody([missions])) == .failure(.invalidData("result[0].missions: array expected, got object")))
    #expect(try await Self.ll2(#"{"results": 5}"#) == .failure(.invalidData("results: object or array expected, got number")))
  }

  @Test func malformedJSONIsOneInvalidDataError() async throws {
    let truncated = String(try Self.sample("rocketlaunch-live.json").prefix(900))
    let server = try Self.serving(truncated)
    defer { server.stop() }
    let result = await Self.result(RocketLaunchLiveProvider(endpoint: server.url))
    guard case .failure(.invalidData(let reason)) = result else {
      Issue.record("expected invalid data, got \(result)")
      return
    }
    #expect(reason.hasPrefix("not JSON: "))
    #expect(server.requests.count == 1)
    let text = #"{"results": [{"id": "a", }]}"#
    let parseError = try #require(throws: JSON.ParseError.self) { try JSON.decode(text) }
    #expect(try await Self.ll2(text) == .failure(.invalidData("not JSON: \(parseError)")))
  }

  // MARK: - Launch Library 2 specifics

  @Test func flownLaunchesAreDropped() async throws {
    let statuses: [[String: Any]] = [
      ["id": 3, "name": "Launch Successful", "abbrev": "Success"],
      ["id": 4, "name": "Launch Failure", "abbrev": "Failure"],
      ["id": 7, "name": "Launch was a Partial Failure", "abbrev": "Partial Failure"],
      ["id": 6, "name": "Launch in Flight", "abbrev": "In Flight"],
      ["name": "Launch Successful"],
      ["abbrev": "success"],
    ]
    let kept: [[String: Any]] = [
      ["id": 1, "name": "Go for Launch", "abbrev": "Go"], ["id": 2, "name": "To Be Determined", "abbrev": "TBD"],
      ["id": 5, "name": "On Hold", "abbrev": "Hold"], ["id": 8, "name": "To Be Confirmed", "abbrev": "TBC"],
    ]
    let items =
      statuses.enumerated().map { Self.ll2Item("flown\($0.offset)", status: $0.element) }
      + kept.enumerated().map { Self.ll2Item("kept\($0.offset)", status: $0.element) }
    let launches = try await Self.ll2(Self.ll2Body(items)).get()
    #expect(launches.map(\.id) == ["ll2:kept0", "ll2:kept1", "ll2:kept2", "ll2:kept3"])
  }

  @Test(arguments: [
    ("Second", "2027-05-07T14:20:05Z", true, "May 07"),
    ("Minute", "2027-05-07T14:20:00Z", true, "May 07"),
    ("Hour", "2027-05-07T14:00:00Z", false, "May 07 ~14:00 UTC"),
    ("Day", "2027-05-07T00:00:00Z", false, "May 07"),
    ("Week", "2027-05-07T00:00:00Z", false, "Week of May 07"),
    ("Month", "2027-05-31T00:00:00Z", false, "May 2027"),
    ("Quarter", "2027-06-30T00:00:00Z", false, "Q2 2027"),
    ("Quarter", "2027-10-01T00:00:00Z", false, "Q4 2027"),
    ("Half Year", "2027-06-30T00:00:00Z", false, "H1 2027"),
    ("Half Year", "2027-12-31T00:00:00Z", false, "H2 2027"),
    ("Year", "2027-12-31T00:00:00Z", false, "2027"),
    ("Fiscal Year", "2027-12-31T00:00:00Z", false, "2027"),
    ("Morning", "2027-05-07T06:00:00Z", false, "May 07"),
  ])
  func precisionLabels(precision: String, net: String, exact: Bool, label: String) async throws {
    let time = try #require(ISO8601.parse(net))
    let item = Self.ll2Item("p", net: net, precision: ["id": 1, "name": precision, "abbrev": "?"])
    let launches = try await Self.ll2(Self.ll2Body([item])).get()
    #expect(launches.map(\.dateLabel) == [label])
    #expect(launches.map(\.plannedTime) == [exact ? time : nil])
    #expect(launches.map(\.sortTime) == [time])
  }

  @Test func precisionByAbbreviationWhenUnnamed() {
    let net = 1_814_313_600.0  // 2027-06-30T00:00Z
    #expect(LaunchLibrary2Provider.schedule(net: net, precision: "MIN").plannedTime == net)
    #expect(LaunchLibrary2Provider.schedule(net: net, precision: "MIN").dateLabel == "Jun 30")
    #expect(LaunchLibrary2Provider.schedule(net: net, precision: "Q").dateLabel == "Q2 2027")
    #expect(LaunchLibrary2Provider.schedule(net: net, precision: "M").dateLabel == "Jun 2027")
    #expect(LaunchLibrary2Provider.schedule(net: net, precision: nil).plannedTime == net)
  }

  // MARK: - Statuses and transport failures

  @Test func serverErrorWithAValidBody() async throws {
    for status in [503, 404, 500] {
      let rllServer = try Self.serving(try Self.sample("rocketlaunch-live.json"), status: status)
      defer { rllServer.stop() }
      #expect(await Self.result(RocketLaunchLiveProvider(endpoint: rllServer.url)) == .failure(.server(code: status)))
      let ll2Server = try Self.serving(try Self.sample("launch-library-2.json"), status: status)
      defer { ll2Server.stop() }
      #expect(await Self.result(LaunchLibrary2Provider(endpoint: ll2Server.url)) == .failure(.server(code: status)))
    }
  }

  @Test func offline() async throws {
    #expect(await Self.result(RocketLaunchLiveProvider(endpoint: "http://127.0.0.1:1/launches")) == .failure(.offline))
    #expect(await Self.result(LaunchLibrary2Provider(endpoint: "http://127.0.0.1:1/launches")) == .failure(.offline))
  }

  @Test func timesOut() async throws {
    let server = try TestHTTPServer { _ in Reply(body: "{}", delay: 3) }
    defer { server.stop() }
    let result = await Self.result(RocketLaunchLiveProvider(endpoint: server.url, timeout: 0.3))
    #expect(result == .failure(.timedOut))
  }

  /// An HTTP service that fails or answers as told.
  struct StubHTTP: HTTPService {
    let outcome: @Sendable () throws -> HTTPResponse
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { try outcome() }
  }

  @Test func transportErrorsAreClassified() async throws {
    let cases: [(any Error & Sendable, LaunchFetchError)] = [
      (HTTPError.offline(url: "u", reason: "no route"), .offline),
      (HTTPError.timedOut(url: "u"), .timedOut),
      (HTTPError.cancelled, .cancelled),
      (CancellationError(), .cancelled),
      (HTTPError.transport(url: "u", reason: "SSL connect error"), .network("SSL connect error")),
      (HTTPError.tooLarge(url: "u"), .network("u sent a body over the size limit")),
      (HTTPError.status(url: "u", code: 502, body: ""), .server(code: 502)),
    ]
    for (error, expected) in cases {
      let rll = RocketLaunchLiveProvider(endpoint: "https://example.invalid/", http: StubHTTP { throw error })
      #expect(await Self.result(rll) == .failure(expected))
      let ll2 = LaunchLibrary2Provider(endpoint: "https://example.invalid/", http: StubHTTP { throw error })
      #expect(await Self.result(ll2) == .failure(expected))
    }
    // Status 0 (no HTTP response at all) is never a success.
    let body = Array(Self.rllBody([Self.rllItem(1)]).utf8)
    let zero = StubHTTP { HTTPResponse(status: 0, body: body) }
    #expect(await Self.result(RocketLaunchLiveProvider(endpoint: "https://example.invalid/", http: zero)) == .failure(.invalidResponse))
  }

  // MARK: - Cancellation

  @Test(arguments: ["rll", "ll2"])
  func cancellationStopsTheRequest(kind: String) async throws {
    let server = try TestHTTPServer { _ in Reply(body: "{}", hold: true) }
    defer {
      server.release()
      server.stop()
    }
    let endpoint = server.url + "/held"
    let provider: any LaunchProvider =
      kind == "rll" ? RocketLaunchLiveProvider(endpoint: endpoint, timeout: 0) : LaunchLibrary2Provider(endpoint: endpoint, timeout: 0)
    let task = Task { await Self.result(provider) }
    // Wait until the request is really at the server (held there). The
    // bound is generous: under a full parallel test run the task may wait
    // long for a thread of the pool; only a request that never comes fails.
    let deadline = ContinuousClock.now + .seconds(60)
    while server.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
    #expect(server.requests.count == 1)
    // If the cancel did not reach the transfer, only the watchdog's release
    // ends the request: the test then fails on the flag instead of hanging.
    let releasedByWatchdog = Mutex(false)
    let watchdog = Task {
      // Cancelled (the test is done): it released nothing.
      guard (try? await Task.sleep(for: .seconds(60))) != nil else { return }
      releasedByWatchdog.withLock { $0 = true }
      server.release()
    }
    task.cancel()
    let result = await task.value
    watchdog.cancel()
    server.release()
    #expect(result == .failure(.cancelled))
    #expect(releasedByWatchdog.withLock { $0 } == false, "the cancel stopped the transfer itself")
  }

  @Test func cancelledBeforeStartSendsNothing() async throws {
    let calls = Atomic<Int>(0)
    let body = Array(Self.rllBody([Self.rllItem(1)]).utf8)
    let counting = StubHTTP {
      calls.add(1, ordering: .relaxed)
      return HTTPResponse(status: 200, body: body)
    }
    let server = try Self.serving(Self.rllBody([Self.rllItem(1)]))
    defer { server.stop() }
    let providers: [any LaunchProvider] = [
      RocketLaunchLiveProvider(endpoint: "https://example.invalid/", http: counting),
      LaunchLibrary2Provider(endpoint: "https://example.invalid/", http: counting),
      RocketLaunchLiveProvider(endpoint: server.url),
    ]
    for provider in providers {
      let task = Task {
        while !Task.isCancelled { await Task.yield() }
        return await Self.result(provider)
      }
      task.cancel()
      #expect(await task.value == .failure(.cancelled))
    }
    #expect(calls.load(ordering: .relaxed) == 0)
    #expect(server.requests.isEmpty)
  }
}
