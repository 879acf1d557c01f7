import LuaKit

/// A step of a run as the store keeps it: what the engine records when the
/// step ends, and what a resume or `lunar runs show` reads back.
public struct StepRecord: Sendable {
  /// The step's name, as bytes; unique within its run.
  public var name: LuaString
  /// Its place in the workflow's declaration order, from 0.
  public var position: Int
  /// How it ended.
  public var status: StepStatus
  /// How many times it ran (retries included; 0 if skipped or reused).
  public var attempts: Int
  /// When its first attempt began.
  public var startedAt: StoreTimestamp?
  /// When it ended.
  public var finishedAt: StoreTimestamp?
  /// What identifies its inputs, for reuse by a later resume.
  public var fingerprint: Fingerprint?
  /// What identifies its code (see docs/workflows.md, "What a resume
  /// reuses"); nil if not recorded (a store written by an older Lunar).
  public var code: Fingerprint?
  /// The values it returned (an empty list if none); nil unless it
  /// succeeded or was reused.
  public var output: [LuaValue]?
  /// Its error message, as bytes; nil unless it failed.
  public var error: LuaString?

  /// A record with every field given.
  public init(
    name: LuaString, position: Int, status: StepStatus, attempts: Int = 1,
    startedAt: StoreTimestamp? = nil, finishedAt: StoreTimestamp? = nil, fingerprint: Fingerprint? = nil,
    code: Fingerprint? = nil, output: [LuaValue]? = nil, error: LuaString? = nil
  ) {
    self.name = name
    self.position = position
    self.status = status
    self.attempts = attempts
    self.startedAt = startedAt
    self.finishedAt = finishedAt
    self.fingerprint = fingerprint
    self.code = code
    self.output = output
    self.error = error
  }
}
