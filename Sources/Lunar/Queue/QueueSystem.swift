/// A runtime's queues, kept by the queue plugin: those Lua can still reach
/// or that still have jobs. Loop thread only.
public final class QueueSystem: RuntimeComponent {
  /// Queues by registration, without keeping them alive.
  let live = LiveObjects<LuaQueue>()

  /// The queues of `core`'s runtime.
  public init(core: RuntimeCore) {}

  /// The live queues, oldest first (the REPL's `.queues`).
  public var all: [LuaQueue] { live.all }
}

extension RuntimeCore {
  /// The queues Lua can still reach or that still have jobs, oldest first.
  public var queues: [LuaQueue] { component(QueueSystem.self).all }
}
