import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `workflow.wait` steps and `lunar runs signal`: a signal another process
/// sends becomes the step's output; a timeout fails the step.
@Suite struct WorkflowWaitTests {
  /// A workflow whose step `approval` waits for signal `signal` (a Lua
  /// literal) with `fields`, then `after` prints who approved.
  static func workflow(signal: String, _ fields: String) -> String {
    """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    return workflow "release" {
      step "before" { run = function() return 1 end },
      workflow.wait "approval" { needs = "before", signal = \(signal), \(fields) },
      step "after" {
        needs = "approval",
        run = function(ctx) print("approved by " .. tostring(ctx.steps.approval.output.by)) end,
      },
    }
    """
  }

  @Test func aSignalFromAnotherProcessBecomesTheWaitingStepsOutput() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    // The signal's name is bytes that are not UTF-8.
    let script = try folder.write("release.lua", Self.workflow(signal: "\"ap\\255prove\"", "timeout = 3600"))
    let first = try LunarProcess.start(["run", "--store", "sqlite:" + path, script])
    // Ready: the wait recorded its deadline when it started.
    var run: RunID?
    while run == nil {
      try await Task.sleep(for: .milliseconds(20))
      guard let store = try? SQLiteRunStore(path: path), let last = try? store.lastRun(workflow: "release", file: nil),
        let waits = try? store.stepWaits(of: last.id), !waits.isEmpty
      else { continue }
      run = last.id
    }
    let id = try #require(run)
    let sent = try await LunarProcess.run(
      bytes: [Array("runs".utf8), Array("signal".utf8), Array("--store".utf8), Array(("sqlite:" + path).utf8),
              Array("\(id)".utf8), [0x61, 0x70, 0xFF, 0x70, 0x72, 0x6F, 0x76, 0x65], Array(#"{"by":"ada"}"#.utf8)])
    #expect(sent.status == 0, "\(sent.stderr)")
    #expect(sent.stdout.contains("recorded for run \(id)"), "\(sent.stdout)")
    let outcome = try await first.wait(timeout: 30)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("approved by ada"), "\(outcome.stdout)")
  }

  @Test func theApprovalExampleShipsOnceApproved() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let examples = Repository.url("examples")
    let first = try LunarProcess.start(["run", "--store", store, "approval.lua"], in: examples)
    // Ready: the wait recorded its deadline (the cool-down's is recorded first).
    let path = String(store.dropFirst("sqlite:".count))
    while true {
      try await Task.sleep(for: .milliseconds(20))
      if let runs = try? SQLiteRunStore(path: path), let last = try? runs.lastRun(workflow: "approval", file: nil),
        let waits = try? runs.stepWaits(of: last.id), waits.contains(where: { $0.name == "approval" })
      {
        break
      }
    }
    let sent = try await LunarProcess.run(["runs", "signal", "--store", store, "last", "approve", #"{"by":"ada"}"#])
    #expect(sent.status == 0, "\(sent.stderr)")
    let outcome = try await first.wait(timeout: 30)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("shipping 1.2.0, approved by ada"), "\(outcome.stdout)")
  }

  @Test func aSignalSentBeforeTheWaitStartsIsKept() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    let gate = folder.url.appendingPathComponent("gate").path
    // `before` fails until the gate exists: the run stops before its wait.
    let script = try folder.write(
      "release.lua",
      Self.workflow(signal: "\"approve\"", "timeout = 60").replacingOccurrences(
        of: "run = function() return 1 end", with: "run = function() assert(io.open(\"\(gate)\"), \"closed\") return 1 end"))
    let stopped = try await LunarProcess.run(["run", "--clock", "virtual", "--store", "sqlite:" + path, script])
    #expect(stopped.status != 0)
    let sent = try await LunarProcess.run(["runs", "signal", "--store", "sqlite:" + path, "last", "approve", #"{"by":"bo"}"#])
    #expect(sent.status == 0, "\(sent.stderr)")
    #expect(FileManager.default.createFile(atPath: gate, contents: nil))
    let resumed = try await LunarProcess.run(["run", "--clock", "virtual", "--store", "sqlite:" + path, "--resume", script])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    #expect(resumed.stdout.contains("approved by bo"), "\(resumed.stdout)")
  }

  @Test func aWaitWithNoSignalInTimeFailsTheStep() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("release.lua", Self.workflow(signal: "\"approve\"", "timeout = 60"))
    let outcome = try await LunarProcess.run(["run", "--clock", "virtual", "--store", "sqlite:" + path, script])
    #expect(outcome.status != 0)
    #expect(
      (outcome.stdout + outcome.stderr).contains("release.lua:5: step \"approval\": no signal 'approve' came within its timeout of 60 seconds"),
      "\(outcome.stdout)\(outcome.stderr)")
    #expect(!outcome.stdout.contains("approved by"))
  }

  @Test func badJSONAnUnknownRunAndBadFieldsAreClearErrors() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("release.lua", Self.workflow(signal: "\"approve\"", "timeout = 1"))
    _ = try await LunarProcess.run(["run", "--clock", "virtual", "--store", store, script])
    let badJSON = try await LunarProcess.run(["runs", "signal", "--store", store, "last", "approve", "{by"])
    #expect(badJSON.status == 2)
    #expect(badJSON.stderr.contains("lunar: runs signal: VALUE is not JSON: "), "\(badJSON.stderr)")
    let unknown = try await LunarProcess.run(["runs", "signal", "--store", store, "999", "approve"])
    #expect(unknown.status == 1)
    #expect(unknown.stderr.contains("lunar: no run 999 in \(store)"), "\(unknown.stderr)")
    let noName = try await LunarProcess.run(["runs", "signal", "--store", store, "last"])
    #expect(noName.status == 2)
    #expect(noName.stderr.contains("runs signal needs a RUN (a run id or last) and a signal NAME"), "\(noName.stderr)")
    for (fields, message) in [
      ("signal = 5", "wait \"approval\": 'signal' must be a signal name, got number"),
      ("signal = 'a', timeout = 0", "wait \"approval\": 'timeout' must be a positive number of seconds, got 0"),
      ("signal = 'a', seconds = 1", "wait \"approval\": unknown field 'seconds' (a wait takes signal, timeout, needs, if, description)"),
    ] {
      let bad = try folder.write(
        "bad.lua", Self.workflow(signal: "nil", fields).replacingOccurrences(of: "signal = nil, ", with: ""))
      let outcome = try await LunarProcess.run(["run", "--clock", "virtual", "--no-store", bad])
      #expect(outcome.status != 0)
      #expect(outcome.stderr.contains("bad.lua:5: " + message), "\(outcome.stderr)")
    }
  }
}
