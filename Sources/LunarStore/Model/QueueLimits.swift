import LuaKit

/// What a queue store accepts, checked before any lock is taken so a bad
/// request fails alone, in one line that names what is wrong.
public enum QueueLimits {
  /// The longest queue or action name, in bytes (a PostgreSQL notification
  /// carries a queue's name in hex, in at most 8,000 bytes).
  public static let maximumNameBytes = 1_000
  /// The largest input, output or error a job keeps, in bytes.
  public static let maximumValueBytes = 16 * 1024 * 1024
  /// How many of a job's leases may be lost (their worker ended before
  /// completing the job) before a claim abandons the job, by default.
  public static let defaultLostLeaseLimit = 3

  /// The error of a job abandoned after `lostLeases` lost leases.
  public static func abandonment(lostLeases: Int) -> String {
    "abandoned after \(lostLeases) lost lease\(lostLeases == 1 ? "" : "s"): every worker that claimed it ended before"
      + " finishing it (a crash, os.exit, a kill or a lost host), so no worker runs it again"
      + " (lunar worker --max-lost-leases sets how many leases may be lost)"
  }

  /// The prefix of the queues a run's own worker processes serve (`lunar
  /// run --processes`): a claim of every queue (no queue named) skips
  /// them, so a worker of the whole store never takes another run's step.
  public static let privateQueuePrefix: [UInt8] = Array("lunar.processes/".utf8)

  /// `maximumValueBytes` as messages say it: `16 MiB`.
  public static let maximumValueText = "\(maximumValueBytes / (1024 * 1024)) MiB"

  /// Throws unless `name` is a usable name of a `what` ("queue", "action").
  public static func check(name: LuaString, _ what: String) throws(StoreError) {
    let article = what.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    guard !name.bytes.isEmpty else { throw StoreError(.badValue, "\(article) \(what) name must not be empty") }
    guard name.bytes.count <= maximumNameBytes else {
      throw StoreError(
        .badValue, "\(article) \(what) name is at most \(maximumNameBytes) bytes long, got \(name.bytes.count) bytes")
    }
  }

  /// Throws unless `bytes`, the `what` of a job ("input", "output"), fits.
  static func check(value bytes: [UInt8], _ what: String) throws(StoreError) {
    guard bytes.count <= maximumValueBytes else {
      throw StoreError(
        .badValue, "a job's \(what) is at most \(maximumValueBytes) bytes once encoded, got \(bytes.count) bytes")
    }
  }

  /// Throws unless `worker` names a worker.
  static func check(worker: WorkerID) throws(StoreError) {
    guard !worker.name.isEmpty else { throw StoreError(.badValue, "a worker id must not be empty") }
    guard worker.name.utf8.count <= maximumNameBytes else {
      throw StoreError(.badValue, "a worker id is at most \(maximumNameBytes) bytes long, got \(worker.name.utf8.count) bytes")
    }
  }

  /// `lease` in microseconds, unless it is not positive or absurdly long.
  static func microseconds(of lease: Duration) throws(StoreError) -> Int64 {
    let (seconds, attoseconds) = lease.components
    guard seconds >= 0, seconds < 366 * 86_400, lease > .zero else {
      throw StoreError(.badValue, "a lease must be longer than 0 seconds and shorter than a year, got \(lease)")
    }
    return max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
  }

  /// Throws unless `limit` is positive.
  static func check(limit: Int) throws(StoreError) {
    guard limit > 0 else { throw StoreError(.badValue, "a limit must be positive, got \(limit)") }
  }
}
