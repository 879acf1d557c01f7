import LuaKit

/// A runtime's machines, kept by the machine plugin: the live drivers, the
/// command interpreters, the Swift machine types Lua can make, and the
/// failures no settle has raised yet. Where machines are only drawn, never
/// run (`lunar graph`), it keeps every machine to draw it. Loop thread only.
public final class MachineSystem: RuntimeComponent {
  /// Machines by registration, without keeping them alive.
  let live = LiveObjects<MachineDriver>()
  /// Command interpreters by command name.
  public let interpreters = InterpreterRegistry()
  /// Failures no settle has raised yet, reported when a run ends.
  let failures = MachineFailures()
  /// Swift machine types Lua can make (`machine.swift(name)`), by the
  /// name's bytes, as Lua asks for them.
  private var swiftMachines: [LuaString: () -> any MachineBehavior] = [:]
  /// True when machines are built but never run.
  let isInert: Bool
  /// The inert machines, kept to be drawn whether Lua can reach them or not.
  private var drawn: [MachineDriver] = []

  /// The machines of `core`'s runtime.
  public init(core: RuntimeCore) {
    isInert = core.configuration.drawing != nil
    core.scripts.reportWhenRunEnds { [failures] in failures.takeAll() }
    if let format = core.configuration.drawing {
      core.component(Drawings.self).drawWhenRunEnds { [unowned self] in
        drawn.isEmpty ? nil : LuaString(MachineGraph.render(drawn.map(\.behavior), as: format))
      }
    }
  }

  /// The machines Lua can still reach or that have not settled, oldest
  /// first (`lunar graph` and the REPL's `.machines`).
  public var all: [MachineDriver] { live.all }

  /// The most recent live machine called `name` (byte for byte).
  public func machine(named name: LuaString) -> MachineDriver? {
    all.last { $0.name == name }
  }

  /// Registers a Swift machine type that Lua creates with `machine.swift(name)`.
  public func register(_ name: String, _ make: @escaping () -> any MachineBehavior) {
    swiftMachines[LuaString(name)] = make
  }

  /// What makes the Swift machine registered as `name`, if any.
  func swiftMachine(named name: LuaString) -> (() -> any MachineBehavior)? {
    swiftMachines[name]
  }

  /// Keeps an inert machine for the runtime's life, to be drawn.
  func keepForDrawing(_ driver: MachineDriver) {
    drawn.append(driver)
  }
}

extension RuntimeCore {
  /// The machines Lua can still reach or that have not settled, oldest first.
  public var machines: [MachineDriver] { component(MachineSystem.self).all }

  /// The most recent live machine called `name` (byte for byte).
  public func machine(named name: LuaString) -> MachineDriver? {
    component(MachineSystem.self).machine(named: name)
  }

  /// Command interpreters by command name.
  public var interpreters: InterpreterRegistry { component(MachineSystem.self).interpreters }

  /// Registers a Swift machine type that Lua creates with `machine.swift(name)`.
  public func registerMachine(_ name: String, _ make: @escaping () -> any MachineBehavior) {
    component(MachineSystem.self).register(name, make)
  }
}
