import LuaKit

/// A script drawn instead of run (see `Runtime.draw`).
public struct ScriptDrawing: Sendable {
  /// The drawings: the workflow the script returned, if any, then each
  /// machine it defined, in the runtime's `RuntimeConfiguration.drawing`.
  public var drawings: [LuaString]
  /// How the run ended. Machines are drawn even when it failed: they never
  /// run, so code after their definitions that needs their results may fail.
  public var outcome: Result<[LuaValue], RunFailure>
}

extension Runtime {
  /// Runs `script` in drawing mode, where machines are built but never
  /// started and a returned workflow is drawn, not run, and returns what
  /// was drawn. For a runtime made with `RuntimeConfiguration.drawing`;
  /// another draws nothing.
  public func draw(_ script: Script) async -> ScriptDrawing {
    do {
      return try await perform { core in
        let outcome = core.scripts.run(script)
        return ScriptDrawing(drawings: core.component(Drawings.self).take(), outcome: outcome)
      }
    } catch {
      return ScriptDrawing(drawings: [], outcome: .failure(.interrupted("the runtime has stopped")))
    }
  }
}
