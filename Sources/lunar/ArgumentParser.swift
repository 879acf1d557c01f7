/// One flag a subcommand accepts; the table of these drives both parsing
/// and the help text.
struct OptionSpec: Sendable {
  /// The long name, without dashes (`timeout` for `--timeout`).
  let name: String
  /// A one-letter alias (`o` for `-o`), if any.
  var short: Character? = nil
  /// The placeholder of the flag's value (`SECONDS`), or nil for a switch.
  var value: String? = nil
  /// One line for the help text.
  let help: String
  /// The value may be left out; it is then given only as `--name=VALUE`
  /// (so `--resume script.lua` does not take the script for the value).
  var valueIsOptional = false
}

/// A subcommand: its name, its help, its flags and what it does.
struct CommandSpec: Sendable {
  /// The word after `lunar`.
  let name: String
  /// One line for `lunar help`.
  let summary: String
  /// What follows the flags in the usage line (`FILE [ARGS...]`).
  var operands: String = ""
  /// The flags it accepts (`--help` is always accepted).
  var options: [OptionSpec] = []
  /// True when flags end at the first operand (the script's own arguments
  /// follow it and are not Lunar's to parse).
  var optionsEndAtFirstOperand = false
  /// Runs the command; returns the exit status.
  let run: @Sendable (ParsedArguments) -> Int32
}

/// The result of parsing one subcommand's arguments.
struct ParsedArguments: Sendable {
  /// Switches and flag values by long name; repeated flags keep every value.
  var flags: [String: [String]] = [:]
  /// Everything that is not a flag, in order.
  var operands: [String] = []
  /// The command line up to and including the first operand, for `arg`.
  var prefix: [String] = []

  /// True when the switch was given.
  func has(_ name: String) -> Bool { flags[name] != nil }
  /// The last value given for a flag.
  func value(_ name: String) -> String? { flags[name]?.last }
}

/// A command line that cannot be run: exit status 2 and a one-line hint.
struct UsageError: Error, Sendable {
  let message: String
  let command: String?
}

extension CommandSpec {
  /// `--help`, which every command accepts.
  static let helpOption = OptionSpec(name: "help", short: "h", help: "show this help")

  /// Parses `arguments` (the words after the subcommand name).
  func parse(_ arguments: [String], prefix: [String]) throws(UsageError) -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    var optionsDone = false
    parsed.prefix = prefix
    while index < arguments.count {
      let word = arguments[index]
      index += 1
      if optionsDone || word == "-" || !word.hasPrefix("-") {
        parsed.operands.append(word)
        if optionsEndAtFirstOperand && !optionsDone {
          optionsDone = true
          parsed.prefix = prefix + arguments[..<(index - 1)]
        }
        continue
      }
      if word == "--" {
        optionsDone = true
        parsed.prefix = prefix + arguments[..<index]
        continue
      }
      let (spec, inlineValue) = try lookUp(word)
      if spec.valueIsOptional {
        parsed.flags[spec.name, default: []].append(inlineValue ?? "")
      } else if let placeholder = spec.value {
        let value: String
        if let inlineValue {
          value = inlineValue
        } else if index < arguments.count {
          value = arguments[index]
          index += 1
        } else {
          throw UsageError(message: "option '\(word)' needs a value (\(placeholder))", command: name)
        }
        parsed.flags[spec.name, default: []].append(value)
      } else {
        if inlineValue != nil { throw UsageError(message: "option '--\(spec.name)' takes no value", command: name) }
        parsed.flags[spec.name, default: []].append("")
      }
    }
    if !optionsDone { parsed.prefix = prefix + arguments }
    return parsed
  }

  private func lookUp(_ word: String) throws(UsageError) -> (OptionSpec, String?) {
    let all = options + [Self.helpOption]
    if word.hasPrefix("--") {
      let body = word.dropFirst(2)
      let parts = body.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = String(parts[0])
      if let spec = all.first(where: { $0.name == name }) {
        return (spec, parts.count > 1 ? String(parts[1]) : nil)
      }
    } else if word.count == 2, let letter = word.last, let spec = all.first(where: { $0.short == letter }) {
      return (spec, nil)
    }
    throw UsageError(message: "unknown option '\(word)' for 'lunar \(name)'", command: name)
  }

  /// How the command is written: `lunar run [OPTIONS] FILE [ARGS...]`.
  var usage: String {
    "lunar \(name)\(options.isEmpty ? "" : " [OPTIONS]")\(operands.isEmpty ? "" : " " + operands)"
  }

  /// The help text, generated from the same table the parser reads.
  var help: String {
    var lines = ["usage: " + usage, "", summary]
    let all = options + [Self.helpOption]
    lines.append("")
    lines.append("options:")
    let labels = all.map { spec in
      (spec.short.map { "-\($0), " } ?? "    ") + "--\(spec.name)"
        + (spec.value.map { spec.valueIsOptional ? "[=\($0)]" : " \($0)" } ?? "")
    }
    let width = (labels.map(\.count).max() ?? 0) + 2
    for (label, spec) in zip(labels, all) {
      lines.append("  " + label.padding(to: width) + spec.help)
    }
    return lines.joined(separator: "\n")
  }
}

extension String {
  /// The string followed by spaces up to `width` characters.
  func padding(to width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}
