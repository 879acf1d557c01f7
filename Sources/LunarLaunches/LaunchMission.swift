/// One mission a launch flies, as the source names and describes it.
public struct LaunchMission: Sendable, Codable, Equatable, Hashable {
  /// The mission's name ("Starlink Group 12-7").
  public var name: String
  /// What the mission is, when the source says.
  public var description: String?

  public init(name: String, description: String? = nil) {
    self.name = name
    self.description = description
  }
}
