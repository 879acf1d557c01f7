import Foundation
import Lunar
import Synchronization
import Testing

@testable import LunarTest

/// Files that run in a runtime an earlier file ran in (restored between
/// them) see nothing of it, exactly as in a new runtime.
@Suite struct SpecRuntimeReuseTests {
  /// Each file first checks that nothing of an earlier file is left, then
  /// leaves as much behind as a spec can: globals, a module in
  /// package.loaded, changed standard libraries and metatables, a broken
  /// `assert` and `describe`, luassert's parameters and a registered
  /// assertion, a finalizer, a stopped collector, trace events and tasks.
  static let leakingFile = """
    local trace = require "lunar.trace"
    local events_before = #trace.events()
    local first_task_id = lunar.spawn(function() end).id
    local first_sequence = trace.events()[1].sequence

    describe("a file after others", function()
      it("sees nothing any earlier file left", function()
        assert.is_nil(LEAKED)
        assert.is_nil(FINALIZED)
        assert.is_nil(string.leaked)
        assert.are.equal("function", type(table.insert))
        assert.is_nil(getmetatable(0))
        assert.is_nil(getmetatable("").__leaked)
        assert.is_nil(package.loaded.leaky)
        assert.is_nil(require("fresh").mark)
        assert.are.equal(3, assert:get_parameter("TableFormatLevel"))
        assert.has_error(function() assert.leaky() end)
        assert.is_true(collectgarbage("isrunning"))
        assert.are.equal(0, events_before)
        assert.are.equal(2, first_task_id)
        assert.are.equal(1, first_sequence)
      end)

      it("leaves everything it can behind", function()
        LEAKED = true
        package.loaded.leaky = {}
        require("fresh").mark = "set"
        string.leaked = true
        table.insert = nil
        debug.setmetatable(0, { __index = {} })
        getmetatable("").__leaked = true
        assert:set_parameter("TableFormatLevel", 1)
        assert:register("assertion", "leaky", function() return true end, "leaky", "leaky")
        setmetatable({}, { __gc = function() _G.FINALIZED = true end })
        collectgarbage("stop")
        lunar.spawn(function() lunar.sleep(5) end):await()
        trace.stop()
        _G.describe = nil
        _G.it = nil
        _G.assert = nil
      end)
    end)
    """

  @Test func filesRunInRestoredRuntimesSeeNothingOfEarlierFiles() async throws {
    let folder = try Self.folder(files: 6, source: Self.leakingFile)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var options = SpecOptions()
    options.paths = [folder]
    options.luaPath = folder + "/?.lua"
    options.jobs = 1
    let runner = SpecRunner(options: options)
    let (results, runtimes) = await runner.runCounting(files: try runner.discoverFiles())
    #expect(results.flatMap(\.results).map(\.status) == Array(repeating: .success, count: 12))
    #expect(results.flatMap(\.results).compactMap(\.message) == [])
    // Two runtimes are set up (one runs a file while the other is made
    // ready); the other files run in restored ones.
    #expect(runtimes.made == 2)
    #expect(runtimes.restored >= 4)
  }

  @Test func aFileThatLeavesSwiftStateBehindGetsTheNextFileANewRuntime() async throws {
    let folder = try Self.folder(files: 4, source: """
      it("passes", function() assert.is_nil(QUEUE_MADE) end)
      """)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // The first file makes a queue (Swift state of its runtime): its
    // runtime is not reused.
    try Data("""
      it("makes a queue", function()
        QUEUE_MADE = true
        require("lunar.queue").new("q"):submit(function() end):await()
      end)
      """.utf8).write(to: URL(fileURLWithPath: folder + "/f0_spec.lua"))
    var options = SpecOptions()
    options.paths = [folder]
    options.jobs = 1
    let runner = SpecRunner(options: options)
    let (results, runtimes) = await runner.runCounting(files: try runner.discoverFiles())
    #expect(results.flatMap(\.results).map(\.status) == Array(repeating: .success, count: 5))
    // Two runtimes set up at the start, and a new one for the first file's.
    #expect(runtimes.made == 3)
  }

