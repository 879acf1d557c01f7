import LuaKit
import Lunar
import LunarLaunches

/// `lunar graph FILE`: loads a file without running its machines and draws
/// the workflow it returns and every machine it defines (as Mermaid or DOT
/// text, or as an SVG picture Graphviz's `dot` draws from the DOT).
enum GraphCommand {
  static let spec = CommandSpec(
    name: "graph",
    summary: "Draw the workflow a file returns and the state machines it defines (Mermaid, Graphviz DOT or SVG).",
    operands: "FILE",
    options: [
      OptionSpec(name: "format", short: "f", value: "mermaid|dot|svg", help: "output language (default mermaid; svg is drawn by Graphviz's dot)")
    ],
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    guard let file = parsed.operands.first, parsed.operands.count == 1 else {
      return LunarCommandLine.usageFailure(UsageError(message: "graph takes one FILE", command: "graph"))
    }
    let name = parsed.value("format") ?? "mermaid"
    // An SVG picture is the DOT drawing, drawn by Graphviz.
    let isPicture = name == "svg"
    guard let format = isPicture ? .dot : GraphFormat(rawValue: name) else {
      return LunarCommandLine.usageFailure(UsageError(message: "unknown format '\(name)' (mermaid, dot, svg)", command: "graph"))
    }
    var configuration = RuntimeConfiguration()
    configuration.environment = Environment.current
    configuration.clock = .virtual(start: 0)
    configuration.drawing = format
    configuration.catchesInterrupts = true
    configuration.plugins = DefaultPlugins.all
    do {
      let runtime = try Runtime(configuration)
      let script = Script(source: file == "-" ? .standardInput : .file(file))
      let drawn = OutputDiversion.silencingStandardOutput { Blocking.run { await runtime.draw(script) } }
      guard !drawn.drawings.isEmpty else {
        if case .failure = drawn.outcome { return RunCommand.report(drawn.outcome) }
        Console.error("lunar: \(file) defines no state machine or workflow")
        return 1
      }
      if isPicture {
        Console.output(try GraphvizRenderer.svg(drawn.drawings))
        return 0
      }
      // One diagram after another, a blank line between them, as for machines.
      Console.output(Array(drawn.drawings.map(\.bytes).joined(separator: [UInt8(ascii: "\n")])))
      return 0
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
  }
}
