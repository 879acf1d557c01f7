/// A runtime's Swift actions and the services that actions and Swift
/// command interpreters use, kept by the actions plugin. Made when that
/// plugin is installed, before any plugin of the configuration: Swift
/// actions see the run's own services (`http`, `store`); interpreters, and
/// Lua through `swift_services`, see every service registered. Loop thread
/// only.
public final class ActionSystem: RuntimeComponent {
  /// Services offered to interpreters and actions.
  public var services = Services()
  /// The `store` service.
  public let store = KeyValueStore()
  /// Runs Swift actions (and holds the journal and the recursion limit).
  public let actions: ActionRunner
  /// Why the run's journal (`--record`, `--replay`) could not be opened;
  /// the actions plugin's install throws it, so the runtime is not made.
  let journalFailure: (any Error)?

  /// The actions of `core`'s runtime, recording or replaying its journal.
  public init(core: RuntimeCore) {
    let configuration = core.configuration
    services.register("http", configuration.httpService)
    services.register("store", store)
    var journal: Journal?
    do {
      journal = try configuration.journal.map(Journal.init)
      journalFailure = nil
    } catch {
      journalFailure = error
    }
    let inbox = core.inbox
    actions = ActionRunner(
      services: services, recursionLimit: configuration.actionRecursionLimit,
      journal: journal, now: core.clock.sendableNow,
      emit: { kind, fields in inbox.post { core in core.trace.emit(kind, fields) } })
    if let output = journal?.output { core.scripts.endRun(whenWriteFails: output) }
  }
}

extension RuntimeCore {
  /// Services offered to interpreters and actions.
  public var services: Services {
    get { component(ActionSystem.self).services }
    set { component(ActionSystem.self).services = newValue }
  }

  /// The `store` service.
  public var store: KeyValueStore { component(ActionSystem.self).store }

  /// Runs Swift actions (and holds the journal and the recursion limit).
  public var actions: ActionRunner { component(ActionSystem.self).actions }
}
