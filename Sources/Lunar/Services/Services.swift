/// The services a run offers to interpreters and actions, by name.
public struct Services: Sendable {
  private var values: [String: any Sendable] = [:]

  /// No services.
  public init() {}

  /// The service registered as `name`, if it has type `T`.
  public func service<T>(_ name: String, as type: T.Type = T.self) -> T? { values[name] as? T }

  /// Registers (or replaces) a service.
  public mutating func register(_ name: String, _ service: any Sendable) { values[name] = service }

  /// Every registered name.
  public var names: [String] { values.keys.sorted() }
}
