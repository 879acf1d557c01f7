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

  /// The HTTP service actions use.
  public let http: any HTTPService

  /// The actions of `core`'s runtime with the default options.
  public convenience init(core: RuntimeCore) {
    self.init(core: core, options: ActionOptions())
  }

  /// The actions of `core`'s runtime, recording or replaying the journal
  /// `options` name.
  public init(core: RuntimeCore, options: ActionOptions) {
    http = options.http
    services.register("http", options.http)
    services.register("store", store)
    var journal: Journal?
    do {
      journal = try options.recording.map(Journal.init)
      journalFailure = nil
    } catch {
      journalFailure = error
    }
    let inbox = core.inbox
    actions = ActionRunner(
      services: services, recursionLimit: options.recursionLimit,
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
