import Lunar

/// Launches from The Space Devs' Launch Library 2 (API 2.3.0's
/// `launches/upcoming` by default), ids prefixed `ll2:`.
///
/// Mapping: the name is the part of `name` after " | " (the vehicle comes
/// first); `sortTime` is `net`; `plannedTime` is `net` only when
/// `net_precision` is Second or Minute. A missing or null `net_precision`
/// counts as exact (older API versions had none and gave every `net` to the
/// minute). Coarser precisions are estimates labelled from `net`'s UTC date:
/// Hour "May 07 ~14:00 UTC", Day "May 07", Week "Week of May 07", Month
/// "May 2024", Quarter "Q2 2024", Half Year "H1 2024", Year "2024"; an
/// unknown precision is treated as an estimate labelled by day. Exact
/// launches are labelled by day too. Launches already flown (status Success,
/// Failure, Partial Failure or In Flight, by abbreviation or name) are
/// dropped.
///
/// Both API shapes read. The country's name is the `name` of API 2.3.0's
/// `country` object (the pad's, else its location's); API 2.2.0 gives no
/// name. Its three-letter code is API 2.2.0's `country_code` (the
/// location's, else the pad's) or API 2.3.0's `alpha_3_code`. The mission
/// carries its description. Only `id`, `name` and `net` are required: the
/// provider, the rocket and its configuration, the pad and its parts, the
/// mission and the status missing or null are unknown (nil), but a field of
/// the wrong type is invalid data.
public actor LaunchLibrary2Provider: LaunchProvider {
  public static let defaultEndpoint = "https://ll.thespacedevs.com/2.3.0/launches/upcoming/"
  public static let idPrefix = "ll2:"

  public nonisolated let source = "launchlibrary2"
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
    feed = JSONFeed(location: location, sample: { PackageResources.launch_library_2_json }, http: http, timeout: timeout)
  }

  public func fetch(limit: Int) async throws(LaunchFetchError) -> [Launch] {
    try await feed.fetch(limit: limit, Self.launches(from:))
  }

  /// Every launch not yet flown in a body of the API's shape, sorted by sort
  /// time (ties in source order); one `.invalidData` naming the field if
  /// anything is malformed.
  public static func launches(from body: [UInt8]) throws(LaunchFetchError) -> [Launch] {
    let envelope = try ProviderSupport.decode(Envelope.self, from: body)
    return ProviderSupport.ordered(envelope.results.elements.filter { !$0.hasFlown }.map(\.launch))
  }

  /// The planned time and date label for a `net` known to `precision` (a
  /// `net_precision` name such as "Month"; nil when the source gives none).
  public static func schedule(net: Double, precision: String?) -> (plannedTime: Double?, dateLabel: String) {
    let date = UTCDate(net)
    let day = "\(date.monthName) \(ISO8601.pad(date.day, 2))"
    switch Precision(precision) {
    case .exact: return (net, day)
    case .hour: return (nil, "\(day) ~\(ISO8601.pad(date.hour, 2)):00 UTC")
    case .day: return (nil, day)
    case .week: return (nil, "Week of \(day)")
    case .month: return (nil, "\(date.monthName) \(date.year)")
    case .quarter: return (nil, "Q\((date.month - 1) / 3 + 1) \(date.year)")
    case .half: return (nil, "H\((date.month - 1) / 6 + 1) \(date.year)")
    case .year: return (nil, "\(date.year)")
    }
  }
}

/// How precisely `net` is known, from a `net_precision` name or abbreviation.
private enum Precision {
  case exact, hour, day, week, month, quarter, half, year

  init(_ name: String?) {
    guard let name else {
      self = .exact
      return
    }
    let key = name.lowercased()
    if ["second", "minute", "sec", "min"].contains(key) {
      self = .exact
    } else if ["hour", "hr"].contains(key) {
      self = .hour
    } else if key.contains("quarter") || key == "q" {
      self = .quarter
    } else if key.contains("half") || key == "h" || key == "hy" {
      self = .half
    } else if key.contains("year") || key == "y" || key == "fy" {
      self = .year
    } else if key.contains("month") || key == "m" {
      self = .month
    } else if key.contains("week") || key == "w" {
      self = .week
    } else {
      // Day, Morning, Afternoon, and anything new: at least the day is right.
      self = .day
    }
  }
}

