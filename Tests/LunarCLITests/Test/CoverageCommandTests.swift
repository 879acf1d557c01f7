import Foundation
import Testing
import TestSupport

/// `lunar test --coverage`: the lcov file of the project's Lua files the
/// specs load, read back by Debian's lcov and genhtml and checked against
/// what luac5.4 lists as each function's lines.
@Suite struct CoverageCommandTests {
  /// One `lcov.info` record: the file's lines and their hits.
  struct Record {
    var hits: [Int: Int] = [:]
    var found = 0
    var hit = 0
  }

  /// Reads an lcov tracefile, by `SF:` path.
  static func records(_ text: String) -> [String: Record] {
    var records: [String: Record] = [:]
    var path = ""
    for line in text.split(separator: "\n") {
      let field = line.prefix { $0 != ":" }
      let value = line.dropFirst(field.count + 1)
      switch field {
      case "SF": path = String(value)
      case "DA":
        let parts = value.split(separator: ",")
        records[path, default: Record()].hits[Int(parts[0])!] = Int(parts[1])!
      case "LF": records[path, default: Record()].found = Int(value)!
      case "LH": records[path, default: Record()].hit = Int(value)!
      default: break
      }
    }
    return records
  }

  /// The project's real path (the temporary folder may be behind a link).
  static func realPath(_ folder: TemporaryFolder) -> String {
    folder.url.resolvingSymlinksInPath().path
  }

