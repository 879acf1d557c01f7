import Foundation
import LunarStore
import Synchronization

/// The store's changes as one number that `/changes` answers at once: a
/// thread of its own waits on the store (`ChangeFeedStore`, a connection
/// of its own) and counts each change it hears of, so a live page asks
/// for its HTML again only when something changed. Started by the first
/// request for it.
final class ChangeFeed: Sendable {
  /// How long one wait on the store lasts, so that `stop` ends the thread soon.
  static let waitTimeout = Duration.milliseconds(500)

  private let location: StoreLocation
  private let count = Atomic<Int64>(0)
  private let started = Atomic<Bool>(false)
  private let stopped = Atomic<Bool>(false)

  /// A feed of the store at `location`, not yet started.
  init(location: StoreLocation) {
    self.location = location
  }

  /// How many changes were heard of so far, starting the feed if it is not.
  var mark: Int64 {
    if !started.exchange(true, ordering: .acquiringAndReleasing) {
      let thread = Thread { [self] in listen() }
      thread.name = "lunar serve changes"
      thread.start()
    }
    return count.load(ordering: .acquiring)
  }

  /// Ends the thread within one wait.
  func stop() {
    stopped.store(true, ordering: .releasing)
  }

  private func listen() {
    var store: (any ChangeFeedStore)?
    while !stopped.load(ordering: .acquiring) {
      do throws(StoreError) {
        if store == nil {
          guard let opened = try location.openRunStore(createIfMissing: false) as? any ChangeFeedStore else { return }
          store = opened
        }
        if try store?.waitForChange(timeout: Self.waitTimeout) == true { count.add(1, ordering: .releasing) }
      } catch {
        // No store yet, or a lost server: count a change (what happened
        // meanwhile is unknown) and try again in a moment.
        store = nil
        count.add(1, ordering: .releasing)
        Thread.sleep(forTimeInterval: 1)
      }
    }
  }
}
