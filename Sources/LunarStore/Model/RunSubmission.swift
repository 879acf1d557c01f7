import LuaKit

/// A run to record as `queued` for a worker to take (`lunar submit`, a
/// schedule's tick).
public struct RunSubmission: Sendable, Equatable {
  /// The workflow file, as given (a worker finds it under its `--root`).
  public var file: String
  /// The script's arguments.
  public var arguments: [String]
  /// The SHA-256 of the file's content when submitted: a worker refuses to
  /// run other code.
  public var fileFingerprint: Fingerprint
  /// A key that makes a second submission with it return the first's run.
  public var key: LuaString?
  /// The schedule whose tick submits it.
  public var schedule: LuaString?
  /// When it was submitted.
  public var submittedAt: StoreTimestamp

  /// A submission with every field given.
  public init(
    file: String, arguments: [String], fileFingerprint: Fingerprint, key: LuaString? = nil, schedule: LuaString? = nil,
    submittedAt: StoreTimestamp = .now
  ) {
    self.file = file
    self.arguments = arguments
    self.fileFingerprint = fileFingerprint
    self.key = key
    self.schedule = schedule
    self.submittedAt = submittedAt
  }

  /// The workflow name a queued run is listed under until a worker loads
  /// its file: the file's name without `.lua`.
  public var provisionalWorkflow: LuaString {
    var name = Substring(file.split(separator: "/").last ?? Substring(file))
    if name.hasSuffix(".lua") { name = name.dropLast(4) }
    return LuaString(String(name))
  }
}
