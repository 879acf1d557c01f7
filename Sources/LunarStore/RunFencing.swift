/// The store's refusals of a run's owner, in the same words on SQLite and
/// PostgreSQL.
enum RunFencing {
  /// The refusal of `what` (`commit`, `heartbeat`, `finish`) of `run` by
  /// the holder of `token`, the run being now held by `current` (token,
  /// host, pid) with status `status`, in the store at `location`.
  static func stale(
    _ what: String, run: RunID, token: ClaimToken, current: (token: Int64, host: String, pid: Int64, status: String),
    in location: String
  ) -> StoreError {
    let now =
      current.token != token.rawValue
      ? "it was taken over by process \(current.pid) on \(current.host) (owner token \(current.token))"
      : "it is \(current.status)"
    return StoreError(
      .staleOwner,
      "run \(run) in \(location): refused the \(what) of its owner with token \(token): \(now); that process stops its run")
  }

  /// The refusal to cancel `run`, which already ended with `status`.
  static func finished(_ run: RunID, status: String, in location: String) -> StoreError {
    StoreError(.runNotCancellable, "run \(run) in \(location) already finished (\(status)): nothing to cancel")
  }
}
