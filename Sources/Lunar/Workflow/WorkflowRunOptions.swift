import LuaKit
import LunarStore

/// The workflow plugin's options (`WorkflowPlugin(options:)`): how a
/// workflow returned by a script's main chunk runs (the `lunar run` flags
/// `--only`, `--from`, `--dry-run`, `--jobs` and `--journal`), which run a
/// resume continues, and how progress is shown. Where runs are recorded is
/// the runtime's `RuntimeConfiguration.store`, shared with durable queues.
public struct WorkflowRunOptions: Sendable, Equatable {
  /// How progress is drawn.
  public enum Progress: String, Sendable {
    /// Lines redrawn in place, for a terminal.
    case terminal
    /// One line per event, for pipes and files.
    case plain
  }

  /// Run this step and what it needs.
  public var only: LuaString?
  /// Run this step and everything after it.
  public var from: LuaString?
  /// Print the plan and run nothing.
  public var dryRun = false
  /// How many steps run at once; nil leaves the workflow's own default.
  public var jobs: Int?
  /// A SQLite store file of this workflow's own (`--journal FILE`): its runs
  /// are recorded there, not in the runtime's store, and the last one resumes.
  public var resumeStore: String?
  /// The earlier run whose unchanged steps are reused (`--resume [RUN]`).
  public var resume: RunReference?
  /// A run a worker handed to this process (`lunar run --adopt RUN:TOKEN`):
  /// it goes on with that run, reusing its committed steps, rather than
  /// beginning a new one.
  public var adopt: RunHandover?
  /// Stores kept open across the runs this process runs one after another
  /// (a warm process of `lunar worker`); nil: each runtime opens its own.
  public var keptStores: KeptRunStores?
  /// How long a run recorded in a store stays this process's without a
  /// heartbeat (one comes every second): after it, a worker may take the
  /// run over. At least 3 seconds.
  public var lease: Duration = RunLease.defaultDuration
  /// Steps a resume runs again even if unchanged (`--force STEP`), with
  /// the steps that need them.
  public var force: [LuaString] = []
  /// The script file, as the store records it.
  public var scriptFile: String?
  /// The script's arguments, as the store records them.
  public var scriptArguments: [String] = []
  /// How progress is drawn.
  public var progress = Progress.plain
  /// The durable queues of the worker processes that run a returned
  /// workflow's steps (`lunar run --processes N`: one queue per process,
  /// which only it serves); empty: steps run in this process.
  public var processQueues: [LuaString] = []
  /// This process serves the steps of the workflow its file returns
  /// (`lunar worker --steps`): each becomes an action, and the workflow is
  /// not run.
  public var servesSteps = false
  /// How many rows the summary shows (`--summary full`: every step).
  public var summary = RunSummaryTable.Detail.automatic
  /// Whether what each step prints is also kept in the run store, per
  /// attempt (`lunar run --no-logs` turns it off); only runs recorded in a
  /// store keep logs.
  public var storesLogs = true
  /// The most bytes of a step attempt's log the store keeps; past it the
  /// stored log ends with a line saying how many bytes were dropped.
  public var logLimit = WorkflowRunOptions.defaultLogLimit
  /// `logLimit`'s default: 1 MiB per step attempt.
  public static let defaultLogLimit = 1 << 20
  /// A flag of the run's own that the command line gave after the script
  /// (so, as under `lua5.4`, the script got it): a returned workflow is
  /// refused rather than run without it.
  public var misplacedFlag: MisplacedFlag?

  /// A run flag given after FILE, and the command line that means it.
  public struct MisplacedFlag: Sendable, Equatable {
    /// The flag as given (`--dry-run`).
    public var flag: String
    /// The command line with the flag before FILE (`lunar run --dry-run release.lua`).
    public var corrected: String

    /// A flag and the command line that would give it to the run.
    public init(flag: String, corrected: String) {
      self.flag = flag
      self.corrected = corrected
    }
  }

  /// Plain progress, every step, the workflow's own parallelism.
  public init() {}

  /// The first flag given that only a returned workflow can honour
  /// (`--only`, `--from`, `--dry-run`, `--jobs`, `--journal`, `--summary`), if any.
  public var workflowFlag: String? {
    if only != nil { return "--only" }
    if from != nil { return "--from" }
    if dryRun { return "--dry-run" }
    if jobs != nil { return "--jobs" }
    if resumeStore != nil { return "--journal" }
    if summary != .automatic { return "--summary" }
    if !processQueues.isEmpty { return "--processes" }
    return nil
  }

  /// Refuses, before anything runs, a `resumeStore` the run could not use: a
  /// file that is not a Lunar store, or one in a missing folder.
  public func checkResumeStore() throws(StoreError) {
    guard let resumeStore else { return }
    try SQLiteRunStore.check(path: resumeStore)
  }

  /// The options table `workflow.run` takes.
  var luaValue: LuaValue {
    var table = LuaTable()
    if let only { table["only"] = .string(only) }
    if let from { table["from"] = .string(from) }
    if dryRun { table["dry_run"] = true }
    if let jobs { table["jobs"] = .integer(Int64(jobs)) }
    table["progress"] = .string(LuaString(progress.rawValue))
    if !processQueues.isEmpty { table["_processes"] = true }
    return .table(table)
  }
}
