/// One upcoming launch, from any source: a Sendable, Codable value. What the
/// source leaves out (or gives as null) is nil: unknown, never guessed.
public struct Launch: Sendable, Codable, Equatable, Hashable {
  /// Unique across sources: the source's prefix and its own id (`rll:4711`, `ll2:e3df...`).
  public var id: String
  /// The launch's name ("Starlink Group 6-33").
  public var name: String
  /// The missions, in the source's order.
  public var missions: [LaunchMission]
  /// The parts of the estimated date the source gives (none for Launch
  /// Library 2, whose `dateLabel` says how precise its time is).
  public var estimatedDate: EstimatedLaunchDate
  /// The launch provider ("SpaceX"), if known.
  public var provider: String?
  /// The vehicle ("Falcon 9"), if known.
  public var vehicle: String?
  /// The pad ("SLC-40"), with its location when known; nil when neither is.
  public var pad: String?
  /// The country's name ("United States"), if the source gives it.
  public var country: String?
  /// The country's three-letter code ("USA"), if the source gives it.
  public var countryCode: String?
  /// The exact planned time (seconds since the epoch), when the source
  /// knows it to the minute; nil for estimates ("NET March").
  public var plannedTime: Double?
  /// The time to sort by: the planned time, or the end of the estimated
  /// period. Ties happen.
  public var sortTime: Double
  /// A human label for the date ("Dec 07", "Q2 2024"), if known.
  public var dateLabel: String?
  /// The launch's page, if any.
  public var detailsURL: String?

  public init(
    id: String, name: String, missions: [LaunchMission], estimatedDate: EstimatedLaunchDate = EstimatedLaunchDate(),
    provider: String?, vehicle: String?, pad: String?, country: String?, countryCode: String? = nil,
    plannedTime: Double?, sortTime: Double, dateLabel: String?, detailsURL: String?
  ) {
    self.id = id
    self.name = name
    self.missions = missions
    self.estimatedDate = estimatedDate
    self.provider = provider
    self.vehicle = vehicle
    self.pad = pad
    self.country = country
    self.countryCode = countryCode
    self.plannedTime = plannedTime
    self.sortTime = sortTime
    self.dateLabel = dateLabel
    self.detailsURL = detailsURL
  }

  /// The first mission's description: the launch's mission description
  /// (the design's `primaryMissionDescription`).
  public var missionDescription: String? { missions.first?.description }
}

/// Why a fetch failed, classified for the schedule's snapshot.
public enum LaunchFetchError: Error, Sendable, Equatable, CustomStringConvertible {
  /// No connection: could not resolve or connect.
  case offline
  case timedOut
  /// The server answered with a status outside 200–299.
  case server(code: Int)
  /// Not an HTTP response (or no response at all).
  case invalidResponse
  /// The body is not the data the source promises; the reason names the field.
  case invalidData(String)
  /// Any other transport failure.
  case network(String)
  case cancelled

  public var description: String {
    switch self {
    case .offline: "offline"
    case .timedOut: "timed out"
    case .server(let code): "server error (HTTP \(code))"
    case .invalidResponse: "invalid response"
    case .invalidData(let reason): "invalid data: \(reason)"
    case .network(let reason): "network error: \(reason)"
    case .cancelled: "cancelled"
    }
  }
}

/// One external source of launches: its request, its decoding and its
/// errors. Each provider is its own actor.
public protocol LaunchProvider: Actor {
  /// The source's name ("rocketlaunch.live", "launchlibrary2"), also the
  /// id prefix's key.
  nonisolated var source: String { get }
  /// Fetches upcoming launches (at most `limit`), sorted by sort time.
  func fetch(limit: Int) async throws(LaunchFetchError) -> [Launch]
}
