import LuaKit
import LunarStore

/// How a runtime is set up: what holds for the whole runtime (limits,
/// clock, sandbox, drawing or coverage mode, traces, the store) and its
/// plugins. A plugin's own options go to the plugin when it is made
/// (`WorkflowPlugin(options:)`, `ActionModulePlugin(options:)`), which then
/// takes the built-in one's place.
public struct RuntimeConfiguration: Sendable {
  /// Bytes Lua may hold at once (`--max-memory`); 0 for no limit.
  public var memoryLimit = 0
  /// Real or virtual time.
  public var clock: RuntimeClock.Kind = .real
  /// Run without `io`, `os.execute`, `os.remove`, `os.rename`,
  /// `package.loadlib`, binary chunks, native modules or `debug`.
  public var sandbox = false
  /// Where trace events go (`--trace`, `--trace-file`).
  public var traceSinks: [any TraceSink] = []
  /// Keep the run's trace events from its start for `lunar.trace`
  /// (`--trace`, `--trace-file`); otherwise they are kept from the first
  /// `require "lunar.trace"` on.
  public var recordsTrace = false
  /// Folders of Lua plugins searched by `require`, before `LUNAR_PATH`
  /// and `./plugins` (`--plugin-dir`).
  public var pluginDirectories: [String] = []
  /// Plugins installed after the built-in ones.
  public var plugins: [any LunarPlugin] = []
  /// The environment (`LUA_INIT`, `LUNAR_PATH`); empty means none.
  public var environment: [String: String] = [:]
  /// Run `LUA_INIT_5_4` / `LUA_INIT` before the first script, as lua.c does.
  public var runsLuaInit = true
  /// Start with Lua's warnings on, as `lua5.4 -W` (otherwise they are off
  /// until a script calls `warn("@on")`).
  public var warnings = false
  /// Route Ctrl-C (SIGINT) to this runtime.
  public var catchesInterrupts = false
  /// Whether SIGTERM and SIGHUP are caught as SIGINT is (`lunar run`),
  /// and a running workflow cancels itself on the first of them.
  public var catchesStopSignals = false
  /// Where workflow runs and durable queues are kept (`lunar run
  /// --store`); nil keeps nothing: runs are not recorded and durable
  /// queues are refused.
  public var store: StoreLocation?
  /// Draw scripts in this format instead of running them (`lunar graph`):
  /// machines are built but never started, output is silenced, a returned
  /// workflow is drawn, not run. `Runtime.draw` returns the drawings.
  public var drawing: GraphFormat?
  /// Count the lines run in the files scripts load with `require`,
  /// `dofile` and `loadfile`, and add them to this when the runtime closes
  /// (`lunar test --coverage`).
  public var coverage: LineCoverage?
  /// Stop a script that runs longer than this many wall-clock seconds.
  public var timeout: Double?
  /// The program owns its process (`lunar run`), so a run that cannot be
  /// stopped ends it: when the timeout has not taken effect a second after
  /// it fired (the script is inside one long C call, such as a
  /// backtracking `string.find`, or a finalizer loops while the state
  /// closes, which Lua runs with hooks off), `lunar: <timeout message>
  /// (stopped inside ...)` is printed and the process ends with status 1;
  /// Ctrl-C while the state closes ends it with status 130. An embedding
  /// program keeps the default and waits for the call to return.
  public var ownsProcess = false

  /// Releasing the `Runtime` waits until its state is closed (its
  /// finalizers have run). Without, the state closes on its loop thread
  /// in the background: a finalizer that never returns then holds only
  /// that thread (`lunar test`, which must still print its report).
  public var waitsForCloseOnRelease = true

  /// The defaults: real time, no limits, no traces.
  public init() {}
}
