import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

@testable import Lunar

/// What workflow steps print, kept in the run store per step and attempt
/// (`StepLog`), read back with `RunStore.stepLogs`: real runs in a real
/// SQLite store in a temporary folder (and on the throwaway PostgreSQL
/// server when there is one).
@Suite struct StepLogTests {
  /// A step writing every way Lunar keeps (and a child task), one that
  /// fails twice before it succeeds, and output outside any step.
  static let printing = #"""
    local workflow = require "lunar.workflow"
    local step = workflow.step
    lunar.action("say", { uses = { "log" } }, function(ctx, input) ctx.log:info("said " .. input) end)
    print("before the run")
    local tries = 0
    local wf = workflow "printing" {
      step "writes" { run = function()
        print("print", 1, 2.5, nil)
        io.write("write ", 3, " ", 1.0, "\255\0\n")
        io.stdout:write("stdout\n")
        io.stderr:write("stderr\n")
        lunar.run("say", "hi")
        lunar.spawn(function() print("child task") end):await()
      end },
      step "flaky" { needs = { "writes" }, retry = { attempts = 3, backoff = 0 }, run = function()
        tries = tries + 1
        print("try " .. tries)
        if tries < 3 then error("not yet", 0) end
      end },
    }
    workflow.run(wf, { quiet = true })
    print("after the run")
    """#

  private func runLogged(
    _ source: String, store location: StoreLocation, options: WorkflowRunOptions = WorkflowRunOptions()
  ) async throws {
    let test = try TestRuntime { configuration in
      configuration.store = location
      configuration.plugins = [WorkflowPlugin(options: options)]
    }
    _ = try await test.run(source)
  }

  /// The bytes each (step, attempt) kept, in store order.
  private func logs(in store: any RunStore) throws -> [String: [UInt8]] {
    let run = try #require(try store.lastRun(workflow: nil, file: nil))
    var logs: [String: [UInt8]] = [:]
    for chunk in try store.stepLogs(of: run.id, step: nil, attempt: nil, after: 0) {
      logs["\(chunk.step.lossyString) \(chunk.attempt)", default: []] += chunk.bytes
    }
    return logs
  }

  private func checkEveryWayOfWriting(_ logs: [String: [UInt8]]) {
    #expect(
      logs["writes 1"]
        == Array("print\t1\t2.5\tnil\nwrite 3 1".utf8) + [0xFF, 0, 0x0A]
        + Array("stdout\nstderr\ninfo: said hi\nchild task\n".utf8),
      "\(logs.mapValues { String(decoding: $0, as: UTF8.self) })")
    #expect(logs["flaky 1"] == Array("try 1\n".utf8))
    #expect(logs["flaky 2"] == Array("try 2\n".utf8))
    #expect(logs["flaky 3"] == Array("try 3\n".utf8))
    #expect(logs.count == 4, "nothing printed outside a step is kept: \(logs.keys.sorted())")
  }

  @Test func everyWayOfWritingIsKeptPerStepAndAttempt() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    try await runLogged(Self.printing, store: StoreLocation(.sqlite(path: path)))
    let store = try SQLiteRunStore(path: path)
    checkEveryWayOfWriting(try logs(in: store))
    // The step's own chunks come in the order written, by stream.
    let run = try #require(try store.lastRun(workflow: nil, file: nil))
    let writes = try store.stepLogs(of: run.id, step: "writes", attempt: 1, after: 0)
    #expect(writes.map(\.stream) == [.standardOutput, .standardError, .standardOutput])
    #expect(writes.map(\.sequence) == [1, 2, 3])
    #expect(try store.stepLogs(of: run.id, step: "flaky", attempt: 2, after: 0).map(\.bytes) == [Array("try 2\n".utf8)])
  }

  @Test(.enabled(if: TestPostgresSchema.isAvailable)) func everyWayOfWritingIsKeptOnPostgreSQL() async throws {
    let schema = try TestPostgresSchema()
    let location = StoreLocation(.postgres(url: schema.url))
    try await runLogged(Self.printing, store: location)
    let store = try location.openRunStore()
    checkEveryWayOfWriting(try logs(in: store))
    let run = try #require(try store.lastRun(workflow: nil, file: nil))
    let all = try store.stepLogs(of: run.id, step: nil, attempt: nil, after: 0)
    let later = try store.stepLogs(of: run.id, step: nil, attempt: nil, after: all[1].id)
    #expect(later == Array(all.dropFirst(2)), "reading on from a chunk")
    #expect(try store.stepLogs(of: run.id, step: "flaky", attempt: 3, after: 0).map(\.bytes) == [Array("try 3\n".utf8)])
  }

  @Test func theCapCutsTheLogAndSaysHowMuchWasDropped() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    var options = WorkflowRunOptions()
    options.logLimit = 25
    try await runLogged(
      #"""
      local workflow = require "lunar.workflow"
      workflow.run(workflow "big" {
        workflow.step "loud" { run = function()
          for i = 1, 10 do print(("line %02d"):format(i)) end
        end },
        workflow.step "quiet" { run = function() print("short") end },
      }, { quiet = true })
      """#, store: StoreLocation(.sqlite(path: path)), options: options)
    let logs = try logs(in: try SQLiteRunStore(path: path))
    // 25 of the 80 bytes: three lines and one byte of the fourth.
    #expect(
      logs["loud 1"].map { String(decoding: $0, as: UTF8.self) }
        == "line 01\nline 02\nline 03\nl\n[lunar: 55 more bytes were not stored: a step's log keeps at most 25 bytes per attempt]\n")
    #expect(logs["quiet 1"] == Array("short\n".utf8))
  }

  @Test func noLogsKeepsNothingButTheSteps() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    var options = WorkflowRunOptions()
    options.storesLogs = false
    try await runLogged(Self.printing, store: StoreLocation(.sqlite(path: path)), options: options)
    let store = try SQLiteRunStore(path: path)
    #expect(try logs(in: store).isEmpty)
    let run = try #require(try store.lastRun(workflow: nil, file: nil))
    #expect(try store.steps(of: run.id).map(\.status) == [.succeeded, .succeeded])
  }
}
