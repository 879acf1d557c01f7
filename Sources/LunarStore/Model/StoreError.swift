/// Why the store could not do what was asked, in one line a user
/// understands (the command line prefixes it with `lunar: `).
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The kinds of failure, for callers that react to one.
  public enum Kind: Sendable, Equatable {
    /// A `--store` URL or `LUNAR_STORE` value that names no store.
    case badLocation
    /// A file that is not a Lunar store: refused and left untouched.
    case notAStore
    /// A store written by a newer Lunar.
    case newerStore
    /// No store at the path, and none was to be created.
    case missing
    /// A run reference that is neither `last` nor an id.
    case badReference
    /// No run with that id, or no run at all.
    case noSuchRun
    /// No queued job with that id.
    case noSuchJob
    /// No queue of that name: no job was ever submitted to it.
    case noSuchQueue
    /// A heartbeat or completion with a claim token that is no longer the
    /// job's (it was claimed again, or it finished): refused.
    case staleClaim
    /// A cancellation of a job that already started or finished: refused.
    case notWaiting
    /// No schedule of that name.
    case noSuchSchedule
    /// A schedule of that name exists already.
    case duplicateSchedule
    /// A run that already finished, asked to be cancelled.
    case runNotCancellable
    /// A run whose owner is alive, asked to be resumed.
    case runHeld
    /// A commit, heartbeat or finish of a run by a process that no longer
    /// holds it (its lease expired and another took the run over): refused.
    case staleOwner
    /// A value that cannot be stored, or a stored one that cannot be read back.
    case badValue
    /// The database failed: I/O, a full disk, a lock held past the timeout.
    case database
  }

  /// What kind of failure it is.
  public var kind: Kind
  /// The line to show.
  public var message: String

  /// A failure of `kind`, told by `message`.
  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  /// `error` as a store error: itself if it is one, else a database
  /// failure of the store at `path`.
  init(_ error: any Error, path: String) {
    switch error {
    case let error as StoreError: self = error
    case let error as SQLiteError:
      let advice = error.isBusy ? " (another process held the store's lock for too long)" : ""
      self.init(.database, "store \(path): \(error)\(advice)")
    default: self.init(.database, "store \(path): \(error)")
    }
  }

  public var description: String { message }
}
