import CLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// A counting semaphore a thread sleeps on with a timeout, posted when
/// there is news for it (a job finished).
final class WakeSignal: @unchecked Sendable {
  // Safe: the semaphore is only used through sem_post and sem_clockwait,
  // which are thread-safe; it is allocated once and freed on deinit, when
  // no thread can hold a reference any more.
  private let semaphore: UnsafeMutablePointer<sem_t>

  init() {
    semaphore = .allocate(capacity: 1)
    sem_init(semaphore, 0, 0)
  }

  deinit {
    sem_destroy(semaphore)
    semaphore.deallocate()
  }

  /// Wakes one wait (or the next one, if none waits now).
  func post() { sem_post(semaphore) }

  /// Sleeps until posted or `seconds` pass (or a signal arrives), on the
  /// monotonic clock: a step of the wall clock neither stretches nor cuts it.
  func wait(seconds: Double) {
    _ = lunar_semwait(semaphore, seconds)
  }
}
