import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// `lunar test` on fixture suites whose outcomes are known (checked side by
/// side with Debian's busted 2.1.1).
@Suite struct TestCommandTests {
  static let fixtures = Repository.url("Tests/LunarCLITests/Fixtures/specs")
  /// Suites only a child process may run: they call os.exit or spin until
  /// interrupted, which the in-process runner tests must never do.
  static let cliOnlyFixtures = Repository.url("Tests/LunarCLITests/Fixtures/cli-only")
  static let busted = "/usr/bin/busted"

  func lunarTest(_ arguments: [String], in folder: String) async throws -> LunarProcess.Outcome {
    try await LunarProcess.run(["test", "--jobs", "2"] + arguments, in: Self.fixtures.appendingPathComponent(folder), timeout: 60)
  }

  func summary(_ outcome: LunarProcess.Outcome) -> String {
    String(outcome.stdout.split(separator: "\n").last ?? "")
  }

  @Test func countsEachOutcome() async throws {
    let outcome = try await lunarTest(["."], in: "outcomes")
    #expect(summary(outcome) == "2 passed, 1 failed, 1 errors, 2 pending")
    #expect(outcome.status == 1)
    #expect(outcome.stdout.contains("Failure → ./outcomes_spec.lua:7: outcomes fails\n"))
    #expect(outcome.stdout.contains("Expected objects to be the same."))
    #expect(outcome.stdout.contains("Error → ./outcomes_spec.lua:11: outcomes errors\n./outcomes_spec.lua:11: boom\n"))
    #expect(outcome.stdout.contains("Pending → ./outcomes_spec.lua:17: outcomes is pending inside the test\nnot yet\n"))
  }

