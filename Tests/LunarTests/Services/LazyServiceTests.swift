import Synchronization
import Testing

@testable import Lunar

/// A service registered as a `LazyService` is built on first use, once,
/// and found under its own type.
@Suite struct LazyServiceTests {
  final class Counter: Sendable {
    let made = Mutex(0)
  }

  @Test func aLazyServiceIsBuiltWhenFirstAskedForAndOnlyOnce() {
    let counter = Counter()
    var services = Services()
    services.register("clock", LazyService { () -> String in
      counter.made.withLock { $0 += 1 }
      return "made"
    })
    #expect(counter.made.withLock { $0 } == 0)
    #expect(services.names == ["clock"])
    #expect(services.service("clock", as: String.self) == "made")
    #expect(services.service("clock", as: String.self) == "made")
    #expect(counter.made.withLock { $0 } == 1)
  }

  @Test func aLazyServiceOfAnotherTypeIsNotFound() {
    var services = Services()
    services.register("number", LazyService { 42 })
    #expect(services.service("number", as: String.self) == nil)
    #expect(services.service("number", as: Int.self) == 42)
  }

  @Test func copiesOfTheRegistryShareTheOneService() {
    let counter = Counter()
    var services = Services()
    services.register("shared", LazyService { () -> Int in counter.made.withLock { $0 += 1; return $0 } })
    let copy = services
    #expect(copy.service("shared", as: Int.self) == 1)
    #expect(services.service("shared", as: Int.self) == 1)
  }
}
