import LuaKit

/// A run as the store keeps it.
public struct RunRecord: Sendable, Equatable {
  /// Its number in the store.
  public var id: RunID
  /// The workflow's name, as bytes.
  public var workflow: LuaString
  /// The script file, as given on the command line.
  public var file: String
  /// The script's arguments.
  public var arguments: [String]
  /// Where it stands.
  public var status: RunStatus
  /// When it began.
  public var startedAt: StoreTimestamp
  /// When it ended; nil while running (or if its process died).
  public var finishedAt: StoreTimestamp?
  /// The run whose outputs it reused.
  public var resumedFrom: RunID?
  /// The machine that ran it.
  public var host: String
  /// The process that ran it.
  public var pid: Int32

  /// A record with every field given.
  public init(
    id: RunID, workflow: LuaString, file: String, arguments: [String], status: RunStatus,
    startedAt: StoreTimestamp, finishedAt: StoreTimestamp?, resumedFrom: RunID?, host: String, pid: Int32
  ) {
    self.id = id
    self.workflow = workflow
    self.file = file
    self.arguments = arguments
    self.status = status
    self.startedAt = startedAt
    self.finishedAt = finishedAt
    self.resumedFrom = resumedFrom
    self.host = host
    self.pid = pid
  }
}
