import Synchronization

/// A service made when it is first asked for, once, by whoever asks first:
/// a run that never uses it does not pay to build it at start-up.
public final class LazyService<Value: Sendable>: Sendable {
  private let made = Mutex<Value?>(nil)
  private let make: @Sendable () -> Value

  /// A service that `make` builds on first use.
  public init(_ make: @escaping @Sendable () -> Value) { self.make = make }

  /// The service, built on the first call.
  public var value: Value {
    made.withLock { made in
      if let made { return made }
      let value = make()
      made = value
      return value
    }
  }
}

/// A `LazyService` of any type, as `Services` holds it.
protocol LazilyMadeService: Sendable {
  /// The service, built on the first call.
  var madeValue: any Sendable { get }
}

extension LazyService: LazilyMadeService {
  var madeValue: any Sendable { value }
}
