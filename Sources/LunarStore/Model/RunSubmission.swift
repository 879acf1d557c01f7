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
  /// The run it resumes (`lunar submit --resume RUN`): the worker reuses
  /// that run's outputs as `lunar run --resume RUN` does.
  public var resumes: RunID?
  /// The steps it runs again anyway, with the steps that need them
  /// (`--force STEP`, with `resumes`): a rerun from a step.
  public var force: [LuaString]

  /// A submission with every field given.
  public init(
    file: String, arguments: [String], fileFingerprint: Fingerprint, key: LuaString? = nil, schedule: LuaString? = nil,
    submittedAt: StoreTimestamp = .now, resumes: RunID? = nil, force: [LuaString] = []
  ) {
    self.resumes = resumes
    self.force = force
    self.file = file
    self.arguments = arguments
    self.fileFingerprint = fileFingerprint
    self.key = key
    self.schedule = schedule
    self.submittedAt = submittedAt
  }

  /// Throws what a store refuses of the submission before it writes it:
  /// steps forced without a run to resume, an empty step name.
  func check() throws(StoreError) {
    guard let step = force.first else { return }
    guard resumes != nil else { throw StoreError(.badValue, "forcing step \(step.quoted) needs the run it resumes") }
    guard !force.contains(where: \.bytes.isEmpty) else { throw StoreError(.badValue, "a forced step needs its name") }
  }

  /// `force` as the store keeps it: LuaValueCodec bytes, nil for none.
  func forceColumn() throws(StoreError) -> [UInt8]? {
    guard !force.isEmpty else { return nil }
    do {
      return try LuaValueCodec.encode(force.map { .string($0) }, root: "force")
    } catch {
      throw StoreError(.badValue, "the forced steps: \(error)")
    }
  }

  /// The workflow name a queued run is listed under until a worker loads
  /// its file: the file's name without `.lua`.
  public var provisionalWorkflow: LuaString {
    var name = Substring(file.split(separator: "/").last ?? Substring(file))
    if name.hasSuffix(".lua") { name = name.dropLast(4) }
    return LuaString(String(name))
  }
}
