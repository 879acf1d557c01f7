/// What a shell can complete for one command, read from its entry in the
/// command table (`LunarCommandLine.commands`, the one `lunar help` prints):
/// its flags, what each flag's value is and what its operands are. Nothing
/// here names a command or a flag; a new entry in the table is completed
/// as soon as it is there.
struct CommandCompletion: Sendable {
  /// What a word may be completed with.
  struct Candidates: Sendable, Equatable {
    /// Files a word may name.
    enum Files: Int, Sendable, Comparable {
      /// Folders only.
      case folders
      /// `.lua` files (specs, workflows, scripts) and folders.
      case lua
      /// Any file.
      case any

      static func < (lhs: Files, rhs: Files) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Fixed words (`mermaid`, `dot`, `svg`; `show`).
    var words: [String] = []
    /// Files, if the word may name one.
    var files: Files?
    /// True when the word may be a command's name (`lunar help COMMAND`).
    var commands = false

    /// True when nothing can be offered.
    var isEmpty: Bool { words.isEmpty && files == nil && !commands }

    /// Everything either may be completed with.
    func union(_ other: Candidates) -> Candidates {
      Candidates(
        words: words + other.words.filter { !words.contains($0) },
        files: [files, other.files].compactMap { $0 }.max(), commands: commands || other.commands)
    }

    /// What a flag's value or an operand written as `placeholder` in the
    /// table may be: `a|b` are words; `FILE` and `PATHS` name files
    /// (`.lua` ones for operands, any for a flag's value), `DIR` a folder,
    /// `ARGS` a script's arguments (any file), `COMMAND` a command.
    init(placeholder: String, isOperand: Bool) {
      let alternatives = placeholder.split(separator: "|").map(String.init)
      if alternatives.allSatisfy({ $0.first?.isLowercase == true }) {
        words = alternatives
        return
      }
      switch placeholder {
      case "FILE", "PATHS": files = isOperand ? .lua : .any
      case "DIR": files = .folders
      case "ARGS": files = .any
      case "COMMAND": commands = true
      default: break
      }
    }

    /// Candidates made of their parts.
    init(words: [String] = [], files: Files? = nil, commands: Bool = false) {
      self.words = words
      self.files = files
      self.commands = commands
    }
  }

  /// One flag.
  struct Flag: Sendable {
    /// The long name, without dashes.
    let name: String
    /// Its one-letter alias, if any.
    let short: Character?
    /// Its line of help.
    let help: String
    /// Its value's placeholder (`SECONDS`), or nil for a switch.
    let placeholder: String?
    /// What its value may be.
    let value: Candidates
    /// True when a value is given only as `--name=VALUE`.
    let valueIsOptional: Bool

    /// True when the word after the flag is its value.
    var takesNextWord: Bool { placeholder != nil && !valueIsOptional }
  }

  /// The command's name.
  let name: String
  /// Its line of help.
  let summary: String
  /// Its flags, `--help` last.
  let flags: [Flag]
  /// What its first operand may be.
  let firstOperand: Candidates
  /// What its later operands may be.
  let laterOperands: Candidates
  /// True when flags end at the first operand (a script's own arguments
  /// follow it).
  let flagsEndAtFirstOperand: Bool

  /// The completion of `spec`.
  init(_ spec: CommandSpec) {
    name = spec.name
    summary = spec.summary
    flags = (spec.options + [CommandSpec.helpOption]).map { option in
      Flag(
        name: option.name, short: option.short, help: option.help, placeholder: option.value,
        value: option.value.map { Candidates(placeholder: $0, isOperand: false) } ?? Candidates(),
        valueIsOptional: option.valueIsOptional)
    }
    flagsEndAtFirstOperand = spec.optionsEndAtFirstOperand
    // The operands' usage (`FILE [ARGS...]`, `ls | show NAME`): the first
    // word of each alternative may come first; later words, and a first
    // one that repeats (`FILE...`), after it.
    var first = Candidates()
    var later = Candidates()
    for alternative in spec.operands.split(separator: " | ") {
      let words = alternative.split(separator: " ").map { word in
        (String(word.filter { $0 != "[" && $0 != "]" && $0 != "." }), repeats: word.contains("..."))
      }
      for (index, word) in words.enumerated() where !word.0.isEmpty {
        let candidates = Candidates(placeholder: word.0, isOperand: true)
        if index == 0 { first = first.union(candidates) }
        if index > 0 || word.repeats { later = later.union(candidates) }
      }
    }
    firstOperand = first
    laterOperands = later
  }

  /// Every command of the table, in its order.
  static var all: [CommandCompletion] { LunarCommandLine.commands.map(CommandCompletion.init) }

  /// The words `lunar` itself takes before a command (see
  /// `LunarCommandLine.main`), with their help.
  static let topLevelFlags: [(short: Character, name: String, help: String)] = [
    ("h", "help", "show the commands"), ("v", "version", "print Lunar's version and the Lua version"),
  ]
}
