import LuaKit

/// The durable job a workflow step waits for (a `durable = true` step), as
/// the run store keeps it, so a resumed run waits for the same job instead
/// of submitting another.
public struct StepJob: Sendable, Hashable {
  /// The step's name, as bytes.
  public var name: LuaString
  /// The step's attempt that submitted the job, counted across resumed runs.
  public var attempt: Int
  /// The job, in the queue store.
  public var job: JobID
  /// The step's inputs when the job was submitted.
  public var fingerprint: Fingerprint?

  /// A record with every part given.
  public init(name: LuaString, attempt: Int, job: JobID, fingerprint: Fingerprint?) {
    self.name = name
    self.attempt = attempt
    self.job = job
    self.fingerprint = fingerprint
  }
}