  @Test func aFileThatLoadsACLibraryGetsTheNextFileANewRuntime() async throws {
    // Closing its runtime unloads the library (lpeg, installed by
    // scripts/bootstrap), its static data with it; a restored one would not.
    let folder = try Self.folder(files: 4, source: """
      it("passes", function() end)
      """)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Loaded without running it, the library changes nothing but the
    // state's list of libraries.
    try Data("""
      it("loads lpeg", function()
        assert.is_true(package.loadlib(assert(package.searchpath("lpeg", package.cpath)), "*"))
      end)
      """.utf8).write(to: URL(fileURLWithPath: folder + "/f0_spec.lua"))
    var options = SpecOptions()
    options.paths = [folder]
    options.jobs = 1
    let runner = SpecRunner(options: options)
    let (results, runtimes) = await runner.runCounting(files: try runner.discoverFiles())
    #expect(results.flatMap(\.results).map(\.status) == Array(repeating: .success, count: 5))
    #expect(runtimes.made == 3)
  }

  /// A plugin that cannot be installed.
  struct BrokenPlugin: LunarPlugin {
    let name = "broken"
    struct Refusal: Error, CustomStringConvertible {
      var description: String { "the broken plugin refuses" }
    }
    func install(in runtime: RuntimeCore) throws { throw Refusal() }
  }

  @Test func aRuntimeThatCannotBeSetUpIsAnErrorOfEachFile() async throws {
    let folder = try Self.folder(files: 5, source: """
      it("passes", function() end)
      """)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for jobs in [1, 2] {
      var options = SpecOptions()
      options.paths = [folder]
      options.jobs = jobs
      options.plugins = [BrokenPlugin()]
      let runner = SpecRunner(options: options)
      let results = await runner.run(files: try runner.discoverFiles())
      #expect(results.map(\.results.count) == [1, 1, 1, 1, 1])
      #expect(results.flatMap(\.results).allSatisfy { $0.status == .error && $0.message == "the broken plugin refuses" })
    }
  }

  @Test func reuseChangesNoResultAndNoOrder() async throws {
    for jobs in [1, 2] {
      var options = SpecOptions()
      options.paths = [SpecRunnerTests.fixtures, Self.repositorySpecs]
      options.jobs = jobs
      let fresh = try await Self.run(options)
      options.reusesRuntimes = false
      let new = try await Self.run(options)
      #expect(fresh.files == new.files)
      #expect(fresh.results == new.results)
      if jobs == 1 { #expect(fresh.order == new.order) }
    }
  }

  /// Runs `options`' files; returns the files in order, their results
  /// without durations, and the order the runner reported them in.
  static func run(_ options: SpecOptions) async throws -> (files: [String], results: [[SpecResult]], order: [String]) {
    let runner = SpecRunner(options: options)
    let order = OrderLog()
    let files = try await runner.run(files: runner.discoverFiles()) { order.append($0.path) }
    let results = files.map { $0.results.map { result in
      var result = result
      result.duration = 0
      return result
    } }
    return (files.map(\.path), results, order.paths)
  }

  static let repositorySpecs: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/") + "/spec"
  }()

  /// A temporary folder with `files` spec files of `source` (f1_spec.lua,
  /// ...) and a module `fresh.lua`.
  static func folder(files: Int, source: String) throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lunar-reuse-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for file in 1...files {
      try Data(source.utf8).write(to: URL(fileURLWithPath: folder + "/f\(file)_spec.lua"))
    }
    try Data("return {}\n".utf8).write(to: URL(fileURLWithPath: folder + "/fresh.lua"))
    return folder
  }
}

/// The paths the runner reported, in order.
private final class OrderLog: Sendable {
  private let storage = Mutex<[String]>([])
  func append(_ path: String) { storage.withLock { $0.append(path) } }
  var paths: [String] { storage.withLock { $0 } }
}
