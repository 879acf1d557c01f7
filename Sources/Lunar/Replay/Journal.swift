import LuaKit
import Synchronization

/// The record of a run: every action with its input and its output or
/// error, and the results of services that touch the outside world (HTTP,
/// launch fetches, the clock). Each call is kept under the step that made
/// it (its task's `journalScope`) and its position in that step, so steps
/// that run at once replay alike however they interleave. Recording writes
/// a `JournalFile`; replaying answers those services from it and stops a
/// step at its first divergence.
public final class Journal: Sendable {
  /// Record or replay.
  public enum Mode: Sendable, Equatable {
    case record(path: String)
    case replay(path: String)
  }

  /// Where a call sits: the step that made it (nil outside any step) and
  /// its position among that step's calls, from 1.
  public struct Call: Sendable, Hashable {
    /// The step's name, or nil for the main chunk and tasks outside steps.
    public let scope: LuaString?
    /// The call's number in its scope, from 1.
    public let position: Int

    /// A call at `position` in `scope`.
    public init(scope: LuaString?, position: Int) {
      self.scope = scope
      self.position = position
    }
  }

  /// A mismatch between what the script asks and what the journal holds.
  public struct Divergence: Error, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// Why a call could not be recorded (a value too large for a frame).
  public struct RecordError: Error, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// The mode this journal runs in.
  public let mode: Mode
  /// The file being recorded (nil when replaying).
  let output: FileOutput?
  private struct State {
    /// How many calls each scope has made.
    var made: [LuaString?: Int] = [:]
    /// Replaying: the recorded calls, by scope and position.
    var recorded: [LuaString?: [Int: JournalEntry]] = [:]
    /// Replaying: each scope's first divergence, repeated by its later
    /// calls (a retried step must not wander on through the journal).
    var divergences: [LuaString?: Divergence] = [:]
  }
  private let state = Mutex(State())
  /// Replaying: whether the file's last entry was cut short.
  private let cutShort: Bool

  /// What a recording is, for `FileOutput`.
  public static var kind: FileOutput.Kind { JournalFile.kind }

  /// A journal recording to, or replaying from, a file. A recording never
  /// overwrites a file that is not a journal (see `FileOutput`); a replay
  /// reads a regular file of bounded size.
  public init(_ mode: Mode) throws {
    self.mode = mode
    switch mode {
    case .record(let path):
      output = try FileOutput(path: path, kind: JournalFile.kind, contents: JournalFile.header)
      cutShort = false
    case .replay(let path):
      output = nil
      let (entries, cutShort) = try JournalFile.entries(in: try BoundedFileReader.read(path), path: path)
      self.cutShort = cutShort
      state.withLock { state in
        for entry in entries { state.recorded[entry.call.scope, default: [:]][entry.call.position] = entry }
      }
    }
  }

  /// True when replaying.
  public var isReplaying: Bool { if case .replay = mode { true } else { false } }

  /// Numbers the next call in `scope`. Take it on the loop when the call
  /// is made, even if its result is recorded later from another thread.
  public func nextCall(in scope: LuaString?) -> Call {
    state.withLock { state in
      let position = state.made[scope, default: 0] + 1
      state.made[scope] = position
      return Call(scope: scope, position: position)
    }
  }

  /// `step(kind:key:result:at:)` for the next call in `scope`.
  @discardableResult
  public func step(kind: LuaString, key: LuaTable, result: LuaTable? = nil, in scope: LuaString?) throws -> LuaTable? {
    try step(kind: kind, key: key, result: result, at: nextCall(in: scope))
  }

  /// Records `call` (recording), or checks that the journal holds the same
  /// call there and returns its result (replaying; an empty table if it
  /// recorded none). `key` holds the fields that must match.
  @discardableResult
  public func step(kind: LuaString, key: LuaTable, result: LuaTable? = nil, at call: Call) throws -> LuaTable? {
    guard isReplaying else {
      let entry = JournalEntry(call: call, kind: kind, key: key, result: result)
      guard let frame = try JournalFile.frame(entry) else {
        throw RecordError(description: "cannot record \(kind): it is larger than 4 GiB")
      }
      try output?.write(bytes: frame)
      return nil
    }
    let cutShort = cutShort
    return try state.withLock { state throws(Divergence) -> LuaTable in
      if let divergence = state.divergences[call.scope] { throw divergence }
      let asked = "\(kind) \(LuaValue.table(key))"
      guard let entry = state.recorded[call.scope]?[call.position] else {
        let ended = call.scope == nil ? "the journal has ended" : "the journal has ended for this step"
        let divergence = Divergence(
          description: "replay diverged\(Self.place(of: call)): \(ended)\(cutShort ? " (its last entry was cut short)" : ""), the script asked for \(asked)")
        state.divergences[call.scope] = divergence
        throw divergence
      }
      guard entry.kind == kind, Self.same(entry.key, key) else {
        let divergence = Divergence(
          description: "replay diverged\(Self.place(of: call)): the journal has \(entry.kind) \(LuaValue.table(entry.key)), the script asked for \(asked)")
        state.divergences[call.scope] = divergence
        throw divergence
      }
      return entry.result ?? LuaTable()
    }
  }

  /// ` in step "fetch" at call 2`, or ` at call 2` outside any step.
  private static func place(of call: Call) -> String {
    let step = call.scope.map { " in step \"\($0.lossyString)\"" } ?? ""
    return "\(step) at call \(call.position)"
  }

  /// True if `a` and `b` are the same value bit for bit (NaN and -0.0
  /// included): their canonical encodings are equal.
  private static func same(_ a: LuaTable, _ b: LuaTable) -> Bool {
    guard let first = try? LuaValueCodec.encode([.table(a)]), let second = try? LuaValueCodec.encode([.table(b)]) else {
      return false
    }
    return first == second
  }
}
