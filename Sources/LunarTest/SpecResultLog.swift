import Synchronization

/// The results of one spec file, appended as each test ends. It lives
/// outside the Lua state, so a file stopped by Ctrl-C or a failure of its
/// runtime still reports the tests that finished.
public final class SpecResultLog: Sendable {
  private let entries = Mutex<[SpecResult]>([])

  /// An empty log.
  public init() {}

  /// Adds one result.
  public func append(_ result: SpecResult) {
    entries.withLock { $0.append(result) }
  }

  /// Every result so far, in the order they happened.
  public var results: [SpecResult] {
    entries.withLock { $0 }
  }

  /// Every result so far, which the log then forgets (a runtime reused for
  /// the next file starts it empty).
  public func take() -> [SpecResult] {
    entries.withLock { entries in
      defer { entries = [] }
      return entries
    }
  }
}
