import CLineEditor
import LuaKit
import Lunar
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `lunar repl`: an interactive console on a runtime. Entries run on the
/// runtime's thread; between them, background tasks go on.
enum ReplCommand {
  static let spec = CommandSpec(
    name: "repl",
    summary: "Start an interactive Lua console (also: lunar with no arguments on a terminal).",
    operands: "",
    options: [
      OptionSpec(name: "interactive", short: "i", value: "FILE", help: "run FILE first, then open the prompt with its globals"),
      OptionSpec(name: "clock", value: "real|virtual", help: "virtual time moves with .clock advance N"),
      OptionSpec(name: "warnings", short: "W", help: "turn Lua's warnings on, as lua5.4 -W"),
    ],
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    var configuration = RuntimeConfiguration()
    configuration.environment = Environment.current
    configuration.catchesInterrupts = true
    configuration.plugins = DefaultPlugins.all
    configuration.warnings = parsed.has("warnings")
    switch parsed.value("clock") {
    case nil, "real": break
    case "virtual": configuration.clock = .virtualFromNow
    case let other?:
      return LunarCommandLine.usageFailure(UsageError(message: "--clock is 'real' or 'virtual', got '\(other)'", command: "repl"))
    }
    let runtime: Runtime
    do {
      runtime = try Runtime(configuration)
    } catch {
      Console.error("lunar: \(error)")
      return 1
    }
    let console = Console.Input(terminal: isatty(0) != 0)
    Completion.runtime.withLock { $0 = runtime }
    if console.terminal {
      print("Lunar \(LunarCommandLine.version) (\(LuaVersion.description)); .help for commands, Ctrl-D to leave")
    }
    if let file = parsed.value("interactive") {
      evaluate(runtime, "load", [.string(LuaString(file))])
    } else {
      // Runs LUA_INIT before the first prompt.
      evaluate(runtime, "start", [])
    }
    var buffer: [String] = []
    while true {
      let prompt = buffer.isEmpty ? promptText(runtime, "_PROMPT", "> ") : promptText(runtime, "_PROMPT2", ">> ")
      let interrupts = Runtime.interruptCount
      guard let line = console.read(prompt: prompt) else {
        if console.terminal && Runtime.interruptCount != interrupts {
          // Ctrl-C at the prompt clears the entry.
          buffer.removeAll()
          print("")
          continue
        }
        break
      }
      if buffer.isEmpty && line.trimmingSpaces.isEmpty { continue }
      if buffer.isEmpty && line.hasPrefix(".") {
        console.remember(line)
        evaluate(runtime, "command", [.string(LuaString(String(line.dropFirst())))])
        continue
      }
      buffer.append(line)
      let entry = buffer.joined(separator: "\n")
      let status = evaluate(runtime, "eval", [.string(LuaString(entry))])
      if status == "incomplete" { continue }
      console.remember(entry)
      buffer.removeAll()
    }
    console.close()
    if console.terminal { print("") }
    reportBackgroundFailures(runtime)
    if case .success(let results) = runtime.evaluateBlocking(consoleChunk, name: "=repl", arguments: [.string("leaving")]),
      let note = results.first?.stringValue
    {
      Console.error("lunar: \(note)")
    }
    return 0
  }

  /// What the console asks of its runtime (`console.lua`): the request's
  /// name, then its argument, as the chunk's arguments.
  static let consoleChunk = String(decoding: PackageResources.console_lua, as: UTF8.self)

  /// Runs a console request and reports its status (`ok`, `incomplete`,
  /// `error` with the message printed), then the background tasks that
  /// failed meanwhile.
  @discardableResult
  static func evaluate(_ runtime: Runtime, _ request: String, _ arguments: [LuaValue]) -> String {
    defer { reportBackgroundFailures(runtime) }
    switch runtime.evaluateBlocking(consoleChunk, name: "=repl", arguments: [.string(LuaString(request))] + arguments) {
    case .success(let results):
      fflush(nil)
      let status = results.first?.stringValue ?? "ok"
      if status == "error", let message = results.dropFirst().first?.stringValue { Console.error(message) }
      return status
    case .failure(.interrupted):
      fflush(nil)
      Console.error("interrupted")
      return "error"
    case .failure(.lua(let error)):
      Console.error(error.description)
      return "error"
    case .failure(let other):
      Console.error("\(other)")
      return "error"
    }
  }

  /// Prints the errors of background tasks that failed with nobody
  /// looking (no `await`, `result` or `cancel` yet), once each, as `lunar
  /// run` prints them at its end. As in lua.c's console, a reported error
  /// does not change the exit status.
  static func reportBackgroundFailures(_ runtime: Runtime) {
    let failures = Blocking.run { await runtime.takeUnobservedFailures() }
    for failure in failures { Console.error("lunar: \(failure)") }
  }

  /// `_PROMPT` / `_PROMPT2` if the session set them, as lua.c reads them.
  static func promptText(_ runtime: Runtime, _ global: String, _ fallback: String) -> String {
    guard isatty(0) != 0 else { return "" }
    if case .success(let results) = runtime.evaluateBlocking(
      ReplCommand.consoleChunk, name: "=prompt", arguments: [.string("prompt"), .string(LuaString(global))]),
      let text = results.first?.stringValue, !text.isEmpty
    {
      return text
    }
    return fallback
  }
}

/// Tab completion: libedit asks for candidates one by one; the first call
/// computes them all in the runtime (globals and table fields).
enum Completion {
  static let runtime = Mutex<Runtime?>(nil)
  static let candidates = Mutex<[String]>([])

  static let completer: lunar_completer = { text, state in
    if state == 0 {
      let word = text.map { String(cString: $0) } ?? ""
      var found: [String] = []
      if let runtime = runtime.withLock({ $0 }),
        case .success(let results) = runtime.evaluateBlocking(
          ReplCommand.consoleChunk, name: "=complete", arguments: [.string("complete"), .string(LuaString(word))])
      {
        found = results.first?.tableValue?.array.compactMap(\.stringValue) ?? []
      }
      candidates.withLock { $0 = found }
    }
    let index = Int(state)
    guard let candidate = candidates.withLock({ index < $0.count ? $0[index] : nil }) else { return nil }
    return strdup(candidate)
  }
}

extension String {
  var trimmingSpaces: String { String(drop(while: { $0 == " " || $0 == "\t" })) }
}

extension Console {
  /// Where entries come from: libedit on a terminal (editing, history in
  /// ~/.lunar_history), plain lines otherwise (no prompts, no noise).
  final class Input {
    let terminal: Bool
    private let editing: Bool
    private let historyPath: String?

    init(terminal: Bool) {
      self.terminal = terminal
      editing = terminal && lunar_editor_open() != 0
      if let home = getenv("HOME") {
        historyPath = String(cString: home) + "/.lunar_history"
      } else {
        historyPath = nil
      }
      if editing, let historyPath {
        lunar_editor_read_history(historyPath)
      }
      if editing { lunar_editor_set_completer(Completion.completer) }
    }

    /// The next line, or nil at the end of input.
    func read(prompt: String) -> String? {
      if editing {
        guard let line = lunar_editor_readline(prompt) else { return nil }
        defer { free(line) }
        return String(cString: line)
      }
      if terminal {
        print(prompt, terminator: "")
        fflush(nil)
      }
      return readLine(strippingNewline: true)
    }

    /// Adds an entry to the history.
    func remember(_ entry: String) {
      if editing { lunar_editor_add_history(entry) }
    }

    /// Saves the history.
    func close() {
      if editing, let historyPath { lunar_editor_write_history(historyPath) }
    }
  }
}
