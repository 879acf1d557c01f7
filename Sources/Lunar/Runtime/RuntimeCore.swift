import CLuaShim
import LuaKit

#if canImport(Glibc)
import Glibc
#endif

/// The part of a runtime that lives on its loop thread: the Lua state and
/// the loop that runs it (the scheduler, Swift work in flight, the clock,
/// the trace, the inbox other threads post to). Scripts run through
/// `scripts`, modules are built by `modules`, and plugins keep their state
/// in components (`component(_:)`). Plugins receive it in `install`.
/// Never leaves its thread (it is not Sendable).
public final class RuntimeCore {
  /// The Lua state; touched from the loop thread only.
  public let state: LuaState
  /// The runtime clock (real or virtual).
  public let clock: RuntimeClock
  /// The run's trace.
  public let trace: Trace
  /// Tasks, waits and the loop.
  public let scheduler: Scheduler
  /// Swift async work started for Lua, in flight until the loop has its result.
  public let offLoopWork: OffLoopWork
  /// Runs scripts and console entries.
  public let scripts: ScriptRunner
  /// Builds plugins' Lua modules.
  public private(set) lazy var modules = ModuleInstaller(core: self)
  /// The configuration the runtime was made with.
  public let configuration: RuntimeConfiguration
  /// Shared with the Sendable `Runtime` handle.
  let inbox: Inbox
  /// Lets other threads interrupt the state while it is open.
  let control: ControlHandle
  /// The state's memory limit as Swift shares it: copies of Lua values
  /// kept in Swift, and values Swift work makes for Lua, are charged to it.
  public let memoryBudget: LuaMemoryBudget
  private var stopped = false
  private var installedPlugins: Set<String> = []
  /// Plugins' state, by type (see `component(_:)`).
  private var components: [ObjectIdentifier: AnyObject] = [:]

  /// The runtime's component of type `type`, made on first use.
  public func component<Component: RuntimeComponent>(_ type: Component.Type = Component.self) -> Component {
    let key = ObjectIdentifier(type)
    if let made = components[key] { return unsafeDowncast(made, to: type) }
    let made = Component(core: self)
    components[key] = made
    return made
  }

  /// Makes `component` the runtime's component of its type, made by the
  /// plugin that owns it with that plugin's options (before anything asks
  /// for one); false, changing nothing, if one was made already.
  @discardableResult
  public func provide<Component: RuntimeComponent>(_ component: Component) -> Bool {
    let key = ObjectIdentifier(Component.self)
    guard components[key] == nil else { return false }
    components[key] = component
    return true
  }

  private var retained: [AnyObject] = []

  /// How many components, retained objects and plugins the runtime holds:
  /// a runtime whose counts grew while a script ran keeps Swift state from
  /// it, and cannot be reused (see `restorePristine`).
  var heldCounts: [Int] { [components.count, retained.count, installedPlugins.count] }

  /// Keeps a plugin's loop-side object alive as long as the runtime.
  public func retain(_ object: AnyObject) { retained.append(object) }

  /// What the interrupt hook raises on timeout (kept alive for the hook).
  private let timeoutMessageC: UnsafeMutablePointer<CChar>?

  init(configuration: RuntimeConfiguration) throws {
    self.configuration = configuration
    state = try LuaState(memoryLimit: configuration.memoryLimit)
    memoryBudget = state.memoryBudget
    _ = lunar_gcgenerational(state.L)
    state.setWarnings(configuration.warnings)
    clock = RuntimeClock(configuration.clock)
    trace = Trace(sinks: configuration.traceSinks, clock: clock)
    for case let sink as any BudgetedTraceSink in configuration.traceSinks { sink.charge(to: memoryBudget) }
    inbox = Inbox(wakeup: Wakeup(L: state.L))
    let timeoutMessage: String
    if let timeout = configuration.timeout {
      timeoutMessage = "timeout: the script ran longer than \(LuaValue.number(timeout).formattedSeconds) seconds"
    } else {
      timeoutMessage = "timeout"
    }
    timeoutMessageC = strdup(timeoutMessage)
    control = ControlHandle(L: state.L, timeoutMessage: UnsafePointer(timeoutMessageC))
    control.setTracing(trace.isEnabled)
    trace.onListeningChanged = { [control] in control.setTracing($0) }
    offLoopWork = OffLoopWork(post: { [inbox] event in inbox.post { core in event(core.offLoopWork) } })
    scheduler = Scheduler(
      state: state, clock: clock, trace: trace, offLoopWork: offLoopWork, timeoutMessage: timeoutMessage)
    state.push(function: scheduler.waitPendingFunction())
    lunar_installcoroutines(state.L)
    lunar_installyieldablecalls(state.L)
    lunar_installthreadlocale(state.L)
    lunar_installerror(state.L)
    try StepOutputSink.install(in: state, scheduler: scheduler)
    // Before plugins and the sandbox, which keep the loaders they find.
    if configuration.coverage != nil { try LineCoverage.start(in: state) }
    scripts = try ScriptRunner(state: state, scheduler: scheduler, configuration: configuration, control: control)
    // Unowned(unsafe), not unowned: the loop calls this on every turn, and
    // the core owns the scheduler, so the closure never outlives it.
    scheduler.servePostedEvents = { [inbox, unowned(unsafe) self] in
      for event in inbox.drain() { event(self) }
    }
    // A configured plugin named as a built-in one (the same plugin with its
    // own options) takes the built-in's place, so the order stays.
    let configured = configuration.plugins
    let builtInNames = Set(BuiltInPlugins.all.map(\.name))
    let builtIn = BuiltInPlugins.all.map { plugin in configured.first { $0.name == plugin.name } ?? plugin }
    for plugin in builtIn + configured.filter({ !builtInNames.contains($0.name) }) { try install(plugin) }
    if configuration.catchesInterrupts { lunar_catchsigint(state.L) }
    if configuration.catchesStopSignals { lunar_catchstopsignals(state.L) }
    if configuration.ownsProcess { lunar_ownprocess(state.L) }
  }

  deinit {
    shutDown()
    free(timeoutMessageC)
  }

  /// Serves posted work (scripts, requests) and runs background tasks until
  /// `stop` is called.
  func serve() {
    while !stopped {
      do {
        try scheduler.runUntil(on: state.L, idle: .sleep) { stopped }
      } catch {
        lunar_clearinterrupt(state.L)
      }
    }
    shutDown()
  }

  /// Ends `serve` after the current event.
  func stop() { stopped = true }

  /// Runs what is still posted and closes the state; later posts are refused.
  func shutDown() {
    guard !state.isClosed else { return }
    for event in inbox.close() { event(self) }
    configuration.coverage?.record(from: state)
    // Ctrl-C and the timeout still reach the finalizers the close runs.
    state.close()
    control.invalidate()
    lunar_resetthreadlocale()
  }

  // MARK: Plugins and modules

  /// Installs a plugin once (a second install of the same name is ignored).
  public func install(_ plugin: any LunarPlugin) throws {
    guard installedPlugins.insert(plugin.name).inserted else { return }
    try plugin.install(in: self)
  }
}
