import LuaKit

/// The deadline a workflow sleep step waits for, recorded when the wait
/// starts, so a run that resumes an interrupted one waits only what is left.
public struct StepWait: Sendable, Hashable {
  /// The step's name, as bytes.
  public var name: LuaString
  /// The step's inputs when the wait started.
  public var fingerprint: Fingerprint?
  /// When the wait ends, in milliseconds since the Unix epoch on the clock of the run.
  public var deadlineMilliseconds: Int64

  /// A record with every part given.
  public init(name: LuaString, fingerprint: Fingerprint?, deadlineMilliseconds: Int64) {
    self.name = name
    self.fingerprint = fingerprint
    self.deadlineMilliseconds = deadlineMilliseconds
  }
}
