import Foundation
import Testing
import TestSupport

@Suite struct CommandLineTests {
  @Test func versionNamesLua() async throws {
    let outcome = try await LunarProcess.run(["version"])
    #expect(outcome.status == 0)
    #expect(outcome.stdout.hasPrefix("lunar "))
    #expect(outcome.stdout.contains("(Lua 5.4."))
  }

  @Test func helpListsEveryCommand() async throws {
    let outcome = try await LunarProcess.run(["help"])
    #expect(outcome.status == 0)
    for command in ["run", "check", "version", "help"] {
      #expect(outcome.stdout.contains("\n  \(command) "), "help lists \(command)")
    }
  }

  @Test(arguments: ["run", "check", "version", "help"])
  func everyCommandHasHelp(command: String) async throws {
    let outcome = try await LunarProcess.run([command, "--help"])
    #expect(outcome.status == 0)
    #expect(outcome.stdout.hasPrefix("usage: lunar \(command)"))
    #expect(outcome.stdout.contains("--help"))
  }

  @Test func anUnknownFlagIsAUsageError() async throws {
    let outcome = try await LunarProcess.run(["run", "--bogus", "x.lua"])
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: unknown option '--bogus' for 'lunar run'\nTry 'lunar help run'.\n")
  }

  @Test func anUnknownCommandIsAUsageError() async throws {
    let outcome = try await LunarProcess.run(["frobnicate"])
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: unknown command 'frobnicate'\nTry 'lunar help'.\n")
    let flag = try await LunarProcess.run(["--bogus"])
    #expect(flag.status == 2)
    let help = try await LunarProcess.run(["help", "nothing"])
    #expect(help.status == 2)
  }

  @Test func runWithoutAFileIsAUsageError() async throws {
    let outcome = try await LunarProcess.run(["run"])
    #expect(outcome.status == 2)
    #expect(outcome.stderr == "lunar: missing script file\nTry 'lunar help run'.\n")
  }

  @Test func flagsAfterTheScriptBelongToTheScript() async throws {
    let outcome = try await LunarProcess.run(["run", "-", "--help"], input: "print(...)")
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "--help\n")
  }

  @Test func checkReportsEverySyntaxError() async throws {
    let folder = try TemporaryFolder()
    try folder.write("good.lua", "return 1")
    try folder.write("bad1.lua", "x = = 1")
    try folder.write("bad2.lua", "\n\nfunction f(")
    let outcome = try await LunarProcess.run(["check", "good.lua", "bad1.lua", "bad2.lua"], in: folder.url)
    #expect(outcome.status == 1)
    let lines = outcome.stderr.split(separator: "\n").map(String.init)
    #expect(lines.contains("lunar: bad1.lua:1: unexpected symbol near '='"))
    #expect(lines.contains("lunar: bad2.lua:3: <name> or '...' expected near <eof>"))
    #expect(lines.last == "lunar: 2 of 3 files failed to compile")
    #expect(outcome.stdout == "")
  }

  @Test func checkDoesNotRunTheFile() async throws {
    let folder = try TemporaryFolder()
    try folder.write("effect.lua", "io.open('touched', 'w'):close() error('ran')")
    let outcome = try await LunarProcess.run(["check", "effect.lua"], in: folder.url)
    #expect(outcome.status == 0)
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("touched").path))
  }

  @Test func checkOfAMissingFileFails() async throws {
    let outcome = try await LunarProcess.run(["check", "/nonexistent.lua"])
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: cannot open /nonexistent.lua"))
  }

  @Test func noArgumentsWithPipedInputRunsIt() async throws {
    let outcome = try await LunarProcess.run([], input: "print('piped')")
    #expect(outcome.status == 0)
    #expect(outcome.stdout == "piped\n")
  }
}
