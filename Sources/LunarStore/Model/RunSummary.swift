/// A run with the counts of its steps by how they ended: a line of `lunar runs`.
public struct RunSummary: Sendable, Equatable {
  /// The run.
  public var run: RunRecord
  /// Steps that ran and succeeded.
  public var succeeded: Int
  /// Steps that failed.
  public var failed: Int
  /// Steps that did not run.
  public var skipped: Int
  /// Steps whose earlier output was reused.
  public var reused: Int

  /// A summary with every count given.
  public init(run: RunRecord, succeeded: Int, failed: Int, skipped: Int, reused: Int) {
    self.run = run
    self.succeeded = succeeded
    self.failed = failed
    self.skipped = skipped
    self.reused = reused
  }
}
