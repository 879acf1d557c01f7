import LuaKit
import Synchronization

/// The record of a run: every action with its input and its output or
/// error, and the results of services that touch the outside world (HTTP,
/// launch fetches, the clock). Recording writes it as JSON lines; replaying
/// answers those services from it and stops at the first divergence.
public final class Journal: Sendable {
  /// Record or replay.
  public enum Mode: Sendable, Equatable {
    case record(path: String)
    case replay(path: String)
  }

  /// A mismatch between what the script asks and what the journal holds.
  public struct Divergence: Error, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// The mode this journal runs in.
  public let mode: Mode
  /// The file being recorded (nil when replaying).
  let output: FileOutput?
  private struct State {
    var entries: [LuaValue] = []
    var next = 0
  }
  private let state = Mutex(State())

  /// What a recording is: JSON lines that begin with the entry's kind.
  public static let kind = FileOutput.Kind.starting(with: [#"{"kind":"#], name: "a Lunar journal")

  /// A journal recording to, or replaying from, a file. A recording never
  /// overwrites a file that is not a journal (see `FileOutput`); a replay
  /// reads a regular file of bounded size.
  public init(_ mode: Mode) throws {
    self.mode = mode
    switch mode {
    case .record(let path):
      output = try FileOutput(path: path, kind: Self.kind)
    case .replay(let path):
      output = nil
      let text = String(decoding: try BoundedFileReader.read(path), as: UTF8.self)
      var entries: [LuaValue] = []
      for (number, line) in text.split(separator: "\n").enumerated() where !line.isEmpty {
        do {
          entries.append(try JSON.decode(String(line)))
        } catch {
          throw Divergence(description: "\(path):\(number + 1): not a journal entry: \(error)")
        }
      }
      state.withLock { $0.entries = entries }
    }
  }

  /// True when replaying.
  public var isReplaying: Bool { if case .replay = mode { true } else { false } }

  /// Records an entry (recording), or checks that the next entry is the
  /// same and returns it (replaying). `key` holds the fields that must match.
  @discardableResult
  public func step(kind: String, key: LuaTable, result: LuaTable? = nil) throws -> LuaTable? {
    switch mode {
    case .record:
      var entry = key
      entry["kind"] = .string(LuaString(kind))
      if let result { for (k, v) in result.fields { entry[k] = v } }
      try output?.write(JSON.encode(.table(entry), keyOrder: ["kind"]) + "\n")
      return nil
    case .replay:
      return try state.withLock { state -> LuaTable in
        let asked = "\(kind) \(LuaValue.table(key))"
        guard state.next < state.entries.count, case .table(let entry) = state.entries[state.next] else {
          throw Divergence(description: "replay diverged at entry \(state.next + 1): the journal has ended, the script asked for \(asked)")
        }
        var recordedKey = LuaTable()
        for (k, _) in key.fields { recordedKey[k] = entry[k] }
        guard entry["kind"] == .string(LuaString(kind)), recordedKey == key else {
          throw Divergence(
            description: "replay diverged at entry \(state.next + 1): the journal has \(entry["kind"].stringValue ?? "?") \(Self.keyPart(entry, like: key)), the script asked for \(asked)")
        }
        state.next += 1
        return entry
      }
    }
  }

  private static func keyPart(_ entry: LuaTable, like key: LuaTable) -> LuaValue {
    var part = LuaTable()
    for (k, v) in entry.fields where k != "kind" && (key.fields[k] != nil || k == "name" || k == "url") { part[k] = v }
    return .table(part)
  }
}
