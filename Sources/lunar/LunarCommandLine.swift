#if canImport(Glibc)
import Glibc
#endif
import LuaKit
import Lunar

/// The `lunar` command: finds the subcommand, parses its flags and maps
/// outcomes to exit codes (0 success, 1 script failure, 2 usage, 130
/// interrupted).
enum LunarCommandLine {
  /// The version `lunar version` prints.
  static let version = "0.1.0"

  /// Every subcommand, in the order `lunar help` lists them.
  static let commands: [CommandSpec] = [
    RunCommand.spec,
    RunsCommand.spec,
    SubmitCommand.spec,
    ScheduleCommand.spec,
    QueueCommand.spec,
    WorkerCommand.spec,
    ServeCommand.spec,
    CheckCommand.spec,
    TestCommand.spec,
    GraphCommand.spec,
    TypesCommand.spec,
    ReplCommand.spec,
    CompletionsCommand.spec,
    ManCommand.spec,
    CommandSpec(name: "version", summary: "Print Lunar's version and the Lua version.") { _ in
      print("lunar \(version) (\(LuaVersion.description))")
      return 0
    },
    CommandSpec(name: "help", summary: "Show help for lunar or for one command.", operands: "[COMMAND]") { parsed in
      guard let name = parsed.operands.first else {
        print(overview)
        return 0
      }
      guard let command = commands.first(where: { $0.name == name }) else {
        return usageFailure(UsageError(message: "unknown command '\(RunText.printable(name))'", command: nil))
      }
      print(command.help)
      return 0
    },
  ]

  /// `lunar help` with no command.
  static var overview: String {
    let width = (commands.map(\.name.count).max() ?? 0) + 2
    return (["usage: lunar COMMAND [OPTIONS] [ARGS...]", "       lunar FILE [ARGS...]   (same as lunar run FILE)", "", "commands:"]
      + commands.map { "  " + $0.name.padding(to: width) + $0.summary }
      + ["", "Run 'lunar help COMMAND' for a command's options."]).joined(separator: "\n")
  }

  /// Runs the command line and returns the exit status.
  static func main(arguments: [String]) -> Int32 {
    main(words: arguments.map { LuaString($0) })
  }

  /// Runs the command line, its words as typed (`ArgumentBytes.all`), and
  /// returns the exit status.
  static func main(words all: [LuaString]) -> Int32 {
    var words = Array(all.dropFirst())
    let program = all.first.map(ArgumentBytes.text) ?? "lunar"
    // As lua.c: `lunar -- FILE` runs FILE, whatever it is named.
    var prefix = [program]
    var optionsDone = false
    if words.first == "--" {
      words.removeFirst()
      prefix.append("--")
      optionsDone = true
    }
    guard let firstBytes = words.first else {
      // As lua.c: with no arguments, a piped standard input is the script;
      // a terminal gets the console.
      if isatty(STDIN_FILENO) == 0 {
        return run(RunCommand.spec, ["-"], prefix: prefix)
      }
      return run(ReplCommand.spec, [], prefix: prefix + ["repl"])
    }
    let first = ArgumentBytes.text(firstBytes)
    if optionsDone {
      return run(RunCommand.spec, ["--"] + words, prefix: [program])
    }
    if first == "--help" || first == "-h" {
      print(overview)
      return 0
    }
    if first == "--version" || first == "-v" {
      return run(commands.first { $0.name == "version" }!, [], prefix: [program])
    }
    if let command = commands.first(where: { $0.name == first }) {
      return run(command, Array(words.dropFirst()), prefix: [program, first])
    }
    if first.hasPrefix("-") && first != "-" {
      return usageFailure(UsageError(message: "unknown option '\(RunText.printable(first))'", command: nil))
    }
    if !first.contains(".") && !first.contains("/") && first != "-" {
      return usageFailure(UsageError(message: "unknown command '\(RunText.printable(first))'", command: nil))
    }
    return run(RunCommand.spec, words, prefix: [program])
  }

  private static func run(_ command: CommandSpec, _ words: [LuaString], prefix: [String]) -> Int32 {
    do {
      let parsed = try command.parse(words, prefix: prefix)
      if parsed.has("help") {
        print(command.help)
        return 0
      }
      return command.run(parsed)
    } catch {
      return usageFailure(error)
    }
  }

  /// Prints a usage error with its hint and returns 2. The message is one
  /// line: a word it quotes keeps its newlines and other control
  /// characters escaped as in a Lua literal (`a\nb`).
  static func usageFailure(_ error: UsageError) -> Int32 {
    let hint = error.command.map { "Try 'lunar help \($0)'." } ?? "Try 'lunar help'."
    Console.error("lunar: \(RunText.printable(error.message))\n\(hint)")
    return 2
  }
}
