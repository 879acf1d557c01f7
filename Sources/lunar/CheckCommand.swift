import LuaKit

/// `lunar check FILE...`: compiles each file without running it and reports
/// every syntax error with its file and line.
enum CheckCommand {
  static let spec = CommandSpec(
    name: "check",
    summary: "Compile Lua files without running them; report each syntax error.",
    operands: "FILE...",
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    guard !parsed.operands.isEmpty else {
      return LunarCommandLine.usageFailure(UsageError(message: "missing file to check", command: "check"))
    }
    var failed = 0
    for file in parsed.operands {
      do {
        let state = try LuaState(openLibraries: false)
        try state.load(file: file == "-" ? nil : file)
      } catch {
        Console.error("lunar: \(error.message)")
        failed += 1
      }
    }
    if failed > 0 {
      Console.error("lunar: \(failed) of \(parsed.operands.count) file\(parsed.operands.count == 1 ? "" : "s") failed to compile")
      return 1
    }
    return 0
  }
}
