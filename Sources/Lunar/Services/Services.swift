/// The services a run offers to interpreters and actions, by name.
public struct Services: Sendable {
  private var values: [String: any Sendable] = [:]

  /// No services.
  public init() {}

  /// The service registered as `name`, if it has type `T`; one registered
  /// as a `LazyService` is built now if it was not yet.
  public func service<T>(_ name: String, as type: T.Type = T.self) -> T? {
    let value = values[name]
    if let lazy = value as? any LazilyMadeService { return lazy.madeValue as? T }
    return value as? T
  }

  /// Registers (or replaces) a service; a `LazyService` is registered as
  /// the value it will make.
  public mutating func register(_ name: String, _ service: any Sendable) { values[name] = service }

  /// Every registered name.
  public var names: [String] { values.keys.sorted() }
}
