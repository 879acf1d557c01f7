import Foundation
import LuaKit
import Testing

@testable import LunarTest

@Suite struct SpecRunnerTests {
  static let fixtures: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(2)
    return parts.joined(separator: "/") + "/LunarCLITests/Fixtures/specs"
  }()

  @Test func discoveryFollowsThePatternAndSorts() throws {
    var options = SpecOptions()
    options.paths = [Self.fixtures + "/insulation", Self.fixtures + "/syntax"]
    let files = try SpecRunner(options: options).discoverFiles()
    #expect(files.map { $0.split(separator: "/").suffix(2).joined(separator: "/") } == [
      "insulation/a_spec.lua", "insulation/b_spec.lua", "syntax/broken_spec.lua", "syntax/fine_spec.lua",
    ])
    options.excludePatterns = ["^broken"]
    #expect(try SpecRunner(options: options).discoverFiles().count == 3)
    options.pattern = "%f[%w]a_"
    options.excludePatterns = []
    #expect(try SpecRunner(options: options).discoverFiles().count == 1)
  }

  @Test func aMalformedPatternIsAnError() throws {
    var options = SpecOptions()
    options.paths = [Self.fixtures + "/tags"]
    options.pattern = "[unclosed"
    #expect(throws: LuaError.self) { try SpecRunner(options: options).discoverFiles() }
  }

  @Test func runningAFileGivesOneResultPerTest() async throws {
    let runner = SpecRunner(options: SpecOptions())
    let file = await runner.runFile(Self.fixtures + "/outcomes/outcomes_spec.lua")
    #expect(file.results.map(\.status) == [.success, .failure, .error, .pending, .pending, .success])
    #expect(file.results.map(\.name) == [
      "outcomes passes", "outcomes fails", "outcomes errors", "outcomes is pending at block level",
      "outcomes is pending inside the test", "outcomes nested passes too",
    ])
    #expect(file.results[2].message?.hasSuffix("outcomes_spec.lua:11: boom") == true)
    #expect(file.results[4].message == "not yet")
    #expect(SpecSummary([file]).description == "2 passed, 1 failed, 1 errors, 2 pending")
  }

  @Test func tagsAreInherited() async throws {
    var options = SpecOptions()
    options.tags = ["unit"]
    let file = await SpecRunner(options: options).runFile(Self.fixtures + "/tags/tags_spec.lua")
    #expect(file.results.map(\.name) == ["tagged #unit fast one #fast", "tagged #unit slow one #slow", "tagged #unit untagged"])
    #expect(file.results.first?.tags == ["unit", "fast"])
  }

  @Test func aMissingFileIsAFileError() async throws {
    let file = await SpecRunner(options: SpecOptions()).runFile("/nonexistent/x_spec.lua")
    #expect(file.results.count == 1)
    #expect(file.results.first?.status == .error)
    #expect(file.results.first?.message?.contains("cannot open /nonexistent/x_spec.lua") == true)
  }

  @Test func curriedCallsAndTestsWithoutAFunction() async throws {
    let runner = SpecRunner(options: SpecOptions())
    let curried = await runner.runFile(Self.fixtures + "/busted_api/curried_spec.lua")
    #expect(curried.results.map(\.name) == [
      "curried runs a curried test", "curried fails a curried test", "curried nested runs", "a context a spec",
      "a context a test",
    ])
    #expect(curried.results.map(\.status) == [.success, .failure, .success, .success, .error])
    let functionless = await runner.runFile(Self.fixtures + "/functionless/functionless_spec.lua")
    #expect(functionless.results.map(\.name) == ["a block runs its tests", "a block has no function yet", "a block runs after them"])
    #expect(functionless.results.map(\.status) == [.success, .pending, .success])
  }

  @Test func aDeadlockIsAnErrorOfThatTestAndTheNextTestsRun() async throws {
    let file = await SpecRunner(options: SpecOptions()).runFile(Self.fixtures + "/deadlock/deadlock_spec.lua")
    #expect(file.results.map(\.status) == [.error, .success, .error, .success])
    #expect(file.results.map(\.name).last == "a deadlock runs the last test too")
    let report = try #require(file.results.first?.message)
    #expect(report.hasPrefix("deadlock: every task is waiting and nothing can wake them\n"))
    #expect(report.contains("  a deadlock of tasks waiting on each other waits for task"))
    #expect(file.results.first?.position?.hasSuffix("deadlock_spec.lua:2") == true)
  }

  @Test func testsThatFinishedCountWhenTheFileFailsAfterThem() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("late_spec.lua").path
    // The task fails after every test has finished: an error of the file.
    try Data("""
      lunar.spawn(function() lunar.sleep(60) error("late failure") end)
      it("passes", function() end)
      """.utf8).write(to: URL(fileURLWithPath: path))
    let file = await SpecRunner(options: SpecOptions()).runFile(path)
    #expect(file.results.map(\.status) == [.success, .error])
    #expect(file.results.last?.message?.contains("late failure") == true)
  }

  @Test func aTaskThatFailsWithNobodyLookingFailsItsTest() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("unobserved_spec.lua").path
    try Data("""
      it("leaves a failing task", function() lunar.spawn(function() error("boom") end) lunar.sleep(0) end)
      it("passes", function() end)
      """.utf8).write(to: URL(fileURLWithPath: path))
    let file = await SpecRunner(options: SpecOptions()).runFile(path)
    #expect(file.results.map(\.status) == [.error, .success])
    #expect(file.results.first?.message?.hasPrefix("unobserved error in task") == true)
    #expect(file.results.first?.message?.contains("unobserved_spec.lua:1: boom") == true)
  }

  @Test func parallelRunsKeepFileOrder() async throws {
    var options = SpecOptions()
    options.paths = [Self.fixtures]
    options.jobs = 4
    let runner = SpecRunner(options: options)
    let files = try runner.discoverFiles()
    let results = await runner.run(files: files)
    #expect(results.map(\.path) == files)
  }

  @Test func reportersAgreeOnCounts() {
    let file = SpecFileResult(
      path: "x_spec.lua",
      results: [
        SpecResult(name: "a", status: .success), SpecResult(name: "b <&>", status: .failure, message: "bad \"quote\"", position: "x_spec.lua:3"),
        SpecResult(name: "c", status: .pending, message: "later"),
      ], duration: 0.5)
    let tap = TAPReporter().report([file], seconds: 1)
    #expect(tap == """
      TAP version 13
      1..3
      ok 1 - a
      not ok 2 - b <&>
        ---
        severity: fail
        at: "x_spec.lua:3"
        message: "bad \\"quote\\""
        ...
      ok 3 - c # SKIP later
      # 1 passed, 1 failed, 0 errors, 1 pending

      """)
    let junit = JUnitReporter().report([file], seconds: 1)
    #expect(junit.contains("<testcase classname='x_spec.lua:3' name='b &lt;&amp;&gt;' time='0.00'>"))
    #expect(junit.contains("<failure>x_spec.lua:3: bad &quot;quote&quot;</failure>"))
    #expect(junit.contains("<testcase classname='' name='c' time='0.00'>\n\t\t\t<skipped/>"))
    #expect(junit.hasPrefix("\n<testsuites tests='3' failures='1' errors='0' skip='1' time='1.00'>\n"))
    let plain = PlainReporter(colour: false).report([file], seconds: 1)
    #expect(plain.hasSuffix("1 passed, 1 failed, 0 errors, 1 pending\n"))
    #expect(plain.contains("Failure → x_spec.lua:3: b <&>\nbad \"quote\"\n"))
  }
}
