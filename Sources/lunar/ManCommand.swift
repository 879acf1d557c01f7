/// `lunar man`: prints the manual page `lunar(1)` in roff, made from the
/// command table (`scripts/install` installs it; `man -l` reads it as is).
enum ManCommand {
  static let spec = CommandSpec(
    name: "man",
    summary: "Print lunar's manual page (roff, for man -l or PREFIX/share/man/man1/lunar.1).",
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    guard parsed.operands.isEmpty else {
      return LunarCommandLine.usageFailure(UsageError(message: "man takes no operands", command: "man"))
    }
    Console.output(Array(ManPage.text(LunarCommandLine.commands, version: LunarCommandLine.version).utf8))
    return 0
  }
}
