import LuaKit

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

/// The result of parsing one subcommand's arguments. Each word is kept as
/// the bytes it was typed as, and as text (`ArgumentBytes.text`: invalid
/// UTF-8 escaped) for messages, numbers and paths.
struct ParsedArguments: Sendable {
  /// Switches and flag values by long name, as text; repeated flags keep
  /// every value.
  var flags: [String: [String]] = [:]
  /// The flag values' bytes, as `flags` holds their text.
  var flagBytes: [String: [LuaString]] = [:]
  /// Everything that is not a flag, in order, as text.
  var operands: [String] = []
  /// The operands' bytes.
  var operandBytes: [LuaString] = []
  /// The command line up to and including the first operand, for `arg`.
  var prefix: [String] = []
  /// The flag that took the command line's last word as its value, and that
  /// word: when an operand is then missing, it was likely taken for a value.
  var lastWordTakenBy: (flag: String, value: String)?

  /// True when the switch was given.
  func has(_ name: String) -> Bool { flags[name] != nil }
  /// The last value given for a flag.
  func value(_ name: String) -> String? { flags[name]?.last }
  /// The bytes of the last value given for a flag (a name to compare with
  /// names from Lua or a store).
  func bytes(_ name: String) -> LuaString? { flagBytes[name]?.last }

  mutating func add(_ name: String, _ value: LuaString) {
    flags[name, default: []].append(ArgumentBytes.text(value))
    flagBytes[name, default: []].append(value)
  }

  /// The message for a missing operand (`missing script file`), saying
  /// which flag took the last word if one did (`lunar run --timeout f.lua`).
  func missing(_ what: String) -> String {
    guard let (flag, value) = lastWordTakenBy else { return what }
    return "\(what) ('\(RunText.printable(value))' was taken as the value of --\(flag))"
  }
}

/// A command line that cannot be run: exit status 2 and a one-line hint.
struct UsageError: Error, Sendable {
  let message: String
  let command: String?
}

extension CommandSpec {
  /// `--help`, which every command accepts.
  static let helpOption = OptionSpec(name: "help", short: "h", help: "show this help")

  /// Parses `arguments` (the words after the subcommand name) as getopt_long
  /// does: `--name VALUE`, `--name=VALUE`, `-n VALUE`, `-nVALUE`, switches
  /// together (`-lh`), and after `--` only operands.
  func parse(_ arguments: [String], prefix: [String]) throws(UsageError) -> ParsedArguments {
    try parse(arguments.map { LuaString($0) }, prefix: prefix)
  }

  /// Parses the words as typed (see `parse(_:prefix:)`).
  func parse(_ words: [LuaString], prefix: [String]) throws(UsageError) -> ParsedArguments {
    let dash = UInt8(ascii: "-")
    let texts = words.map(ArgumentBytes.text)
    var parsed = ParsedArguments()
    var index = 0
    var optionsDone = false
    parsed.prefix = prefix
    func takeValue(for spec: OptionSpec, written word: String) throws(UsageError) -> LuaString {
      guard index < words.count else {
        throw UsageError(message: "option '\(word)' needs a value (\(spec.value ?? "VALUE"))", command: name)
      }
      index += 1
      if index == words.count { parsed.lastWordTakenBy = (spec.name, texts[index - 1]) }
      return words[index - 1]
    }
    while index < words.count {
      let bytes = words[index].bytes
      let word = texts[index]
      index += 1
      if optionsDone || bytes == [dash] || bytes.first != dash {
        parsed.operands.append(word)
        parsed.operandBytes.append(words[index - 1])
        if optionsEndAtFirstOperand && !optionsDone {
          optionsDone = true
          parsed.prefix = prefix + texts[..<(index - 1)]
        }
        continue
      }
      if bytes == [dash, dash] {
        optionsDone = true
        parsed.prefix = prefix + texts[..<index]
        continue
      }
      if bytes.count > 1 && bytes[1] == dash {
        // --name, --name=VALUE
        let body = bytes.dropFirst(2)
        let equals = body.firstIndex(of: UInt8(ascii: "="))
        let nameBytes = equals.map { body[..<$0] } ?? body
        let inline = equals.map { LuaString(bytes: Array(body[body.index(after: $0)...])) }
        guard let spec = longOption(Array(nameBytes)) else {
          throw UsageError(message: "unknown option '\(RunText.printable(word))' for 'lunar \(name)'", command: name)
        }
        if spec.valueIsOptional {
          parsed.add(spec.name, inline ?? LuaString(bytes: []))
        } else if spec.value != nil {
          if let inline {
            parsed.add(spec.name, inline)
          } else {
            parsed.add(spec.name, try takeValue(for: spec, written: "--" + spec.name))
          }
        } else {
          if inline != nil { throw UsageError(message: "option '--\(spec.name)' takes no value", command: name) }
          parsed.add(spec.name, LuaString(bytes: []))
        }
        continue
      }
      // -x, -xVALUE, -xy (switches together), as getopt reads them.
      var position = 1
      while position < bytes.count {
        guard let spec = shortOption(bytes[position]) else {
          let shown = position == 1 ? word : "-" + ArgumentBytes.text(LuaString(bytes: [bytes[position]])) + "' in '" + word
          throw UsageError(message: "unknown option '\(RunText.printable(shown))' for 'lunar \(name)'", command: name)
        }
        position += 1
        // An optional value is only ever given as --name=VALUE.
        if spec.value != nil && !spec.valueIsOptional {
          let written = "-" + String(spec.short.map { String($0) } ?? "")
          if position < bytes.count {
            parsed.add(spec.name, LuaString(bytes: Array(bytes[position...])))
          } else {
            parsed.add(spec.name, try takeValue(for: spec, written: written))
          }
          break
        }
        parsed.add(spec.name, LuaString(bytes: []))
      }
    }
    if !optionsDone { parsed.prefix = prefix + texts }
    return parsed
  }

  /// The flag `--NAME` names, if the command has it.
  private func longOption(_ name: [UInt8]) -> OptionSpec? {
    (options + [Self.helpOption]).first { $0.name.utf8.elementsEqual(name) }
  }

  /// The flag `-X` names, if the command has it.
  private func shortOption(_ letter: UInt8) -> OptionSpec? {
    (options + [Self.helpOption]).first { spec in spec.short.map { $0.utf8.elementsEqual([letter]) } ?? false }
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
