import Lunar

/// What to run and how, shared by the CLI, `.busted` files and tests.
public struct SpecOptions: Sendable {
  /// Files and folders to run (folders are searched recursively).
  public var paths: [String] = ["spec"]
  /// Lua pattern a file name must match to be a spec (busted's `_spec`).
  public var pattern = "_spec"
  /// Lua patterns excluding file names.
  public var excludePatterns: [String] = []
  /// Lua patterns a test's full name must match (any of them).
  public var filters: [String] = []
  /// Lua patterns excluding tests by full name.
  public var filtersOut: [String] = []
  /// Run only tests with one of these tags.
  public var tags: [String] = []
  /// Skip tests with any of these tags.
  public var excludeTags: [String] = []
  /// List tests instead of running them.
  public var list = false
  /// Shuffle files and the tests inside each block.
  public var shuffle = false
  /// The seed for `shuffle` (printed so a run can be repeated).
  public var seed: Int64 = 0
  /// Files run at once, each in its own runtime on its own thread.
  public var jobs = 1
  /// Run the next file in a runtime an earlier file ran in, restored as it
  /// was before any file (`RuntimeCore.restorePristine`), instead of
  /// setting up a new one: far cheaper for small files, and a file sees no
  /// more of the others than in a new runtime.
  public var reusesRuntimes = true
  /// Prepended to `package.path` (`;`-separated templates).
  public var luaPath: String?
  /// Prepended to `package.cpath`.
  public var luaCPath: String?
  /// Folders of Lua plugins, as `lunar run --plugin-dir`.
  public var pluginDirectories: [String] = []
  /// Plugins each file's runtime installs beyond the built-in ones.
  public var plugins: [any LunarPlugin] = []
  /// The environment each file's runtime sees.
  public var environment: [String: String] = [:]
  /// Run only this shard's part of the files (`--shard I/N`).
  public var shard: SpecShard?
  /// The durations file (`--durations`): a shard is balanced by it, and a
  /// whole run records its files' durations in it.
  public var durationsPath: String?
  /// Collect what busted's json and junit reports show of each result:
  /// where its test was declared, where its failure was raised, its start
  /// and end (costs a traceback per declared test, so off by default).
  public var details = false
  /// Makes the sink each spec file's runtime gives its trace events to
  /// (`--trace-file`), with the file's path; the file's tests are marked
  /// in it as `test.started` and `test.finished` (no other sink sees those).
  public var traceSink: (@Sendable (_ file: String) -> any TraceSink)?
  /// Count the lines each file's runtime runs in the files the specs load
  /// (`--coverage`), into this.
  public var coverage: LineCoverage?
  /// Route Ctrl-C (SIGINT) to the files running: they stop, keeping the
  /// tests that finished, and no further file starts (the CLI sets it).
  public var catchesInterrupts = false

  /// The defaults: `spec/`, `_spec` files, one job.
  public init() {}
}

/// A Lua pattern of the options that Lua would refuse when a match reaches
/// its malformed piece: which setting gave it, the pattern, and Lua's error.
public struct SpecPatternError: Error, Sendable, Equatable {
  /// The setting's name as the command line spells it (`filter`, `pattern`).
  public let setting: String
  /// The pattern as given.
  public let pattern: String
  /// Lua's error (`malformed pattern (missing ']')`).
  public let problem: String
}

extension SpecOptions {
  /// Refuses the first malformed pattern among `pattern`, `excludePatterns`,
  /// `filters` and `filtersOut`, so a bad one is one usage error before any
  /// file runs rather than an error of every file.
  public func checkPatterns() throws(SpecPatternError) {
    let settings: [(String, [String])] = [
      ("pattern", [pattern]), ("exclude-pattern", excludePatterns), ("filter", filters), ("filter-out", filtersOut),
    ]
    for (setting, patterns) in settings {
      for pattern in patterns {
        if let problem = LuaPatternCheck.problem(in: Array(pattern.utf8)) {
          throw SpecPatternError(setting: setting, pattern: pattern, problem: problem)
        }
      }
    }
  }
}