private struct Envelope: Decodable {
  let results: JSONArray<Item>
}

private struct Item: Decodable {
  let id: String
  let name: String
  let status: Status?
  let net: ISOTime
  let netPrecision: Status?
  let launchServiceProvider: NamedEntity?
  let rocket: Rocket?
  let mission: MissionEntity?
  let pad: Pad?
  let url: String?

  enum CodingKeys: String, CodingKey {
    case id, name, status, net, rocket, mission, pad, url
    case netPrecision = "net_precision"
    case launchServiceProvider = "launch_service_provider"
  }

  /// A status or a precision: a name and an abbreviation, either may be absent.
  struct Status: Decodable {
    let name: String?
    let abbrev: String?
  }

  struct Rocket: Decodable {
    let configuration: NamedEntity?
  }

  struct Pad: Decodable {
    let name: String?
    let location: Location?
    /// API 2.2.0.
    let countryCode: String?
    /// API 2.3.0.
    let country: Country?

    enum CodingKeys: String, CodingKey {
      case name, location, country
      case countryCode = "country_code"
    }
  }

  struct Location: Decodable {
    let name: String?
    let countryCode: String?
    let country: Country?

    enum CodingKeys: String, CodingKey {
      case name, country
      case countryCode = "country_code"
    }
  }

  /// API 2.3.0's country object: codes and a name, any of them absent.
  struct Country: Decodable {
    let alpha3: String?
    let alpha2: String?
    let name: String?

    enum CodingKeys: String, CodingKey {
      case name
      case alpha3 = "alpha_3_code"
      case alpha2 = "alpha_2_code"
    }

    init(from decoder: any Decoder) throws {
      // A plain string is taken as the country's name.
      if let name = try? decoder.singleValueContainer().decode(String.self) {
        (alpha3, alpha2, self.name) = (nil, nil, name)
        return
      }
      let container = try decoder.container(keyedBy: CodingKeys.self)
      alpha3 = try container.decodeIfPresent(String.self, forKey: .alpha3)
      alpha2 = try container.decodeIfPresent(String.self, forKey: .alpha2)
      name = try container.decodeIfPresent(String.self, forKey: .name)
    }

  }

  /// The launch's country's name, from API 2.3.0's country objects.
  var countryName: String? {
    ProviderSupport.nonEmpty(pad?.country?.name) ?? ProviderSupport.nonEmpty(pad?.location?.country?.name)
  }

  /// The launch's country's three-letter code, from whichever shape the API
  /// gave (a two-letter code is not one).
  var countryCode: String? {
    ProviderSupport.nonEmpty(pad?.location?.countryCode) ?? ProviderSupport.nonEmpty(pad?.countryCode)
      ?? ProviderSupport.nonEmpty(pad?.country?.alpha3) ?? ProviderSupport.nonEmpty(pad?.location?.country?.alpha3)
  }

  private static let flown: Set<String> = [
    "success", "failure", "partial failure", "in flight",
    "launch successful", "launch failure", "launch was a partial failure", "launch in flight",
  ]

  var hasFlown: Bool {
    [status?.abbrev, status?.name].contains { $0.map { Self.flown.contains($0.lowercased()) } ?? false }
  }

  var launch: Launch {
    let (plannedTime, dateLabel) = LaunchLibrary2Provider.schedule(
      net: net.seconds, precision: netPrecision?.name ?? netPrecision?.abbrev)
    let shortName = name.firstRange(of: " | ").map { String(name[$0.upperBound...]) } ?? name
    return Launch(
      id: LaunchLibrary2Provider.idPrefix + id,
      name: shortName.isEmpty ? name : shortName,
      missions: mission.map { [$0.mission] } ?? [],
      provider: launchServiceProvider?.name,
      vehicle: rocket?.configuration?.name,
      pad: ProviderSupport.padLabel(pad?.name, location: pad?.location?.name),
      country: countryName,
      countryCode: countryCode,
      plannedTime: plannedTime,
      sortTime: net.seconds,
      dateLabel: dateLabel,
      detailsURL: ProviderSupport.nonEmpty(url))
  }
}
