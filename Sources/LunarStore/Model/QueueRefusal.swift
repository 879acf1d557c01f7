import LuaKit

/// The errors a queue store gives when a job's state forbids what was asked,
/// worded the same on every backend.
enum QueueRefusal {
  /// Job `id` is not in the store at `location`.
  static func noSuchJob(_ id: JobID, in location: String) -> StoreError {
    StoreError(.noSuchJob, "no job \(id) in \(location)")
  }

  /// Why a heartbeat or completion (`what`) with `token` was refused for
  /// `job` (nil: there is no such job).
  static func staleClaim(_ job: JobRecord?, id: JobID, token: ClaimToken, _ what: String, in location: String) -> StoreError {
    guard let job else { return noSuchJob(id, in: location) }
    let reason: String
    switch job.status {
    case .running where job.claim != token:
      reason = "was claimed again (attempt \(job.attempts)) after the lease of claim \(token) expired"
    case .waiting, .running:
      reason = "is not held by claim \(token)"
    case .succeeded, .failed, .cancelled:
      reason = job.claim == token ? "has already \(job.status.rawValue)" : "has \(job.status.rawValue) under another claim"
    }
    return StoreError(.staleClaim, "\(name(of: job)) \(reason): this \(what) is refused")
  }

  /// Why `job`, which is not waiting, cannot be cancelled (nil: there is no
  /// such job).
  static func notWaiting(_ job: JobRecord?, id: JobID, in location: String) -> StoreError {
    guard let job else { return noSuchJob(id, in: location) }
    let state = job.status == .running ? "has started" : "has already \(job.status.rawValue)"
    return StoreError(.notWaiting, "\(name(of: job)) \(state): only a job that has not started can be cancelled")
  }

  /// `queue` has never had a job in the store at `location`.
  static func noSuchQueue(_ queue: LuaString, in location: String) -> StoreError {
    StoreError(.noSuchQueue, "no queue \(queue.quoted) in \(location)")
  }

  /// `job 12 (queue "deploys" #3)`.
  static func name(of job: JobRecord) -> String {
    "job \(job.id) (queue \(job.queue.quoted) #\(job.sequence))"
  }
}
