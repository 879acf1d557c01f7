import LuaKit

/// A run recorded by a submission, with what only submitted runs have.
public struct SubmittedRun: Sendable, Equatable {
  /// The run.
  public var run: RunRecord
  /// The file's fingerprint when it was submitted.
  public var fileFingerprint: Fingerprint?
  /// Its submission key, if it had one.
  public var key: LuaString?
  /// The schedule that started it, if one did.
  public var schedule: LuaString?
  /// False when a submission with the same key had already recorded it.
  public var isNew: Bool
  /// How many times a worker took it over from an owner that was lost.
  public var takeovers: Int

  /// A submitted run with every field given.
  public init(
    run: RunRecord, fileFingerprint: Fingerprint?, key: LuaString?, schedule: LuaString?, isNew: Bool, takeovers: Int = 0
  ) {
    self.takeovers = takeovers
    self.run = run
    self.fileFingerprint = fileFingerprint
    self.key = key
    self.schedule = schedule
    self.isNew = isNew
  }
}
