import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// Opens the store at `path` as the next run would, checks SQLite's own
/// integrity check, and checks that every step `probe` reported committed is
/// there with exactly the output it wrote.
private func expectIntact(_ path: String, after probe: ProbeProcess, _ context: String) throws {
  let store = try SQLiteRunStore(path: path)
  let db = try SQLiteDatabase(path: path)
  #expect(try db.scalar("PRAGMA integrity_check") == .text("ok"), "\(context)")
  let committed = probe.committed
  guard let run = probe.run else {
    #expect(committed.isEmpty, "\(context)")
    return
  }
  let steps = try store.steps(of: RunID(run))
  // Steps commit in order, and a batch may have committed before the
  // probe printed it: what is there is a prefix at least as long as what
  // was reported.
  #expect(steps.map(\.position) == Array(0..<steps.count), "\(context)")
  #expect(steps.count >= committed.count, "\(context): \(committed.count) reported, \(steps.count) stored")
  for step in steps where committed[step.position] != nil {
    let output = try #require(step.output, "\(context): step \(step.position)")
    #expect(try Fingerprint(of: output).hex == committed[step.position], "\(context): step \(step.position)")
  }
}

@Suite struct StoreCrashTests {
  @Test func aProcessKilledAtAnyPointLeavesEveryCommittedStepIntact() async throws {
    let folder = try TemporaryFolder()
    let shared = folder.url.appendingPathComponent("shared.db").path
    var random = SystemRandomNumberGenerator()
    for round in 0..<16 {
      // Even rounds start a new store, killed within its first 40 ms (while
      // it is being created, often); odd rounds kill a writer of the shared
      // store after a random number of commits.
      let fresh = round % 2 == 0
      let path = fresh ? folder.url.appendingPathComponent("fresh-\(round).db").path : shared
      let seed = UInt64.random(in: 0...UInt64.max, using: &random)
      let probe = try ProbeProcess(store: path, workflow: "w\(round)", steps: 1_000_000, batch: Int.random(in: 1...4, using: &random), seed: seed)
      if fresh {
        try await Task.sleep(for: .microseconds(Int.random(in: 0..<40_000, using: &random)))
      } else {
        try await probe.waitForLines(Int.random(in: 1...80, using: &random))
        try await Task.sleep(for: .microseconds(Int.random(in: 0..<2_000, using: &random)))
      }
      try await probe.killNow()
      #expect(probe.errorText == "", "round \(round)")
      if FileManager.default.fileExists(atPath: path) || !probe.lines.isEmpty {
        try expectIntact(path, after: probe, "round \(round), seed \(seed)")
      }
    }
    // Every killed writer's run is still listed, and the store takes new runs.
    let store = try SQLiteRunStore(path: shared)
    let runs = try store.runs(workflow: nil, limit: 100)
    #expect(runs.count == 8 && runs.allSatisfy { $0.run.status == .running })
    let next = try store.beginRun(NewRun(workflow: "after", file: "a.lua"))
    try store.recordSteps([StepRecord(name: "a", position: 0, status: .succeeded, output: [])], of: next)
  }

  @Test func processesWritingOneStoreAtOnceAllSucceed() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    // Started together on a store that does not exist yet: they also race
    // to create it.
    let probes = try (1...3).map { index in
      try ProbeProcess(store: path, workflow: "p\(index)", steps: 300, batch: index, seed: UInt64(index))
    }
    for (index, probe) in probes.enumerated() {
      #expect(try await probe.wait() == 0, "probe \(index + 1): \(probe.errorText)")
      #expect(probe.errorText == "")
      #expect(probe.lines.last == "done")
      #expect(probe.committed.count == 300)
      try expectIntact(path, after: probe, "probe \(index + 1)")
    }
    let store = try SQLiteRunStore(path: path)
    let runs = try store.runs(workflow: nil, limit: 10)
    #expect(runs.count == 3)
    #expect(runs.allSatisfy { $0.run.status == .succeeded && $0.succeeded == 300 })
    #expect(Set(runs.map(\.run.workflow)) == ["p1", "p2", "p3"])
  }
}
