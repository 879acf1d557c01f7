import LuaKit
import Lunar

/// A `.busted` file: Lua returning a table of tasks; Lunar reads the
/// `default` task (merged over `_all`) for `ROOT`, `lpath`, `cpath`,
/// `pattern`, `exclude-pattern`, `tags`, `exclude-tags`, `filter`,
/// `filter-out`, `shuffle`, `seed`, `jobs`, `output` and Lunar's own
/// `durations` (the file `--durations` names).
public struct BustedConfig: Sendable {
  /// The task's settings by name.
  public var settings: [String: LuaValue]

  /// Reads `path` (a regular file of bounded size); nil when there is no
  /// such file.
  public static func load(_ path: String = ".busted") throws -> BustedConfig? {
    let source: [UInt8]
    do {
      source = try BoundedFileReader.read(path, limit: 1 << 20)
    } catch {
      guard error.reason == .missing else { throw error }
      return nil
    }
    let state = try LuaState()
    try state.load(bytes: source, name: "@" + path, mode: .text)
    try state.call(arguments: 0, results: 1)
    let value = try state.value(at: -1, root: path)
    guard case .table(let tasks) = value else {
      throw LuaError(message: "\(path): expected a table of tasks, got \(value.typeName)")
    }
    var settings: [String: LuaValue] = [:]
    for name in ["_all", "default"] {
      guard case .table(let task) = tasks[name] else { continue }
      for (key, value) in task.fields {
        if case .string(let s) = key { settings[s.lossyString] = value }
      }
    }
    let config = BustedConfig(settings: settings)
    try config.checkNumbers()
    return config
  }

  /// Refuses numbers the runner cannot use: `jobs` must be a positive
  /// integer, `seed` an integer.
  func checkNumbers() throws(LuaError) {
    if let jobs = settings["jobs"], !(jobs.integerValue.map { $0 >= 1 } ?? false) {
      throw LuaError(message: "'jobs' must be a positive integer, got \(jobs)")
    }
    if let seed = settings["seed"], seed.integerValue == nil {
      throw LuaError(message: "'seed' must be an integer, got \(seed)")
    }
  }

  /// A list setting, given as a table of strings or one comma-separated string.
  public func list(_ name: String) -> [String]? {
    switch settings[name] {
    case .string(let s)?: s.lossyString.split(separator: ",").map { String($0).trimmedSpaces }
    case .table(let t)?: t.array.compactMap(\.stringValue)
    default: nil
    }
  }

  /// A text setting.
  public func string(_ name: String) -> String? { settings[name]?.stringValue }

  /// Applies the settings to `options` (command-line flags are applied after).
  public func apply(to options: inout SpecOptions) {
    if let roots = list("ROOT") { options.paths = roots }
    if let value = string("pattern") { options.pattern = value }
    if let value = list("exclude-pattern") { options.excludePatterns = value }
    if let value = list("tags") { options.tags = value }
    if let value = list("exclude-tags") { options.excludeTags = value }
    if let value = list("filter") { options.filters = value }
    if let value = list("filter-out") { options.filtersOut = value }
    if let value = string("lpath") { options.luaPath = value }
    if let value = string("cpath") { options.luaCPath = value }
    if case .boolean(let value)? = settings["shuffle"] { options.shuffle = value }
    if let value = settings["seed"]?.integerValue { options.seed = value }
    if let value = settings["jobs"]?.integerValue { options.jobs = Int(value) }
    if let value = string("durations") { options.durationsPath = value }
  }
}

extension String {
  /// Without leading and trailing spaces.
  var trimmedSpaces: String {
    String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
  }
}
