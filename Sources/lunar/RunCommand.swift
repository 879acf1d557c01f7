import LuaKit
import Lunar

#if canImport(Glibc)
import Glibc
#endif

/// `lunar run FILE [ARGS...]`: runs a script as `lua5.4 FILE ARGS...` would.
enum RunCommand {
  static let spec = CommandSpec(
    name: "run",
    summary: "Run a Lua script (FILE, or - for standard input) with its arguments.",
    operands: "FILE [ARGS...]",
    options: [],
    optionsEndAtFirstOperand: true,
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    guard let file = parsed.operands.first else {
      return LunarCommandLine.usageFailure(UsageError(message: "missing script file", command: "run"))
    }
    let script = Script(
      source: file == "-" ? .standardInput : .file(file),
      arguments: Array(parsed.operands.dropFirst()),
      interpreterArguments: parsed.prefix
    )
    do {
      var options = ScriptRunner.Options()
      options.environment = Environment.current
      let runner = try ScriptRunner(options: options)
      try runner.run(script)
      fflush(nil)
      return 0
    } catch {
      report(error)
      return 1
    }
  }

  /// Prints a Lua failure as `lua.c` does: `lunar: message` and the traceback.
  static func report(_ error: LuaError) {
    Console.error("lunar: " + error.description)
  }
}

/// The process environment as a dictionary.
enum Environment {
  static var current: [String: String] {
    var result: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      let text = String(cString: pointer)
      if let equals = text.firstIndex(of: "=") {
        result[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
      entry += 1
    }
    return result
  }
}
