import CLua
import CLuaShim
import LuaKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The part of a runtime that lives on its loop thread: the Lua state, the
/// scheduler, the clock and the trace. Plugins receive it in `install`.
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
  /// The configuration the runtime was made with.
  public let configuration: RuntimeConfiguration
  /// Shared with the Sendable `Runtime` handle.
  let inbox: Inbox
  /// Lets other threads interrupt the state while it is open.
  let control: ControlHandle
  /// The first file the run could not write; the run ends with it.
  private let failedOutput = FailedOutput()
  /// Where `--sandbox` loads Lua source from (nil without the sandbox).
  private var sandboxFolders: SandboxFolders?
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

  private var retained: [AnyObject] = []

  /// Keeps a plugin's loop-side object alive as long as the runtime.
  public func retain(_ object: AnyObject) { retained.append(object) }

  /// Writes a line to standard error (the `log` command).
  public func log(_ line: String) {
    try? FileOutput(descriptor: 2).write(line + "\n")
  }
  /// What the interrupt hook raises on timeout (kept alive for the hook).
  let timeoutMessage: String
  private let timeoutMessageC: UnsafeMutablePointer<CChar>?

  init(configuration: RuntimeConfiguration) throws {
    self.configuration = configuration
    state = try LuaState(memoryLimit: configuration.memoryLimit)
    memoryBudget = state.memoryBudget
    _ = lunar_gcgenerational(state.L)
    clock = RuntimeClock(configuration.clock)
    trace = Trace(sinks: configuration.traceSinks, clock: clock)
    inbox = Inbox(wakeup: Wakeup(L: state.L))
    if let timeout = configuration.timeout {
      timeoutMessage = "timeout: the script ran longer than \(LuaValue.number(timeout).formattedSeconds) seconds"
    } else {
      timeoutMessage = "timeout"
    }
    timeoutMessageC = strdup(timeoutMessage)
    control = ControlHandle(L: state.L, timeoutMessage: UnsafePointer(timeoutMessageC))
    offLoopWork = OffLoopWork(post: { [inbox] event in inbox.post { core in event(core.offLoopWork) } })
    scheduler = Scheduler(
      state: state, clock: clock, trace: trace, offLoopWork: offLoopWork, timeoutMessage: timeoutMessage)
    // Unowned(unsafe), not unowned: the loop calls this on every turn, and
    // the core owns the scheduler, so the closure never outlives it.
    scheduler.servePostedEvents = { [inbox, unowned(unsafe) self] in
      for event in inbox.drain() { event(self) }
    }
    state.push(function: scheduler.waitPendingFunction())
    lunar_installcoroutines(state.L)
    lunar_installyieldablecalls(state.L)
    lunar_installerror(state.L)
    let pluginFolders = setUpPackagePath()
    if configuration.sandbox {
      let folders = SandboxFolders()
      for folder in pluginFolders { folders.allow(Array(folder.utf8)) }
      try Sandbox.apply(to: state, folders: folders)
      sandboxFolders = folders
    }
    try install(LunarModulePlugin())
    try install(TraceModulePlugin())
    try install(QueueModulePlugin())
    for case let sink as any FileWritingSink in configuration.traceSinks { endRun(whenWriteFails: sink.output) }
    try install(MachineModulePlugin())
    try install(ActionModulePlugin())
    try install(WorkflowPlugin())
    try install(ReplPlugin())
    for plugin in configuration.plugins { try install(plugin) }
    if configuration.catchesInterrupts { lunar_catchsigint(state.L) }
    if configuration.inertMachines {
      // `lunar graph` keeps standard output for the diagram.
      try state.load("print = function() end; if io then io.write = function() return io.stdout end end", name: "=inert")
      try state.call(arguments: 0, results: 0)
    }
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

  /// Ends the run, with the failure as its error, when `output` (a file the
  /// run writes as it goes: a journal, a trace) cannot be written: a full
  /// disk must not let a run go on losing what it records.
  public func endRun(whenWriteFails output: FileOutput) {
    let failedOutput = self.failedOutput
    let control = self.control
    output.whenWriteFails { error in
      if failedOutput.record(error.description) { control.interrupt(reason: LUNAR_INTERRUPT_REQUEST) }
    }
  }

  /// The run's failure when a file it writes has failed.
  private var outputFailure: RunFailure? {
    failedOutput.message.map { .lua(LuaError(message: $0)) }
  }

  /// Runs what is still posted and closes the state; later posts are refused.
  func shutDown() {
    guard !state.isClosed else { return }
    control.invalidate()
    for event in inbox.close() { event(self) }
    lunar_releasesigint(state.L)
    state.close()
  }

  // MARK: Plugins and modules

  /// Installs a plugin once (a second install of the same name is ignored).
  public func install(_ plugin: any LunarPlugin) throws {
    guard installedPlugins.insert(plugin.name).inserted else { return }
    try plugin.install(in: self)
  }

  /// Builds `module` as a table and makes it `require`-able; `lunar` is also
  /// a global, and `lunar.x` modules are also fields of it.
  public func install(_ module: LuaModule) throws {
    if module.name == "lunar" {
      try build(module)
      lua_settop(state.L, -2)
      return
    }
    install(moduleNamed: module.name) { _ in module }
  }

  /// Makes `name` `require`-able, with `make` describing the module on its
  /// first `require`: a plugin's closures, classes and Lua source cost
  /// nothing at start-up until a script uses them.
  public func install(moduleNamed name: String, _ make: @escaping (RuntimeCore) throws -> LuaModule) {
    // package.preload[name] = a loader that builds the module on demand.
    let L = state.L
    lua_getfield(L, lunar_registryindex(), LUA_PRELOAD_TABLE)
    state.push(function: { [unowned self] call in
      // Built on the main thread's stack, handed to whichever thread required it.
      try self.build(make(self))
      if call.L != self.state.L { lua_xmove(self.state.L, call.L, 1) }
      return .one
    })
    lua_setfield(L, -2, name)
    lua_settop(L, -2)
  }

  /// Builds `module`, registers it in `package.loaded` (and as a field of
  /// `lunar`), and leaves its table on the stack.
  private func build(_ module: LuaModule) throws {
    let L = state.L
    lua_createtable(L, 0, Int32(module.functions.count + module.asyncFunctions.count + module.values.count))
    let table = lua_gettop(L)
    for (name, function) in module.functions {
      state.push(function: function)
      lua_setfield(L, table, name)
    }
    for (name, function) in module.asyncFunctions {
      state.push(function: asyncFunction(function))
      lua_setfield(L, table, name)
    }
    for (name, value) in module.values {
      try state.push(value)
      lua_setfield(L, table, name)
    }
    // package.loaded[name] = table, first, so the sources may require it.
    lua_getfield(L, lunar_registryindex(), LUA_LOADED_TABLE)
    lua_pushvalue(L, table)
    lua_setfield(L, -2, module.name)
    lua_settop(L, table)
    if module.name == "lunar" {
      lua_pushvalue(L, table)
      state.setGlobal("lunar")
    } else if module.name.hasPrefix("lunar.") {
      state.getGlobal("lunar")
      if lua_type(L, -1) == LUA_TTABLE {
        state.push(String(module.name.dropFirst("lunar.".count)))
        lua_pushvalue(L, table)
        lua_rawset(L, -3)
      }
      lua_settop(L, table)
    }
    if !module.host.isEmpty {
      lua_createtable(L, 0, Int32(module.host.count))
      for (key, function) in module.host {
        state.push(function: function)
        lua_setfield(L, -2, key)
      }
      lua_setfield(L, table, "_host")
    }
    for (source, chunkName) in module.sources {
      try state.load(bytes: source, name: chunkName, mode: .text)
      lua_pushvalue(L, table)
      try state.call(arguments: 1, results: 0)
    }
    lua_settop(L, table)
    for hook in module.afterLoad { try hook(self) }
    lua_settop(L, table)
  }

  /// Installs a module written in Lua: `source` runs with the module table
  /// as `...`, the Swift `host` functions waiting in its `_host` field for
  /// the source to take.
  public func installLuaModule(_ name: String, source: [UInt8], host: [(String, LuaFunction)]) throws {
    var module = LuaModule(name)
    for (key, function) in host { module.hostFunction(key, function) }
    module.lua(bytes: source, chunkName: "=" + name)
    try install(module)
  }

  // MARK: Scripts

  /// Runs `script`'s main chunk on the main Lua thread, then the loop until
  /// every task has finished. Returns the chunk's results.
  func run(_ script: Script) -> Result<[LuaValue], RunFailure> {
    let L = state.L
    let base = lua_gettop(L)
    defer { lua_settop(L, base) }
    script.installArgTable(in: state)
    if let sandboxFolders {
      // The script's own folder; standard input and text come from here.
      if case .file(let path) = script.source {
        sandboxFolders.allowFolder(of: Array(path.utf8))
      } else {
        sandboxFolders.allow(Array(".".utf8))
      }
    }
    if case .file(let path) = script.source { addPluginFolder(besideScript: path) }
    do {
      if configuration.runsLuaInit && !ranLuaInit {
        ranLuaInit = true
        try runLuaInit()
      }
      let count = try script.load(into: state)
      try state.call(arguments: count)
      if let usage = try runReturnedWorkflow(above: base, of: script) {
        scheduler.cancelAll(on: L)
        return .failure(usage)
      }
    } catch {
      let failure = failure(after: error)
      lunar_clearinterrupt(L)
      return .failure(failure)
    }
    var results: [LuaValue] = []
    for index in (base + 1)..<(lua_gettop(L) + 1) {
      results.append((try? state.value(at: index, root: "result")) ?? .nil)
    }
    if let stop = drain() {
      lunar_clearinterrupt(L)
      return .failure(stop)
    }
    if let failure = outputFailure { return .failure(failure) }
    let unobserved = scheduler.unobservedFailures.map(UnobservedError.init) + component(MachineSystem.self).failures.takeAll()
    scheduler.clearFailures()
    if !unobserved.isEmpty { return .failure(.unobservedErrors(unobserved)) }
    return .success(results)
  }

  private var ranLuaInit = false

  /// Runs a chunk for an interactive session: no `arg` table, no waiting
  /// for background tasks to finish (they go on between entries), but the
  /// tasks the chunk woke have run when it returns (`Scheduler.runWoken`).
  func evaluate(_ source: String, name: String, arguments: [LuaValue]) -> Result<[LuaValue], RunFailure> {
    let L = state.L
    let base = lua_gettop(L)
    defer { lua_settop(L, base) }
    let outcome: Result<[LuaValue], RunFailure>
    do {
      if configuration.runsLuaInit && !ranLuaInit {
        ranLuaInit = true
        try runLuaInit()
      }
      try state.load(source, name: name)
      for argument in arguments where (try? state.push(argument)) == nil { lua_pushnil(L) }
      try state.call(arguments: Int32(arguments.count))
      var results: [LuaValue] = []
      for index in (base + 1)..<(lua_gettop(L) + 1) {
        results.append((try? state.value(at: index, root: "result")) ?? .nil)
      }
      outcome = .success(results)
    } catch {
      let held = scheduler.takeHeldNote().map { "\n" + $0 } ?? ""
      let failure = lunar_interrupted(L) != LUNAR_INTERRUPT_NONE ? RunFailure.interrupted("interrupted" + held) : .lua(error)
      lunar_clearinterrupt(L)
      outcome = .failure(failure)
    }
    lua_settop(L, base)
    do {
      try scheduler.runWoken(on: L)
    } catch {
      // Ctrl-C while woken tasks run: the prompt comes back.
      lunar_clearinterrupt(L)
      if case .success = outcome, case .interrupted(_, let message) = error { return .failure(.interrupted(message)) }
    }
    return outcome
  }

  /// If the main chunk returned a workflow, runs it (or draws it), leaving
  /// its outcome as the only result. Returns a usage failure, running
  /// nothing, when the workflow options do not fit what the chunk returned.
  private func runReturnedWorkflow(above base: Int32, of script: Script) throws(LuaError) -> RunFailure? {
    let L = state.L
    let options = configuration.workflowOptions
    let drawing = configuration.workflowGraphFormat != nil
    let noWorkflow: RunFailure? = options.workflowFlag.flatMap { flag in
      drawing ? nil : .usage("'\(flag)' is for a file that returns a workflow; \(script.name) ran and returned none")
    }
    guard lua_gettop(L) > base else { return noWorkflow }
    lua_getfield(L, lunar_registryindex(), LUA_LOADED_TABLE)
    lua_getfield(L, -1, "lunar.workflow")
    lunar_remove(L, -2)
    let module = lua_gettop(L)
    // Drawing, the results are the workflow's drawing or nothing: a
    // string the chunk returned is not one.
    let notWorkflow = configuration.workflowGraphFormat == nil ? module - 1 : base
    // A workflow can only exist if the workflow module was loaded.
    guard lua_type(L, module) == LUA_TTABLE else {
      lua_settop(L, notWorkflow)
      return noWorkflow
    }
    lua_getfield(L, module, "is")
    lua_pushvalue(L, base + 1)
    try state.call(arguments: 1, results: 1)
    let isWorkflow = lua_toboolean(L, -1) != 0
    lua_settop(L, module)
    guard isWorkflow else {
      lua_settop(L, notWorkflow)
      return noWorkflow
    }
    if let misplaced = options.misplacedFlag, !drawing {
      lua_settop(L, module - 1)
      return .usage(
        "'\(misplaced.flag)' after FILE goes to the script; put lunar's flags before FILE (\(misplaced.corrected))")
    }
    if let format = configuration.workflowGraphFormat {
      lua_getfield(L, module, "graph")
      lua_pushvalue(L, base + 1)
      state.push(format)
    } else {
      lua_getfield(L, module, "run")
      lua_pushvalue(L, base + 1)
      if (try? state.push(configuration.workflowOptions.luaValue)) == nil { lua_pushnil(L) }
    }
    try state.call(arguments: 2, results: 1)
    // The outcome replaces everything the chunk returned.
    lunar_replace(L, base + 1)
    lua_settop(L, base + 1)
    return nil
  }

  /// Runs the loop until no task is left; nil when all went well.
  func drain() -> RunFailure? {
    do {
      try scheduler.runUntil(on: state.L) {
        scheduler.liveTasks.isEmpty && scheduler.inFlight == 0 && !scheduler.hasDeferredWork
      }
      return nil
    } catch {
      switch error {
      case .deadlock(let report):
        // A deadlock the script was given (and caught) is not reported twice.
        let reported = scheduler.deadlockWasReported
        scheduler.cancelAll(on: state.L)
        return reported ? nil : .deadlock(report)
      case .interrupted(let reason, let message):
        scheduler.abandonAll()
        if let failure = outputFailure { return failure }
        let text = scheduler.takeHeldNote().map { message + "\n" + $0 } ?? message
        return reason == LUNAR_INTERRUPT_TIMEOUT ? .timedOut(text) : .interrupted(text)
      }
    }
  }

  /// Maps a failed main chunk to a run failure, ending live tasks first.
  private func failure(after error: LuaError) -> RunFailure {
    let reason = lunar_interrupted(state.L)
    if reason != LUNAR_INTERRUPT_NONE {
      scheduler.abandonAll()
      if let failure = outputFailure { return failure }
      let held = scheduler.takeHeldNote().map { "\n" + $0 } ?? ""
      return reason == LUNAR_INTERRUPT_TIMEOUT ? .timedOut(timeoutMessage + held) : .interrupted("interrupted" + held)
    }
    scheduler.cancelAll(on: state.L)
    // A memory error caught by `pcall` and raised again with `error(e, 0)`
    // is a plain error with Lua's own message: it is the limit all the same.
    if (error.kind == .memory || error.message == LuaError.notEnoughMemory.message) && configuration.memoryLimit > 0 {
      var error = error
      error.message += " (the limit is \(configuration.memoryLimit) bytes)"
      return .lua(error)
    }
    return .lua(error)
  }

  /// `LUA_INIT_5_4` or `LUA_INIT`: `@file` runs a file, anything else is
  /// source named `=LUA_INIT`, exactly as lua.c's handle_luainit.
  private func runLuaInit() throws(LuaError) {
    let environment = configuration.environment
    let (name, code): (String, String)
    if let value = environment["LUA_INIT_5_4"] {
      (name, code) = ("=LUA_INIT_5_4", value)
    } else if let value = environment["LUA_INIT"] {
      (name, code) = ("=LUA_INIT", value)
    } else {
      return
    }
    if code.hasPrefix("@") {
      try state.load(file: String(code.dropFirst()))
    } else {
      try state.load(code, name: name)
    }
    try state.call(arguments: 0, results: 0)
  }

  /// Puts plugin folders in front of `package.path`: `--plugin-dir`
  /// folders, then `LUNAR_PATH` (`;`-separated), then `./plugins`; returns
  /// those folders. (`plugins` beside a script file follows, once the
  /// script is known: `addPluginFolder(besideScript:)`.)
  private func setUpPackagePath() -> [String] {
    var folders = configuration.pluginDirectories
    if let extra = configuration.environment["LUNAR_PATH"] {
      folders += extra.split(separator: ";").map(String.init).filter { !$0.isEmpty }
    }
    folders.append("./plugins")
    var prefix = ""
    for folder in folders { prefix += Self.pluginTemplates(folder) }
    pluginPathPrefix = prefix
    let L = state.L
    lua_getglobal(L, "package")
    guard lua_type(L, -1) == LUA_TTABLE else {
      lua_settop(L, -2)
      return folders
    }
    lua_getfield(L, -1, "path")
    let current = state.string(at: -1) ?? ""
    lua_settop(L, -2)
    state.push(prefix + current)
    lua_setfield(L, -2, "path")
    lua_settop(L, -2)
    return folders
  }

  /// The plugin folders' part at the front of `package.path`.
  private var pluginPathPrefix = ""

  /// `DIR/?.lua;DIR/?/init.lua;`: where a plugin folder's modules are.
  private static func pluginTemplates(_ folder: String) -> String {
    folder + "/?.lua;" + folder + "/?/init.lua;"
  }

  /// Adds the `plugins` folder beside the script file at `path` to the
  /// plugin path, after the others, so a workflow finds the plugins it
  /// ships with wherever it is run from (`./plugins` already covers a
  /// script in the current folder).
  private func addPluginFolder(besideScript path: String) {
    guard let slash = path.lastIndex(of: "/") else { return }
    let folder = (slash == path.startIndex ? "" : String(path[..<slash])) + "/plugins"
    let templates = Self.pluginTemplates(folder)
    let L = state.L
    lua_getglobal(L, "package")
    defer { lua_settop(L, -2) }
    guard lua_type(L, -1) == LUA_TTABLE else { return }
    lua_getfield(L, -1, "path")
    let current = state.string(at: -1) ?? ""
    lua_settop(L, -2)
    // Only while the path is still Lunar's own (LUA_INIT has not run).
    guard current.hasPrefix(pluginPathPrefix), !current.contains(templates) else { return }
    if let sandboxFolders { sandboxFolders.allow(Array(folder.utf8)) }
    state.push(pluginPathPrefix + templates + current.dropFirst(pluginPathPrefix.count))
    lua_setfield(L, -2, "path")
  }
}

/// The first failure of a file the run writes, shared with the threads
/// that write it.
private final class FailedOutput: Sendable {
  private let storage = Mutex<String?>(nil)

  /// Keeps `message` if it is the first; true if it was.
  func record(_ message: String) -> Bool {
    storage.withLock { stored in
      guard stored == nil else { return false }
      stored = message
      return true
    }
  }

  /// The first failure, if any.
  var message: String? { storage.withLock { $0 } }
}

extension LuaValue {
  /// A number of seconds as a short text (`2`, `0.5`).
  var formattedSeconds: String {
    switch self {
    case .number(let d) where d == d.rounded() && abs(d) < 1e15: String(Int64(d))
    case .number(let d): String(d)
    default: description
    }
  }
}