  /// The line of `source` that contains `text` (1-based).
  static func line(of text: String, in source: String) -> Int {
    source.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(text) }! + 1
  }

  /// What a tool (lcov, genhtml, luac) printed, and how it ended.
  struct ToolOutcome {
    var status: Int32
    var output: String
  }

  /// Runs `tool` in `folder`, waiting without holding a pool thread.
  static func run(_ tool: String, _ arguments: [String], in folder: URL) async throws -> ToolOutcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    process.currentDirectoryURL = folder
    let output = try TemporaryFile()
    process.standardOutput = output.handle
    process.standardError = output.handle
    try process.run()
    #expect(await ChildProcess.wait(for: process))
    return ToolOutcome(status: process.terminationStatus, output: try output.contents())
  }

  static let calc = """
    -- a calculator
    local M = {}

    function M.add(a, b)
      return a + b
    end

    function M.unused(x)
      local doubled = x * 2
      return doubled
    end

    function M.sum(n)
      local total = 0
      for i = 1, n do
        total = total + i
      end
      return total
    end

    return M
    """

  static let pair = """
    return function()
      local next = coroutine.wrap(function()
        coroutine.yield(1)
        coroutine.yield(2)
      end)
      return next() + next()
    end
    """

  /// A project whose specs reach src/ through require, dofile and loadfile,
  /// from tests, spawned tasks and wrapped coroutines, in two spec files.
  static func project() throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.write("src/calc.lua", calc)
    try folder.write("src/pair.lua", pair)
    try folder.write("src/loaded.lua", "local n = ...\nreturn n * 10\n")
    try folder.write("src/never.lua", "return 'never required'\n")
    try folder.write("spec/helper.lua", "package.path = './src/?.lua;' .. package.path\n")
    try folder.write("spec/calc_spec.lua", """
      dofile('spec/helper.lua')
      local calc = require 'calc'
      local lunar = require 'lunar'
      describe('calc', function()
        it('adds', function() assert.are.equal(3, calc.add(1, 2)) end)
        it('sums in a task', function()
          local task = lunar.spawn(function() return calc.sum(3) end)
          assert.are.equal(6, task:await())
        end)
      end)
      """)
    try folder.write("spec/pair_spec.lua", """
      dofile('spec/helper.lua')
      describe('pair', function()
        it('adds what a wrapped coroutine yields', function() assert.are.equal(3, dofile('src/pair.lua')()) end)
        it('loads a chunk', function() assert.are.equal(70, loadfile('src/loaded.lua')(7)) end)
        it('sums again', function() assert.are.equal(10, require('calc').sum(4)) end)
      end)
      """)
    return folder
  }

  @Test func countsTheLinesRunInRequiredFilesTasksAndCoroutines() async throws {
    let folder = try Self.project()
    let outcome = try await LunarProcess.run(["test", "--jobs", "2", "--coverage", "spec"], in: folder.url, timeout: 60)
    #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
    let text = try String(contentsOf: folder.url.appendingPathComponent("coverage/lcov.info"), encoding: .utf8)
    #expect(text.hasPrefix("TN:lunar\n"))
    let records = Self.records(text)
    let root = Self.realPath(folder)
    // Only the files loaded, and none of the specs or their helper.
    #expect(Set(records.keys) == ["\(root)/src/calc.lua", "\(root)/src/pair.lua", "\(root)/src/loaded.lua"])
    let calc = try #require(records["\(root)/src/calc.lua"])
    // calc.sum ran for 3 in a task (one file) and for 4 (the other file):
    // the loop's body 7 times; its header once more per call.
    #expect(calc.hits[Self.line(of: "total = total + i", in: Self.calc)] == 7)
    #expect(calc.hits[Self.line(of: "for i = 1, n do", in: Self.calc)] == 9)
    #expect(calc.hits[Self.line(of: "return a + b", in: Self.calc)] == 1)
    #expect(calc.hits[Self.line(of: "local doubled", in: Self.calc)] == 0)
    #expect(calc.hits[Self.line(of: "-- a calculator", in: Self.calc)] == nil)
    #expect(calc.hits[Self.line(of: "return M", in: Self.calc)] == 2)
    let pair = try #require(records["\(root)/src/pair.lua"])
    // Lines inside the wrapped coroutine ran.
    #expect(pair.hits[Self.line(of: "coroutine.yield(1)", in: Self.pair)] == 1)
    #expect(pair.hits[Self.line(of: "coroutine.yield(2)", in: Self.pair)] == 1)
    #expect(pair.hit == pair.found)
    #expect(calc.found == calc.hits.count && calc.hit == calc.hits.values.count { $0 > 0 })
    let found = records.values.reduce(0) { $0 + $1.found }
    let hit = records.values.reduce(0) { $0 + $1.hit }
    let percent = String(format: "%.1f", Double(hit) * 100 / Double(found))
    #expect(outcome.stdout.hasSuffix("coverage: \(percent)% of \(found) lines in 3 files (coverage/lcov.info)\n"), "\(outcome.stdout)")
  }

  @Test func lcovAndGenhtmlReadTheFileAndCountTheSameTotals() async throws {
    let folder = try Self.project()
    let outcome = try await LunarProcess.run(["test", "--coverage", "spec"], in: folder.url, timeout: 60)
    #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
    let lunarLine = try #require(outcome.stdout.split(separator: "\n").last { $0.hasPrefix("coverage: ") })
    // coverage: P% of N lines in 3 files (coverage/lcov.info)
    let words = lunarLine.split(separator: " ")
    let (percent, lines) = (String(words[1]), Int(words[3])!)
    let records = Self.records(try String(contentsOf: folder.url.appendingPathComponent("coverage/lcov.info"), encoding: .utf8))
    let hit = records.values.reduce(0) { $0 + $1.hit }
    let expected = "lines......: \(percent) (\(hit) of \(lines) lines)"

    let summary = try await Self.run("/usr/bin/lcov", ["--summary", "coverage/lcov.info"], in: folder.url)
    #expect(summary.status == 0, "\(summary.output)")
    #expect(summary.output.contains(expected), "\(summary.output)")

    let html = try TemporaryFolder()
    let genhtml = try await Self.run("/usr/bin/genhtml", ["-o", html.url.path, "coverage/lcov.info"], in: folder.url)
    #expect(genhtml.status == 0, "\(genhtml.output)")
    #expect(genhtml.output.contains(expected), "\(genhtml.output)")
    let page = try String(contentsOf: html.url.appendingPathComponent("src/calc.lua.gcov.html"), encoding: .utf8)
    #expect(page.contains("M.unused"))
  }

  /// A file with what makes Lua's line information hard: nested, vararg
  /// and never-called functions, a function of more than 128 instructions
  /// (absolute line entries) and a jump of hundreds of lines in one.
  static func tangled() -> String {
    var source = """
      local M = {}
      local function outer(a, ...)
        local function middle(b)
          return function(c)
            return a + b
              + c
          end
        end
        return middle(select('#', ...))
      end
      M.outer = outer
      function M.long(x)

      """
    for i in 1...200 { source += "  x = x + \(i)\n" }
    source += "  local y = x\n"
    for _ in 1...300 { source += "  -- far away\n" }
    source += """
        return y +
          1
      end
      M.never = function(...)
        local t = {...}
        return #t
      end
      M.method = {}
      function M.method:go() return self end
      return M

      """
    return source
  }

  @Test func executableLinesAreTheLinesLuacListsForEveryFunction() async throws {
    let folder = try TemporaryFolder()
    let source = Self.tangled()
    try folder.write("tangled.lua", source)
    try folder.write("tangled_spec.lua", """
      local m = dofile('tangled.lua')
      it('runs some', function() assert.are.equal(6, m.outer(1, 'x', 'y')(3)) ; m.long(0) end)
      """)
    let outcome = try await LunarProcess.run(["test", "--coverage", "tangled_spec.lua"], in: folder.url, timeout: 60)
    #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
    let lcov = try String(contentsOf: folder.url.appendingPathComponent("coverage/lcov.info"), encoding: .utf8)
    let records = Self.records(lcov)
    // Missing once in CI, not reproduced: what the file held, to tell why.
    let record = try #require(records["\(Self.realPath(folder))/tangled.lua"], "files: \(records.keys.sorted()); \(outcome.stdout)\(outcome.stderr)")

    // luac5.4 -l -l lists every function and each instruction's line; a
    // vararg function's first instruction (VARARGPREP) is never reported
    // by a line hook, nor listed in its active lines.
    let listing = try await Self.run("/usr/bin/luac5.4", ["-l", "-l", "-p", "tangled.lua"], in: folder.url)
    #expect(listing.status == 0, "\(listing.output)")
    var expected: Set<Int> = []
    var vararg = false
    for line in listing.output.split(separator: "\n") {
      if line.contains(" params, ") { vararg = line.contains("+ params") }
      let fields = line.split(separator: "\t")
      guard fields.count >= 3, let pc = Int(fields[0]), fields[1].hasPrefix("["), let number = Int(fields[1].dropFirst().dropLast()) else {
        continue
      }
      if pc == 1 && vararg && fields[2].hasPrefix("VARARGPREP") { continue }
      expected.insert(number)
    }
    #expect(expected.count > 200)
    #expect(Set(record.hits.keys) == expected)
    #expect(record.hits[Self.line(of: "local t = {...}", in: source)] == 0)
    #expect(record.hits[Self.line(of: "+ c", in: source)] == 1)
    #expect((record.hits[Self.line(of: "local y = x", in: source)] ?? 0) == 1)
  }

  @Test func aMachineReadReportOnStandardOutputStaysWholeAndTheTotalGoesToStandardError() async throws {
    let folder = try Self.project()
    let outcome = try await LunarProcess.run(["test", "--coverage", "-o", "json", "spec"], in: folder.url, timeout: 60)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) is [String: Any])
    #expect(outcome.stderr.hasPrefix("coverage: ") && outcome.stderr.hasSuffix(" lines in 3 files (coverage/lcov.info)\n"))
  }

  @Test func coverageFileChoosesThePathAndAnEarlierReportIsReplacedWhole() async throws {
    let folder = try Self.project()
    let old = try folder.write("out/old.info", "TN:lunar\nSF:/gone.lua\nDA:1,1\nLF:1\nLH:1\nend_of_record\n")
    let report = folder.url.appendingPathComponent("out/report.info").path
    try FileManager.default.linkItem(atPath: old, toPath: report)
    let outcome = try await LunarProcess.run(["test", "--coverage-file", "out/report.info", "spec"], in: folder.url, timeout: 60)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.hasSuffix(" lines in 3 files (out/report.info)\n"), "\(outcome.stdout)")
    let written = try String(contentsOfFile: report, encoding: .utf8)
    #expect(written.contains("/src/calc.lua\n") && !written.contains("/gone.lua"))
    // Replaced by a new file, not rewritten in place: the old one's other
    // name still holds it.
    #expect(try String(contentsOfFile: old, encoding: .utf8).contains("/gone.lua"))
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("coverage").path))
  }

  @Test func aFileThatIsNotLunarsLcovIsNeverOverwritten() async throws {
    let folder = try Self.project()
    let notes = try folder.write("coverage/lcov.info", "my own notes\n")
    let outcome = try await LunarProcess.run(["test", "--coverage", "spec"], in: folder.url, timeout: 60)
    #expect(outcome.status == 2)
    #expect(outcome.stdout == "")
    #expect(outcome.stderr == """
      lunar: --coverage: cannot open coverage/lcov.info: it exists and is not an lcov file Lunar wrote; \
      Lunar never overwrites it (remove it or choose another file)

      """)
    #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my own notes\n")
  }

  @Test(arguments: [
    (["--coverage"], "lunar: --coverage: cannot write coverage/lcov.info: coverage is not a folder\n"),
    (["--coverage-file", "/proc/self/no-such-folder/lcov.info"],
     "lunar: --coverage: cannot write /proc/self/no-such-folder/lcov.info: No such file or directory\n"),
  ])
  func aFolderThatCannotBeWrittenIsRefusedBeforeTheRun(arguments: [String], message: String) async throws {
    let folder = try Self.project()
    try folder.write("coverage", "a file where the folder would go\n")
    try folder.write("spec/marker_spec.lua", "io.open('ran', 'w'):close()\n")
    let outcome = try await LunarProcess.run(["test"] + arguments + ["spec"], in: folder.url, timeout: 60)
    #expect(outcome.status == 2)
    #expect(outcome.stderr == message)
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("ran").path))
  }

  @Test func aStepTimeoutStillStopsAComputingStepUnderCoverage() async throws {
    let folder = try TemporaryFolder()
    try folder.write("spin.lua", """
      return function()
        while true do pcall(function() while true do end end) end
      end
      """)
    try folder.write("timeout_spec.lua", """
      local workflow = require 'lunar.workflow'
      local trace = require 'lunar.trace'
      local step = workflow.step
      it('stops the step', function()
        local spin = dofile('spin.lua')
        local outcome = workflow.execute(workflow 'w' { step 'spin' { timeout = 0.2, run = spin } }, { quiet = true })
        assert.are.equal('failed', outcome.results.spin.status)
        assert.are.equal('step "spin": timed out after 0.2s', trace.events('workflow.step.failed')[1].error)
      end)
      """)
    let outcome = try await LunarProcess.run(["test", "--coverage", "timeout_spec.lua"], in: folder.url, timeout: 60)
    #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
    let records = Self.records(try String(contentsOf: folder.url.appendingPathComponent("coverage/lcov.info"), encoding: .utf8))
    let spin = try #require(records["\(Self.realPath(folder))/spin.lua"])
    #expect((spin.hits[2] ?? 0) > 0)
  }

  @Test func ctrlCStillStopsASpinningTestUnderCoverage() async throws {
    let folder = try TemporaryFolder()
    try folder.write("spin.lua", """
      return function()
        io.stdout:write('spinning\\n')
        io.stdout:flush()
        while true do end
      end
      """)
    try folder.write("a_spec.lua", "it('spins', function() dofile('spin.lua')() end)\n")
    let running = try LunarProcess.start(["test", "--coverage", "a_spec.lua"], in: folder.url)
    try await running.waitForOutput("spinning\n")
    running.send(SIGINT)
    let outcome = try await running.wait(timeout: 60)
    #expect(outcome.exitedNormally)
    #expect(outcome.status == 130)
    #expect(outcome.stderr == "lunar: interrupted\n")
    // What ran until then is written.
    let records = Self.records(try String(contentsOf: folder.url.appendingPathComponent("coverage/lcov.info"), encoding: .utf8))
    let spin = try #require(records["\(Self.realPath(folder))/spin.lua"])
    #expect((spin.hits[4] ?? 0) > 0)
  }
}
