import LuaKit
import Lunar

/// How long each spec file took in the last run that recorded it
/// (`--durations FILE`), which `--shard` balances by. The file is JSON:
/// `{"lunar-test-durations":{"spec/a_spec.lua":0.125,…}}`, one file a
/// line, sorted, so it can be committed and read by every CI machine.
public struct SpecDurations: Sendable, Equatable {
  /// Seconds by file, as the runs named them (without a leading `./`).
  public private(set) var seconds: [String: Double]

  /// Durations by file.
  public init(seconds: [String: Double] = [:]) {
    self.seconds = Dictionary(seconds.map { (Self.key($0.key), $0.value) }, uniquingKeysWith: { _, last in last })
  }

  /// Why a durations file could not be used.
  public struct FormatError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "\(path): \(reason)" }
  }

  /// What a durations file looks like, so a recording replaces an earlier
  /// one but never another file.
  public static let kind = FileOutput.Kind.starting(with: [prefix], name: "a Lunar test durations file")
  private static let prefix = #"{"lunar-test-durations":{"#

  /// The recorded duration of `file`, if any.
  public func seconds(for file: String) -> Double? { seconds[Self.key(file)] }

  /// `./spec/a_spec.lua` and `spec/a_spec.lua` are one file.
  private static func key(_ path: String) -> String {
    var path = Substring(path)
    while path.hasPrefix("./") { path = path.dropFirst(2).drop { $0 == "/" } }
    return String(path)
  }

  /// Reads `path`; nil when there is no such file.
  public static func load(_ path: String) throws -> SpecDurations? {
    let bytes: [UInt8]
    do {
      bytes = try BoundedFileReader.read(path, limit: 16 << 20)
    } catch {
      if error.reason == .missing { return nil }
      throw error
    }
    let value: LuaValue
    do {
      value = try JSON.decode(bytes)
    } catch {
      throw FormatError(path: path, reason: "not a durations file (\(error))")
    }
    guard case .table(let document) = value, case .table(let files) = document["lunar-test-durations"] else {
      throw FormatError(path: path, reason: #"not a durations file (no "lunar-test-durations" object)"#)
    }
    var seconds: [String: Double] = [:]
    for (key, value) in files.entries {
      guard case .string(let name) = key, let number = value.numberValue, number.isFinite, number >= 0 else {
        throw FormatError(path: path, reason: "not a durations file (\(key.value): \(value) is not a number of seconds)")
      }
      seconds[name.lossyString] = number
    }
    return SpecDurations(seconds: seconds)
  }

  /// These durations with those of `files` (each file's wall-clock time)
  /// in place of the old ones; entries of files that are gone are dropped.
  public func recording(_ files: [SpecFileResult], exists: (String) -> Bool = FileSystem.exists) -> SpecDurations {
    var seconds = self.seconds.filter { exists($0.key) }
    for file in files { seconds[Self.key(file.path)] = (file.duration * 1000).rounded() / 1000 }
    return SpecDurations(seconds: seconds)
  }

  /// The file's text.
  public var text: String {
    let lines = seconds.sorted { $0.key < $1.key }.map { name, value in
      JSON.encode(.string(LuaString(name))) + ":" + JSON.encode(.number(value))
    }
    return Self.prefix + (lines.isEmpty ? "" : "\n" + lines.joined(separator: ",\n") + "\n") + "}}\n"
  }
}
