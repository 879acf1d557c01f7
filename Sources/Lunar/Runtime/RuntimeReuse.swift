import CLuaShim
import LuaKit

/// What a runtime looked like when `RuntimeCore.markPristine` recorded it,
/// and what puts plugins' Swift-side state back to it. Setting up a runtime
/// (the libraries, the plugins, a test framework's Lua code) costs far more
/// than a small script run in it; a runner of many small scripts (`lunar
/// test`) restores one runtime between scripts instead, and each script
/// still finds it as a new one.
final class RuntimeReuse: RuntimeComponent {
  /// The counts of Swift-side state, the next task id and the trace's
  /// sequence at the mark; nil before it.
  fileprivate var marked: (counts: [Int], nextTaskID: Int, sequence: Int)?
  /// Plugins' restorers: each is made at the mark (it records what it
  /// needs) and run by every restore.
  fileprivate var makers: [() -> () -> Void] = []
  fileprivate var restorers: [() -> Void] = []

  init(core: RuntimeCore) {}
}

extension RuntimeCore {
  /// Adds a plugin's Swift-side state to what `restorePristine` puts back:
  /// `mark` runs at `markPristine` (it records what the state is then) and
  /// returns what puts it back, run at every restore. A plugin whose state
  /// a script can change, and that registers nothing, makes the runtime
  /// impossible to restore once the state changed (its component or module
  /// is made during the script), never wrong.
  public func whenRestored(_ mark: @escaping () -> () -> Void) {
    let reuse = component(RuntimeReuse.self)
    reuse.makers.append(mark)
    if reuse.marked != nil { reuse.restorers.append(mark()) }
  }

  /// Records the runtime as it is now, set up and idle, as the state
  /// `restorePristine` returns it to after each script.
  public func markPristine() throws(LuaError) {
    let reuse = component(RuntimeReuse.self)
    reuse.restorers = reuse.makers.map { $0() }
    reuse.marked = (swiftCounts, scheduler.nextTaskID, trace.sequence)
    try state.takeSnapshot()
  }

  /// Puts the runtime back as `markPristine` found it, so another script
  /// runs in it as in a new runtime: every table, upvalue and metatable Lua
  /// code can reach is restored, what the last script created is collected
  /// (its finalizers run now), task ids and trace numbers start again, and
  /// plugins' restorers run. Returns false, changing nothing the next
  /// script could rely on, when that cannot be done exactly: a task, timer,
  /// wait or Swift work is left; the script was interrupted; Swift state
  /// was made for it (a component, a module, a registry entry or a
  /// reference still held); the registry changed; the runtime runs
  /// `LUA_INIT` (`RuntimeConfiguration.runsLuaInit`), which runs once, before
  /// its first script, or is sandboxed (scripts' folders are let in as they
  /// run). The runtime must then be discarded.
  public func restorePristine() -> Bool {
    guard let marked = component(RuntimeReuse.self).marked, !state.isClosed, !configuration.runsLuaInit,
      !configuration.sandbox
    else { return false }
    guard isUnchangedSince(marked.counts) else { return false }
    // The collection after the restore runs the finalizers of what the
    // script made (now, not during the next script) and releases the
    // references its objects held. A finalizer written in Lua may change
    // things again: then restore again, until nothing changes.
    guard let restored = state.restoreSnapshot(.objects) else { return false }
    state.collectGarbage()
    if restored.finalizers {
      guard let again = state.restoreSnapshot(.objectsAndReferences) else { return false }
      if again.changes > 0 || again.finalizers {
        state.collectGarbage()
        guard let last = state.restoreSnapshot(.objectsAndReferences), last.changes == 0, !last.finalizers else {
          return false
        }
      }
    } else {
      guard state.restoreSnapshot(.references)?.finalizers == false else { return false }
    }
    guard isUnchangedSince(marked.counts) else { return false }
    state.resetCollector()
    state.setWarnings(configuration.warnings)
    scheduler.nextTaskID = marked.nextTaskID
    lunar_forgetchains(state.L)
    trace.sequence = marked.sequence
    // The locale is the thread's, not the Lua state's: os.setlocale's goes.
    lunar_resetthreadlocale()
    for restore in component(RuntimeReuse.self).restorers { restore() }
    return true
  }

  /// True when no script is running or left anything in the loop, no
  /// interrupt is pending, and the Swift-side counts are those of the mark.
  private func isUnchangedSince(_ counts: [Int]) -> Bool {
    scheduler.isAtRest && lunar_interrupted(state.L) == LUNAR_INTERRUPT_NONE && swiftCounts == counts
  }

  private var swiftCounts: [Int] {
    heldCounts + scripts.handlerCounts + [modules.builtCount]
  }
}

extension Runtime {
  /// Runs a script in a runtime restored by `RuntimeCore.restorePristine`,
  /// its virtual clock (if it has one) started again at `clockStart`, as a
  /// new runtime's would be when the script starts.
  public func runRestored(_ script: Script, clockStart: Double) async throws(RunFailure) -> [LuaValue] {
    let result: Result<[LuaValue], RunFailure> = await withCheckedContinuation { continuation in
      let posted = inbox.post { core in
        core.clock.restart(at: clockStart)
        continuation.resume(returning: core.scripts.run(script))
      }
      if !posted { continuation.resume(returning: .failure(.interrupted("the runtime has stopped"))) }
    }
    return try result.get()
  }
}
