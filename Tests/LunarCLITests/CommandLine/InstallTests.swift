import Foundation
import Testing
import TestSupport

/// `scripts/install PREFIX` puts lunar on the PATH with its completions and
/// manual page; these install the built binary (`LUNAR_BINARY`, so that no
/// second, release, build runs) into a temporary prefix and use what was
/// installed as a user would: the binary, `man`, and bash's completion.
@Suite struct InstallTests {
  static let root = Repository.root

  /// The files an install writes, under its prefix.
  static let installed = [
    "bin/lunar", "share/bash-completion/completions/lunar", "share/zsh/site-functions/_lunar",
    "share/fish/vendor_completions.d/lunar.fish", "share/man/man1/lunar.1",
  ]

  /// `scripts/install PREFIX` with the built binary.
  static func install(into prefix: URL) async throws -> ProgramRun.Outcome {
    try await ProgramRun.run(
      root.appendingPathComponent("scripts/install").path, [prefix.path], environment: ["LUNAR_BINARY": LunarProcess.binary])
  }

  /// A prefix (with a space in its path) that lunar was installed into.
  static func installedPrefix() async throws -> (TemporaryFolder, URL) {
    let folder = try TemporaryFolder()
    let prefix = folder.url.appendingPathComponent("pre fix")
    let outcome = try await install(into: prefix)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    return (folder, prefix)
  }

  /// The commands `lunar help` lists.
  static func commands() async throws -> [String] {
    let help = try await LunarProcess.run(["help"])
    let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let start = try #require(lines.firstIndex(of: "commands:")) + 1
    return lines[start...].prefix { $0.hasPrefix("  ") }.map { String($0.split(separator: " ")[0]) }
  }

  /// The flags `lunar help COMMAND` lists (`-j`, `--jobs`), and each value's
  /// placeholder by long flag.
  static func flags(of command: String) async throws -> (names: [String], values: [String: String]) {
    let help = try await LunarProcess.run(["help", command])
    var names: [String] = []
    var values: [String: String] = [:]
    for line in help.stdout.split(separator: "\n") {
      guard let match = line.wholeMatch(of: #/  (?:-(\w), )?\s*--([\w-]+)(?:\[?[ =](\S+?)\]?)?  .*/#) else { continue }
      if let short = match.1 { names.append("-\(short)") }
      names.append("--\(match.2)")
      if let value = match.3 { values["--\(match.2)"] = String(value) }
    }
    return (names, values)
  }

  @Test func installsTheBinaryItsCompletionsAndItsManPage() async throws {
    let (folder, prefix) = try await Self.installedPrefix()
    _ = folder
    for file in Self.installed {
      #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file) installed")
    }
    let mode = try FileManager.default.attributesOfItem(atPath: prefix.appendingPathComponent("bin/lunar").path)[.posixPermissions]
    #expect(mode as? Int == 0o755)
    let version = try await ProgramRun.run(prefix.appendingPathComponent("bin/lunar").path, ["version"])
    #expect(version.status == 0)
    #expect(version.stdout.hasPrefix("lunar ") && version.stdout.contains("Lua 5.4"), "\(version.stdout)")
    // What was installed is what the binary generates.
    for (file, arguments) in [
      ("share/bash-completion/completions/lunar", ["completions", "bash"]), ("share/zsh/site-functions/_lunar", ["completions", "zsh"]),
      ("share/fish/vendor_completions.d/lunar.fish", ["completions", "fish"]), ("share/man/man1/lunar.1", ["man"]),
    ] {
      let generated = try await LunarProcess.run(arguments)
      #expect(try String(contentsOf: prefix.appendingPathComponent(file), encoding: .utf8) == generated.stdout, "\(file)")
    }
    // Installing again replaces Lunar's own files, and leaves no temporary file.
    let again = try await Self.install(into: prefix)
    #expect(again.status == 0, "\(again.stderr)")
    let left = FileManager.default.enumerator(atPath: prefix.path)?.compactMap { $0 as? String }.filter { $0.contains(".install-") }
    #expect(left == [])
  }

  @Test func aFileThatIsNotLunarsStopsTheInstallAndIsLeftAsItIs() async throws {
    let folder = try TemporaryFolder()
    let prefix = folder.url.appendingPathComponent("prefix")
    let page = try folder.write("prefix/share/man/man1/lunar.1", ".TH LUNAR 6 \"\" \"\" \"Games\"\nsomething else\n")
    let outcome = try await Self.install(into: prefix)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("\(page) exists and is not Lunar's"), "\(outcome.stderr)")
    #expect(try String(contentsOfFile: page, encoding: .utf8) == ".TH LUNAR 6 \"\" \"\" \"Games\"\nsomething else\n")
    #expect(!FileManager.default.fileExists(atPath: prefix.appendingPathComponent("bin/lunar").path), "nothing installed")
  }

