import LuaKit
import Lunar
import LunarLaunches

/// `lunar graph FILE`: loads a file without running its machines and draws
/// the workflow it returns and every machine it defines.
enum GraphCommand {
  static let spec = CommandSpec(
    name: "graph",
    summary: "Draw the workflow a file returns and the state machines it defines (Mermaid or Graphviz).",
    operands: "FILE",
    options: [
      OptionSpec(name: "format", short: "f", value: "mermaid|dot", help: "output language (default mermaid)")
    ],
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    guard let file = parsed.operands.first, parsed.operands.count == 1 else {
      return LunarCommandLine.usageFailure(UsageError(message: "graph takes one FILE", command: "graph"))
    }
    let name = parsed.value("format") ?? "mermaid"
    guard let format = GraphFormat(rawValue: name) else {
      return LunarCommandLine.usageFailure(UsageError(message: "unknown format '\(name)' (mermaid, dot)", command: "graph"))
    }
    var configuration = RuntimeConfiguration()
    configuration.environment = Environment.current
    configuration.clock = .virtual(start: 0)
    configuration.inertMachines = true
    configuration.workflowGraphFormat = format.rawValue
    configuration.catchesInterrupts = true
    configuration.plugins = DefaultPlugins.all
    do {
      let runtime = try Runtime(configuration)
      // Machines are built but never run, so code that needs their results
      // may fail after defining them: the machines are drawn all the same.
      let outcome = runtime.runBlocking(Script(source: file == "-" ? .standardInput : .file(file)))
      // In graph mode a result is only ever the drawing of a returned workflow.
      var workflow: [UInt8]?
      if case .success(let results) = outcome, case .string(let drawing)? = results.first { workflow = drawing.bytes }
      let machines = Blocking.run {
        (try? await runtime.perform { core in
          core.machines.isEmpty ? nil : MachineGraph.render(core.machines.map(\.behavior), as: format)
        }) ?? nil
      }
      guard workflow != nil || machines != nil else {
        if case .failure = outcome { return RunCommand.report(outcome) }
        Console.error("lunar: \(file) defines no state machine or workflow")
        return 1
      }
      // One diagram after another, a blank line between them, as for machines.
      let drawings = [workflow, machines.map { Array($0.utf8) }].compactMap { $0 }
      Console.output(Array(drawings.joined(separator: [UInt8(ascii: "\n")])))
      return 0
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
  }
}
