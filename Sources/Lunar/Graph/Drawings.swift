import LuaKit

/// What plugins draw of a script in drawing mode (`RuntimeConfiguration.drawing`,
/// `lunar graph`): drawings made while it runs (the workflow it returns),
/// then those made once it has run (its machines). Loop thread only.
public final class Drawings: RuntimeComponent {
  /// The language to draw in; nil when the runtime runs scripts instead.
  public let format: GraphFormat?
  private var drawn: [LuaString] = []
  private var drawers: [() -> LuaString?] = []

  /// The drawings of `core`'s runtime.
  public init(core: RuntimeCore) {
    format = core.configuration.drawing
  }

  /// Adds a drawing made while the script runs.
  public func add(_ drawing: LuaString) {
    drawn.append(drawing)
  }

  /// Adds `draw`, which draws once the script has run (nil: nothing to
  /// draw); its drawing follows those added while the script ran.
  public func drawWhenRunEnds(_ draw: @escaping () -> LuaString?) {
    drawers.append(draw)
  }

  /// Every drawing of the script that has just run, in order; those
  /// added while it ran are then forgotten.
  func take() -> [LuaString] {
    defer { drawn.removeAll() }
    return drawn + drawers.compactMap { $0() }
  }
}
