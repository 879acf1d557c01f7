import Foundation
import LuaKit
import Testing
import TestSupport

@testable import Lunar

/// `Journal` alone: calls kept per step and position, frames on disk.
@Suite struct JournalTests {
  @Test func eachStepReplaysItsOwnCallsInWhateverOrderTheStepsInterleave() throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("run.journal").path
    let recording = try Journal(.record(path: path))
    // "slow" numbers its call first and records the answer last, as an
    // HTTP request does when its answer comes from another thread.
    let slow = recording.nextCall(in: "slow")
    try recording.step(kind: "http", key: ["url": "b/1"], result: ["body": "B1"], in: "fast")
    try recording.step(kind: "clock", key: [:], result: ["now": 1.5], in: nil)
    try recording.step(kind: "http", key: ["url": "b/2"], result: ["body": "B2"], in: "fast")
    try recording.step(kind: "http", key: ["url": "a/1"], result: ["body": "A1"], at: slow)
    try recording.step(kind: "http", key: ["url": "a/2"], result: ["body": "A2"], in: "slow")

    let replaying = try Journal(.replay(path: path))
    #expect(try replaying.step(kind: "http", key: ["url": "a/1"], in: "slow")?["body"] == "A1")
    #expect(try replaying.step(kind: "http", key: ["url": "a/2"], in: "slow")?["body"] == "A2")
    #expect(try replaying.step(kind: "clock", key: [:], in: nil)?["now"] == 1.5)
    #expect(try replaying.step(kind: "http", key: ["url": "b/1"], in: "fast")?["body"] == "B1")
    #expect(try replaying.step(kind: "http", key: ["url": "b/2"], in: "fast")?["body"] == "B2")
    #expect(throws: Journal.Divergence.self) { try replaying.step(kind: "http", key: ["url": "b/3"], in: "fast") }
  }

  @Test func keysMatchBitForBit() throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("run.journal").path
    let key: LuaTable = ["input": .table(["nan": .number(.nan), "zero": .number(-0.0), "one": .integer(1)])]
    try Journal(.record(path: path)).step(kind: "action", key: key, in: nil)
    let same = try Journal(.replay(path: path))
    #expect(try same.step(kind: "action", key: key, in: nil) != nil, "NaN matches NaN")
    let other = try Journal(.replay(path: path))
    let zero: LuaTable = ["input": .table(["nan": .number(.nan), "zero": .number(0.0), "one": .integer(1)])]
    #expect(throws: Journal.Divergence.self, "0.0 is not -0.0") { try other.step(kind: "action", key: zero, in: nil) }
  }

  @Test func aDamagedEntryIsRefusedByItsPlace() throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("run.journal").path
    try Journal(.record(path: path)).step(kind: "clock", key: [:], result: ["now": 1], in: nil)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let header = JournalFile.header.count
    // The frame is whole, its entry is not: a tag no value has.
    bytes[header + 6] = 0x7F
    try bytes.write(to: URL(fileURLWithPath: path))
    #expect {
      try Journal(.replay(path: path))
    } throws: { error in
      "\(error)".hasPrefix("cannot replay \(path): the entry at byte \(header): stored value is damaged: unknown tag 127")
    }
  }
}