  @Test func aSpecWithNamesThatAreNotTextRunsBesideAnother() async throws {
    let folder = try TemporaryFolder()
    try folder.write("names_spec.lua", #"""
      local machine = require 'lunar.machine'
      describe('names', function()
        it('are bytes', function()
          local m = machine.new { name = 'bytes', initial = 'b\0c', states = {
            ['b\0c'] = { on = { next = '\xfe' } }, ['\xfe'] = {}, ['\xC3\xA9'] = {}, ['e\xCC\x81'] = {},
          } }
          m:send('next')
          m:settle()
          assert.are.equal('\xfe', m.state)
        end)
      end)
      """#)
    try folder.write("other_spec.lua", "describe('other', function() it('runs', function() assert.is_true(true) end) end)\n")
    let outcome = try await LunarProcess.run(["test", "--jobs", "2", "--output", "junit", "."], in: folder.url, timeout: 60)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("<testcase classname='./names_spec.lua:3' name='names are bytes'"), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("<testcase classname='./other_spec.lua:1' name='other runs'"))
  }

  @Test func resultsThatAreNotTextKeepTheirBytesInEveryReport() async throws {
    let folder = try TemporaryFolder()
    try folder.write("bytes_spec.lua", #"""
      describe("bytes", function()
        it("passes", function() end)
        it("compares \255", function() assert.are.equal("a\255", "b\254") end)
        it("errors", function() error("bad \253 byte") end)
      end)
      """#)
    let plain = try await LunarProcess.run(["test", "."], in: folder.url)
    #expect(plain.stdout.hasSuffix("1 passed, 1 failed, 1 errors, 0 pending\n"), "\(plain.stdout)")
    #expect(plain.stdout.contains("Failure → ./bytes_spec.lua:3: bytes compares \\255\n"))
    #expect(plain.stdout.contains("(string) 'b\\254'"))
    #expect(plain.stdout.contains("./bytes_spec.lua:4: bad \\253 byte\n"))
    let json = try await LunarProcess.run(["test", "-o", "json", "."], in: folder.url)
    let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let failures = try #require(report["failures"] as? [[String: Any]])
    #expect(failures.first?["name"] as? String == "bytes compares \\255")
    let errors = try #require(report["errors"] as? [[String: Any]])
    #expect(errors.first?["message"] as? String == "./bytes_spec.lua:4: bad \\253 byte")
    let junit = try await LunarProcess.run(["test", "-o", "junit", "."], in: folder.url)
    let document = try XMLDocument(data: Data(junit.stdout.utf8))
    let names = try document.nodes(forXPath: "//testcase/@name").compactMap(\.stringValue)
    #expect(names == ["bytes passes", "bytes compares \\255", "bytes errors"])
  }

  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
  func aTraceThatCannotBeWrittenIsOneErrorAfterTheReport() async throws {
    let folder = try TemporaryFolder()
    try folder.write("ok_spec.lua", "it('passes', function() end)\n")
    let outcome = try await LunarProcess.run(["test", "--trace-file", "/dev/full", "--trace-format", "chrome", "."], in: folder.url)
    #expect(outcome.status == 1)
    #expect(outcome.stdout.hasSuffix("1 passed, 0 failed, 0 errors, 0 pending\n"), "\(outcome.stdout)")
    #expect(outcome.stderr == "lunar: --trace-file cannot write /dev/full: No space left on device\n")
  }

  @Test func hooksRunInBustedsOrder() async throws {
    let outcome = try await lunarTest(["hooks_spec.lua"], in: "hooks")
    #expect(outcome.status == 0)
    #expect(outcome.stdout.hasPrefix(
      "setup outer,before outer,it first,after outer,lazy inner,before outer,before inner,it second,finally second,after inner,after outer,teardown outer\n"))
    #expect(summary(outcome) == "2 passed, 0 failed, 0 errors, 0 pending")
  }

  @Test func aFailingAfterEachIsAnError() async throws {
    let outcome = try await lunarTest(["failing_after_each_spec.lua"], in: "hooks")
    #expect(summary(outcome) == "1 passed, 0 failed, 1 errors, 0 pending")
    #expect(outcome.stdout.contains("after_each failing after_each"))
    #expect(outcome.status == 1)
  }

  @Test func filesAreInsulatedAndBlocksHaveTheirOwnGlobals() async throws {
    let outcome = try await lunarTest(["."], in: "insulation")
    #expect(summary(outcome) == "5 passed, 1 failed, 0 errors, 0 pending")
  }

  @Test func aSyntaxErrorIsAnErrorOfThatFile() async throws {
    let outcome = try await lunarTest(["."], in: "syntax")
    #expect(summary(outcome) == "1 passed, 0 failed, 1 errors, 0 pending")
    #expect(outcome.stdout.contains("./broken_spec.lua:3: unexpected symbol near '='"))
    #expect(outcome.status == 1)
  }

  @Test func tagsSelectTests() async throws {
    #expect(summary(try await lunarTest(["--tags", "fast", "."], in: "tags")) == "2 passed, 0 failed, 0 errors, 0 pending")
    #expect(summary(try await lunarTest(["--exclude-tags", "fast,slow", "."], in: "tags")) == "1 passed, 0 failed, 0 errors, 0 pending")
    #expect(summary(try await lunarTest(["-t", "unit", "."], in: "tags")) == "3 passed, 0 failed, 0 errors, 0 pending")
  }

  @Test func filtersSelectByFullName() async throws {
    #expect(summary(try await lunarTest(["--filter", "slow", "."], in: "tags")) == "1 passed, 0 failed, 0 errors, 0 pending")
    #expect(summary(try await lunarTest(["--filter-out", "^tagged", "."], in: "tags")) == "1 passed, 0 failed, 0 errors, 0 pending")
  }

  @Test func listNamesTestsWithoutRunning() async throws {
    let outcome = try await lunarTest(["--list", "."], in: "outcomes")
    #expect(outcome.status == 0)
    #expect(outcome.stdout.contains("./outcomes_spec.lua:6: outcomes fails\n"))
    #expect(!outcome.stdout.contains("boom"))
  }

  @Test func spiesAndStubs() async throws {
    let outcome = try await lunarTest(["."], in: "doubles")
    #expect(summary(outcome) == "2 passed, 1 failed, 0 errors, 0 pending")
    #expect(outcome.stdout.contains("Failure → ./doubles_spec.lua:23: spies and stubs fails a spy assertion"))
  }

  @Test func asyncSpecsUseTheVirtualClock() async throws {
    let outcome = try await lunarTest(["."], in: "async")
    #expect(summary(outcome) == "3 passed, 0 failed, 0 errors, 0 pending", "\(outcome.stdout)")
    #expect(outcome.status == 0)
  }

  @Test func tapOutputIsTAP13() async throws {
    let outcome = try await lunarTest(["-o", "tap", "."], in: "outcomes")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "TAP version 13")
    #expect(lines[1] == "1..6")
    let tests = lines.filter { $0.hasPrefix("ok ") || $0.hasPrefix("not ok ") }
    #expect(tests.count == 6)
    for (index, line) in tests.enumerated() {
      #expect(line.hasPrefix("ok \(index + 1) - ") || line.hasPrefix("not ok \(index + 1) - "))
    }
    #expect(tests.filter { $0.contains("# SKIP") }.count == 2)
    #expect(lines.contains("  severity: fail"))
    #expect(lines.last == "# 2 passed, 1 failed, 1 errors, 2 pending")
    // Every line is a TAP line: a test line, YAML inside ---/..., a comment, or the header.
    var inYAML = false
    for line in lines.dropFirst(2) {
      if line == "  ---" { inYAML = true; continue }
      if line == "  ..." { inYAML = false; continue }
      #expect(inYAML ? line.hasPrefix("  ") : (line.hasPrefix("ok ") || line.hasPrefix("not ok ") || line.hasPrefix("#")), "\(line)")
    }
  }

  @Test func junitXMLParsesAndCounts() async throws {
    let folder = try TemporaryFolder()
    let report = folder.url.appendingPathComponent("report.xml").path
    let outcome = try await lunarTest(["-o", "junit", "--output-file", report, "."], in: "outcomes")
    #expect(outcome.status == 1)
    let document = try XMLDocument(contentsOf: URL(fileURLWithPath: report))
    let root = try #require(document.rootElement())
    #expect(root.name == "testsuites")
    #expect(root.attribute(forName: "failures")?.stringValue == "1")
    #expect(root.attribute(forName: "errors")?.stringValue == "1")
    #expect(root.attribute(forName: "skip")?.stringValue == "2")
    #expect(try root.nodes(forXPath: "//testcase").count == 6)
    #expect(try root.nodes(forXPath: "//testcase/failure").count == 1)
  }

  @Test func jsonOutputParses() async throws {
    let outcome = try await lunarTest(["--output=json", "."], in: "outcomes")
    let object = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
    #expect((object?["successes"] as? [Any])?.count == 2)
    #expect((object?["failures"] as? [Any])?.count == 1)
    #expect((object?["errors"] as? [Any])?.count == 1)
    #expect((object?["pendings"] as? [Any])?.count == 2)
    #expect(object?["duration"] is Double)
  }

  @Test func shuffleWithASeedRepeats() async throws {
    let first = try await lunarTest(["--shuffle", "--seed", "7", "--list", "."], in: "tags")
    let second = try await lunarTest(["--shuffle", "--seed", "7", "--list", "."], in: "tags")
    #expect(first.stdout == second.stdout)
    #expect(first.stdout.hasPrefix("shuffled with --seed 7\n"))
  }

  @Test func bustedConfigSetsRootAndPattern() async throws {
    let folder = try TemporaryFolder()
    try folder.write(".busted", "return { default = { ROOT = {'checks'}, pattern = '_check', lpath = 'src/?.lua' } }")
    try folder.write("src/mathx.lua", "return { add = function(a, b) return a + b end }")
    try folder.write("checks/add_check.lua", "it('adds', function() assert.are.equal(3, require('mathx').add(1, 2)) end)")
    try folder.write("checks/ignored_spec.lua", "it('is not a _check file', function() error('ran') end)")
    let outcome = try await LunarProcess.run(["test"], in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stdout)")
    #expect(outcome.stdout.hasSuffix("1 passed, 0 failed, 0 errors, 0 pending\n"))
  }

  @Test func requireBustedGivesTheSameFunctions() async throws {
    let folder = try TemporaryFolder()
    try folder.write("spec/req_spec.lua", """
      local busted = require 'busted'
      busted.describe('via require', function()
        busted.it('works', function() assert.are.equal(busted.it, it) end)
      end)
      """)
    let outcome = try await LunarProcess.run(["test"], in: folder.url)
    #expect(outcome.stdout.hasSuffix("1 passed, 0 failed, 0 errors, 0 pending\n"))
  }

  @Test func requireBustedGivesBustedsAPI() async throws {
    let outcome = try await lunarTest(["require_spec.lua"], in: "busted_api")
    #expect(summary(outcome) == "5 passed, 1 failed, 0 errors, 1 pending", "\(outcome.stdout)")
    #expect(outcome.stdout.contains("Failure → require_spec.lua:54: the busted module fails through busted.fail\ntold to fail\n"))
  }

  @Test func curriedCallsDeclareBlocksTestsAndHooks() async throws {
    let outcome = try await lunarTest(["curried_spec.lua"], in: "busted_api")
    #expect(summary(outcome) == "3 passed, 1 failed, 1 errors, 0 pending", "\(outcome.stdout)")
    #expect(outcome.stdout.contains("Failure → curried_spec.lua:11: curried fails a curried test\n"))
    #expect(outcome.stdout.contains("Error → curried_spec.lua:21: a context a test\ncurried_spec.lua:21: boom\n"))
  }

  /// The same suite under Debian's busted 2.1.1 and `lunar test`: every
  /// test has the same full name and the same outcome (JUnit from both).
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: busted)))
  func bustedAPISuiteMatchesDebiansBusted() async throws {
    let folder = Self.fixtures.appendingPathComponent("busted_api")
    let reference = Process()
    reference.executableURL = URL(fileURLWithPath: Self.busted)
    reference.arguments = ["--output", "junit", "."]
    reference.currentDirectoryURL = folder
    let output = try TemporaryFile()
    reference.standardOutput = output.handle
    try reference.run()
    await ChildProcess.wait(for: reference, timeout: 60)
    let bustedXML = try Data(contentsOf: output.url)
    let report = try TemporaryFolder()
    let path = report.url.appendingPathComponent("lunar.xml").path
    _ = try await lunarTest(["-o", "junit", "--output-file", path, "."], in: "busted_api")
    let expected = try outcomes(inJUnit: bustedXML)
    #expect(expected.count == 12)
    #expect(try outcomes(inJUnit: Data(contentsOf: URL(fileURLWithPath: path))) == expected)
  }

  /// `name: outcome` for every test case of a JUnit report, sorted.
  func outcomes(inJUnit data: Data) throws -> [String] {
    let document = try XMLDocument(data: data)
    return try document.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }.map { test in
      let outcome = ["failure", "error", "skipped"].first { !test.elements(forName: $0).isEmpty } ?? "success"
      return "\(test.attribute(forName: "name")?.stringValue ?? "?"): \(outcome)"
    }.sorted()
  }

  @Test func aTestWithoutAFunctionIsPending() async throws {
    let outcome = try await lunarTest(["."], in: "functionless")
    #expect(summary(outcome) == "2 passed, 0 failed, 0 errors, 1 pending", "\(outcome.stdout)")
    #expect(outcome.stdout.contains("Pending → ./functionless_spec.lua:5: a block has no function yet\n"))
    #expect(outcome.status == 0)
  }

  @Test func osExitIsAnErrorOfTheTestThatCalledIt() async throws {
    let outcome = try await LunarProcess.run(
      ["test", "--jobs", "2", "."], in: Self.cliOnlyFixtures.appendingPathComponent("exit"), timeout: 60)
    #expect(summary(outcome) == "2 passed, 1 failed, 3 errors, 0 pending", "\(outcome.stdout)")
    #expect(outcome.status == 1)
    #expect(outcome.stdout.contains("Failure → ./a_failing_spec.lua:3: fails\n"))
    #expect(outcome.stdout.contains("Error → ./exit_spec.lua:5: os.exit exits with success\n./exit_spec.lua:5: os.exit(0) called in a test\n"))
    #expect(outcome.stdout.contains("Error → ./exit_spec.lua:9: os.exit exits with a status\n./exit_spec.lua:9: os.exit(3) called in a test\n"))
    #expect(outcome.stdout.contains("Error → ./exit_spec.lua:14: os.exit exits even when the exit is caught\nos.exit(true) called in a test\n"))
  }

  @Test func aDeadlockIsAnErrorOfThatTestAndTheFileGoesOn() async throws {
    let outcome = try await lunarTest(["."], in: "deadlock")
    #expect(summary(outcome) == "2 passed, 0 failed, 2 errors, 0 pending", "\(outcome.stdout)")
    #expect(outcome.status == 1)
    #expect(outcome.stdout.contains("""
      Error → ./deadlock_spec.lua:2: a deadlock of tasks waiting on each other
      deadlock: every task is waiting and nothing can wake them
        a deadlock of tasks waiting on each other waits for task 5 at ./deadlock_spec.lua:9

      """))
    #expect(outcome.stdout.contains("  stuck#1 waits for stuck#2 at ./deadlock_spec.lua:23\n"))
  }

  @Test func ctrlCReportsTheTestsThatFinishedAndExits130() async throws {
    let running = try LunarProcess.start(
      ["test", "--jobs", "1", "."], in: Self.cliOnlyFixtures.appendingPathComponent("interrupt"))
    try await running.waitForOutput("running the long test\n")
    running.send(SIGINT)
    let outcome = try await running.wait(timeout: 60)
    #expect(outcome.exitedNormally)
    #expect(outcome.status == 130)
    // a_spec's two tests and b_spec's first; c_spec never started.
    #expect(summary(outcome) == "2 passed, 1 failed, 0 errors, 0 pending", "\(outcome.stdout)")
    #expect(outcome.stdout.contains("Failure → ./a_spec.lua:4: fails\n"))
    #expect(outcome.stderr == "lunar: interrupted\n")
  }

  @Test(arguments: [
    ("--filter", "[", "malformed pattern (missing ']')"),
    ("--filter-out", "(", "unfinished capture"),
    ("--pattern", "%", "malformed pattern (ends with '%')"),
    ("--exclude-pattern", "%f", "missing '[' after '%f' in pattern"),
    // Lua finds it only where a match reaches it: no name starts with 'zz'.
    ("--filter", "zz[", "malformed pattern (missing ']')"),
  ])
  func aMalformedPatternIsOneUsageErrorBeforeAnyFileRuns(flag: String, pattern: String, problem: String) async throws {
    let outcome = try await lunarTest([flag, pattern, "."], in: "outcomes")
    #expect(outcome.status == 2)
    #expect(outcome.stdout == "")
    #expect(outcome.stderr == "lunar: \(flag): bad Lua pattern '\(pattern)': \(problem)\nTry 'lunar help test'.\n")
  }

  @Test func aMalformedPatternInBustedIsNamedByItsSetting() async throws {
    let folder = try TemporaryFolder()
    try folder.write(".busted", "return { default = { filter = '[x' } }\n")
    try folder.write("a_spec.lua", "it('runs', function() end)\n")
    let outcome = try await LunarProcess.run(["test", "."], in: folder.url)
    #expect(outcome.status == 2)
    #expect(outcome.stderr.hasPrefix("lunar: .busted 'filter': bad Lua pattern '[x': malformed pattern (missing ']')\n"))
  }

  @Test(arguments: [
    (["-o", "xml"], "lunar: unknown output format 'xml' (plain, tap, junit, json)"),
    (["--jobs", "0"], "lunar: --jobs needs a positive number, got '0'"),
    (["--seed", "abc"], "lunar: --seed needs a whole number, got 'abc'"),
    (["/nonexistent/specs"], "lunar: no such file or folder: /nonexistent/specs"),
  ])
  func usageErrors(arguments: [String], message: String) async throws {
    let outcome = try await LunarProcess.run(["test"] + arguments)
    #expect(outcome.status == 2)
    #expect(outcome.stderr == message + "\nTry 'lunar help test'.\n")
  }
}
