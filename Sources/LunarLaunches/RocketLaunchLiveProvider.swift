import Lunar

/// Launches from RocketLaunch.Live's JSON feed (the free "next 5" endpoint
/// by default), ids prefixed `rll:`.
///
/// Mapping: `plannedTime` is `t0`, else `win_open`, else nil (an estimate);
/// `sortTime` is `sort_date` (epoch seconds as a string; estimates use the
/// end of their day or month, so ties happen); `dateLabel` is `date_str`;
/// the pad reads "pad name, location name"; the country is the location's
/// (a name: the feed gives no code); the missions carry their descriptions
/// and `est_date` gives the estimated date's parts. Only `id`, `name` and
/// `sort_date` are required: any other field missing or null is unknown
/// (nil), but a field of the wrong type is invalid data.
public actor RocketLaunchLiveProvider: LaunchProvider {
  public static let defaultEndpoint = "https://fdo.rocketlaunch.live/json/launches/next/5"
  public static let idPrefix = "rll:"

  public nonisolated let source = "rocketlaunch.live"
  private nonisolated let feed: JSONFeed

  /// Where launches come from, as text (a URL, or the shipped sample).
  public nonisolated var endpoint: String { feed.location.description }

  /// Where launches come from.
  public nonisolated var location: LaunchFeedLocation { feed.location }

  /// A provider reading `endpoint` (an `http(s)://` URL through `http`, or a
  /// `file://` URL that Lunar reads itself); `timeout` is in seconds (0 for
  /// none).
  public init(endpoint: String = defaultEndpoint, http: any HTTPService = CurlHTTPClient(), timeout: Double = 30) {
    self.init(location: LaunchFeedLocation(endpoint: endpoint), http: http, timeout: timeout)
  }

  /// A provider reading `location`; `.sample` is the feed shipped inside
  /// Lunar.
  public init(location: LaunchFeedLocation, http: any HTTPService = CurlHTTPClient(), timeout: Double = 30) {
    feed = JSONFeed(location: location, sample: { PackageResources.rocketlaunch_live_json }, http: http, timeout: timeout)
  }

  public func fetch(limit: Int) async throws(LaunchFetchError) -> [Launch] {
    try await feed.fetch(limit: limit, Self.launches(from:))
  }

  /// Every launch in a body of the feed's shape, sorted by sort time (ties
  /// in source order); one `.invalidData` naming the field if anything is
  /// malformed.
  public static func launches(from body: [UInt8]) throws(LaunchFetchError) -> [Launch] {
    let envelope = try ProviderSupport.decode(Envelope.self, from: body)
    return ProviderSupport.ordered(envelope.result.elements.map(\.launch))
  }
}

private struct Envelope: Decodable {
  let result: JSONArray<Item>
}

private struct Item: Decodable {
  let id: Int
  let name: String
  let sortDate: EpochSeconds
  let provider: NamedEntity?
  let vehicle: NamedEntity?
  let pad: Pad?
  let missions: JSONArray<MissionEntity>?
  let estDate: EstimatedDate?
  let winOpen: ISOTime?
  let t0: ISOTime?
  let dateStr: String?
  let slug: String?

  enum CodingKeys: String, CodingKey {
    case id, name, provider, vehicle, pad, missions, t0, slug
    case sortDate = "sort_date"
    case estDate = "est_date"
    case winOpen = "win_open"
    case dateStr = "date_str"
  }

  struct Pad: Decodable {
    let name: String?
    let location: Location?
  }

  struct Location: Decodable {
    let name: String?
    let country: String?
  }

  /// Each part may be missing or null; the quarter is not read.
  struct EstimatedDate: Decodable {
    let month: Int?
    let day: Int?
    let year: Int?
  }

  var launch: Launch {
    Launch(
      id: RocketLaunchLiveProvider.idPrefix + String(id),
      name: name,
      missions: (missions?.elements ?? []).map(\.mission),
      estimatedDate: EstimatedLaunchDate(month: estDate?.month, day: estDate?.day, year: estDate?.year),
      provider: provider?.name,
      vehicle: vehicle?.name,
      pad: ProviderSupport.padLabel(pad?.name, location: pad?.location?.name),
      country: ProviderSupport.nonEmpty(pad?.location?.country),
      countryCode: nil,
      plannedTime: (t0 ?? winOpen)?.seconds,
      sortTime: sortDate.seconds,
      dateLabel: dateStr,
      detailsURL: ProviderSupport.nonEmpty(slug).map { "https://www.rocketlaunch.live/launch/\($0)" })
  }
}