  @Test func theManPageRendersEveryCommandAndFlag() async throws {
    let (folder, prefix) = try await Self.installedPrefix()
    _ = folder
    let page = prefix.appendingPathComponent("share/man/man1/lunar.1").path
    // groff's own check: every warning on.
    let lint = try await ProgramRun.run("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", page])
    #expect(lint.status == 0 && lint.stderr.isEmpty, "\(lint.stderr)")
    let man = try await ProgramRun.run("/usr/bin/man", ["-l", page], environment: ["MANPAGER": "cat", "MANWIDTH": "300"])
    #expect(man.status == 0, "\(man.stderr)")
    // Some groff builds draw `\-` as a minus sign.
    let text = man.stdout.replacingOccurrences(of: "\u{2212}", with: "-")
    #expect(text.hasPrefix("LUNAR(1)"), "\(text.prefix(200))")
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS"] { #expect(text.contains("\n\(section)\n")) }
    for command in try await Self.commands() {
      #expect(text.contains("   lunar \(command)"), "\(command) has its section")
      for flag in try await Self.flags(of: command).names where flag != "--help" && flag != "-h" {
        #expect(text.contains(flag), "\(command) \(flag) is in the manual")
      }
    }
  }

  @Test func bashCompletesCommandsFlagsValuesAndLuaFiles() async throws {
    let (folder, prefix) = try await Self.installedPrefix()
    let script = prefix.appendingPathComponent("share/bash-completion/completions/lunar").path
    let work = folder.url.appendingPathComponent("work")
    try FileManager.default.createDirectory(at: work.appendingPathComponent("spec"), withIntermediateDirectories: true)
    try folder.write("work/deploy.lua", "")
    try folder.write("work/notes.txt", "")
    let driver = #"""
      source "$1" || exit 1
      complete -p lunar || exit 1
      # Completes the words given, the last being the one under the cursor.
      offer() {
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        _lunar
        echo "${COMPREPLY[*]}"
      }
      offer lunar ""
      offer lunar test --
      offer lunar graph --format ""
      offer lunar test ""
      offer lunar run deploy.lua ""
      """#
    let outcome = try await ProgramRun.run("/bin/bash", ["--norc", "-c", driver, "bash", script], in: work)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n", omittingEmptySubsequences: false).map { Set($0.split(separator: " ").map(String.init)) }
    try #require(lines.count >= 6, "\(outcome.stdout)")
    #expect(outcome.stdout.hasPrefix("complete -F _lunar lunar\n"))
    // lunar <TAB>: every command `lunar help` lists, lunar's own flags, and .lua files and folders (lunar FILE).
    #expect(lines[1] == Set(try await Self.commands() + ["-h", "--help", "-v", "--version", "deploy.lua", "spec"]))
    // lunar test --<TAB>: every long flag `lunar help test` lists.
    #expect(lines[2] == Set(try await Self.flags(of: "test").names.filter { $0.hasPrefix("--") }))
    // lunar graph --format <TAB>: the values its help names.
    let format = try #require(try await Self.flags(of: "graph").values["--format"])
    #expect(lines[3] == Set(format.split(separator: "|").map(String.init)))
    // Spec paths are .lua files and folders; a script's arguments any file.
    #expect(lines[4] == ["deploy.lua", "spec"])
    #expect(lines[5] == ["deploy.lua", "spec", "notes.txt"])
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "zsh is not installed: its completion is not checked"))
  func zshReadsItsCompletion() async throws {
    let (folder, prefix) = try await Self.installedPrefix()
    _ = folder
    let outcome = try await ProgramRun.run("/usr/bin/zsh", ["-n", prefix.appendingPathComponent("share/zsh/site-functions/_lunar").path])
    #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome.stderr)")
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/fish"), "fish is not installed: its completion is not checked"))
  func fishReadsItsCompletion() async throws {
    let (folder, prefix) = try await Self.installedPrefix()
    _ = folder
    let file = prefix.appendingPathComponent("share/fish/vendor_completions.d/lunar.fish").path
    let syntax = try await ProgramRun.run("/usr/bin/fish", ["--no-execute", file])
    #expect(syntax.status == 0 && syntax.stderr.isEmpty, "\(syntax.stderr)")
    // And fish itself completes with it.
    let offered = try await ProgramRun.run("/usr/bin/fish", ["--no-config", "-c", "source $argv[1]; complete -C 'lunar graph --format '", file])
    let format = try #require(try await Self.flags(of: "graph").values["--format"])
    let values: [String] = offered.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
    let named: [String] = format.split(separator: "|").map(String.init)
    #expect(Set(values) == Set(named), "\(offered.stdout)")
  }

  @Test func completionsNeedOneKnownShell() async throws {
    let none = try await LunarProcess.run(["completions"])
    #expect(none.status == 2)
    #expect(none.stderr == "lunar: completions takes one shell: bash, zsh or fish\nTry 'lunar help completions'.\n")
    let unknown = try await LunarProcess.run(["completions", "tcsh"])
    #expect(unknown.status == 2)
    #expect(unknown.stderr == "lunar: no completions for shell 'tcsh' (bash, zsh, fish)\nTry 'lunar help completions'.\n")
  }

  @Test func everyShellsScriptNamesEveryCommandAndFlagOfTheTable() async throws {
    for shell in ["bash", "zsh", "fish"] {
      let script = try await LunarProcess.run(["completions", shell]).stdout
      for command in try await Self.commands() {
        #expect(script.contains(command), "\(shell): \(command)")
        for flag in try await Self.flags(of: command).names where flag.hasPrefix("--") {
          // fish names a long flag without its dashes (`-l jobs`).
          #expect(script.contains(shell == "fish" ? "-l \(flag.dropFirst(2))" : flag), "\(shell): \(command) \(flag)")
        }
      }
    }
  }
}
