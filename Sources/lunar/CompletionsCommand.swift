/// `lunar completions bash|zsh|fish`: prints the shell's completion script
/// for `lunar`, made from the command table (`scripts/install` installs
/// all three).
enum CompletionsCommand {
  static let spec = CommandSpec(
    name: "completions",
    summary: "Print the shell completion script for lunar (commands, flags, .lua files).",
    operands: "bash|zsh|fish",
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    guard parsed.operands.count == 1, let shell = parsed.operands.first else {
      return LunarCommandLine.usageFailure(UsageError(message: "completions takes one shell: bash, zsh or fish", command: "completions"))
    }
    let commands = CommandCompletion.all
    let script: String
    switch shell {
    case "bash": script = BashCompletionScript.text(commands)
    case "zsh": script = ZshCompletionScript.text(commands)
    case "fish": script = FishCompletionScript.text(commands)
    default:
      return LunarCommandLine.usageFailure(
        UsageError(message: "no completions for shell '\(shell)' (bash, zsh, fish)", command: "completions"))
    }
    Console.output(Array(script.utf8))
    return 0
  }
}
