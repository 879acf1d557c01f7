import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// Three `LunarStoreProbe queue` processes submitting 300 jobs over 5 queues
/// to one store while claiming and completing them, all at once; then the
/// store is checked: every job finished exactly once, each queue's jobs
/// numbered in submission order and started in that order.
enum QueueProbeRace {
  static let processes = 3
  static let jobsEach = 100
  static let queues = 5

  /// Runs the race on `store` (a path or URL), opened afterwards by `open`.
  static func run(store: String, open: (String) throws -> any QueueStore) async throws {
    let total = processes * jobsEach
    // Started together on a store that may not exist yet: they also race
    // to create it.
    let probes = try (1...processes).map { index in
      try ProbeProcess(arguments: [
        "queue", store, "p\(index)", String(jobsEach), String(total), String(queues), String(index),
      ])
    }
    var ran: [JobID: [(token: Int64, attempt: Int, status: String)]] = [:]
    var submitted: [JobID: (worker: String, queue: Int, sequence: Int64, index: Int64)] = [:]
    for (index, probe) in probes.enumerated() {
      #expect(try await probe.wait(timeout: 120) == 0, "probe \(index + 1): \(probe.errorText)")
      #expect(probe.errorText == "")
      #expect(probe.lines.last == "done")
      var lastSequence: [Int: Int64] = [:]
      for line in probe.lines {
        let parts = line.split(separator: " ").map(String.init)
        if parts.first == "ran", parts.count == 5, let id = Int64(parts[1]), let token = Int64(parts[2]),
          let attempt = Int(parts[3])
        {
          ran[JobID(id), default: []].append((token, attempt, parts[4]))
        } else if parts.first == "submitted", parts.count == 5, let id = Int64(parts[1]), let queue = Int(parts[2]),
          let sequence = Int64(parts[3]), let position = Int64(parts[4])
        {
          submitted[JobID(id)] = ("p\(index + 1)", queue, sequence, position)
          // One submitter's jobs to a queue are numbered in its order.
          #expect(sequence > lastSequence[queue, default: 0], "probe \(index + 1): \(line)")
          lastSequence[queue] = sequence
        }
      }
    }
    #expect(submitted.count == total)
    let store = try open(store)
    let summaries = try store.queues()
    #expect(summaries.count == queues)
    #expect(summaries.map(\.submitted).reduce(0, +) == Int64(total))
    var seen = 0
    for summary in summaries {
      #expect(summary.waiting == 0 && summary.running == nil && !summary.isHalted)
      let jobs = try store.jobs(queue: summary.name, limit: 1_000).reversed()
      #expect(jobs.map(\.sequence) == Array(1...summary.submitted), "\(summary.name)")
      // Started in submission order: each claim after the one before.
      let claims = jobs.compactMap(\.claim)
      #expect(claims.count == jobs.count && zip(claims, claims.dropFirst()).allSatisfy { $0 < $1 }, "\(summary.name)")
      for job in jobs {
        seen += 1
        let runs = ran[job.id] ?? []
        // Finished exactly once, by the claim the store recorded.
        #expect(runs.count == 1, "job \(job.id) ran \(runs.count) times")
        #expect(job.status.isFinal && job.status != .cancelled && job.attempts == 1)
        #expect(runs.first?.token == job.claim?.rawValue && runs.first?.status == job.status.rawValue)
        let origin = try #require(submitted[job.id], "job \(job.id) was never reported submitted")
        #expect(LuaString(bytes: Array("q\(origin.queue)".utf8) + [0xFF]) == job.queue && origin.sequence == job.sequence)
        #expect(job.input == (try LuaValueCodec.encode([.string(LuaString(origin.worker)), .integer(origin.index)])))
        #expect(job.status == .failed ? job.error != nil : job.output == (try LuaValueCodec.encode([.integer(job.sequence)])))
      }
    }
    #expect(seen == total && ran.count == total)
  }
}
