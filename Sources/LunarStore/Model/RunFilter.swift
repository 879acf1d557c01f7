import LuaKit

/// Which runs a listing asks for: each part given narrows it, and `before`
/// pages on (the runs older than the last one shown).
public struct RunFilter: Sendable, Equatable {
  /// Runs of this workflow only.
  public var workflow: LuaString?
  /// Runs in this status only.
  public var status: RunStatus?
  /// Runs started at or after this time only.
  public var startedSince: StoreTimestamp?
  /// Runs older than this one only (a smaller id).
  public var before: RunID?

  /// A filter of the parts given; none lists every run.
  public init(workflow: LuaString? = nil, status: RunStatus? = nil, startedSince: StoreTimestamp? = nil, before: RunID? = nil) {
    self.workflow = workflow
    self.status = status
    self.startedSince = startedSince
    self.before = before
  }
}
