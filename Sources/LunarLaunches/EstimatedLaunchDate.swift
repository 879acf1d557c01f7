/// The parts of an estimated launch date the source gives (RocketLaunch.Live's
/// `est_date`): each unknown part is nil, so "February 2027" has no day.
public struct EstimatedLaunchDate: Sendable, Codable, Equatable, Hashable {
  /// 1–12, as the source gives it.
  public var month: Int?
  public var day: Int?
  public var year: Int?

  public init(month: Int? = nil, day: Int? = nil, year: Int? = nil) {
    self.month = month
    self.day = day
    self.year = year
  }
}
