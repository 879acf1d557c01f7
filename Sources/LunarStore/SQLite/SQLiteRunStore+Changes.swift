import Glibc

extension SQLiteRunStore: ChangeFeedStore {
  /// How often `waitForChange` asks SQLite: well inside the second a page
  /// of a SQLite store may lag.
  static let changePollInterval = Duration.milliseconds(50)

  public func waitForChange(timeout: Duration) throws(StoreError) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    // `data_version` changes on this connection when another commits.
    let seen = try lastDataVersion.withLock { last throws(StoreError) -> Int64 in
      if let last { return last }
      let now = try dataVersion()
      last = now
      return now
    }
    while true {
      let now = try dataVersion()
      if now != seen {
        lastDataVersion.withLock { $0 = now }
        return true
      }
      guard clock.now < deadline else { return false }
      let (seconds, attoseconds) = min(Self.changePollInterval, deadline - clock.now).components
      var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
      var rest = timespec()
      while nanosleep(&pause, &rest) != 0 && errno == EINTR { pause = rest }
    }
  }

  private func dataVersion() throws(StoreError) -> Int64 {
    guard case .integer(let version)? = try pragma("data_version") else {
      throw StoreError(.database, "store \(path): PRAGMA data_version gave no number")
    }
    return version
  }
}
