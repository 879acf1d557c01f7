import Foundation
import Lunar

/// `OrderedQueue` against the well-known task-chain queue (each job awaits
/// the previous job's task), each in a child process so peak memory is
/// measured separately; and Lua jobs against a plain Lua call.
enum QueueBenchmark {
  /// The baseline: every submit makes a task that awaits the previous one.
  final class TaskChainQueue: @unchecked Sendable {
    // Safe: `last` is only touched under `lock`.
    private var last: Task<Void, Never>?
    private let lock = NSLock()

    @discardableResult
    func submit(_ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
      lock.lock()
      defer { lock.unlock() }
      let previous = last
      let task = Task {
        await previous?.value
        await work()
      }
      last = task
      return task
    }
  }

  static let jobs = 1_000_000

  static func run() throws {
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    func child(_ mode: String) throws -> (ns: Double, peakKB: Double) {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: me)
      process.arguments = ["queue-child", mode]
      let pipe = Pipe()
      process.standardOutput = pipe
      try process.run()
      process.waitUntilExit()
      let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      let parts = text.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
      guard parts.count == 2 else { throw BenchmarkFailure(description: "queue child said: \(text)") }
      return (parts[0], parts[1])
    }
    // Three runs of each, alternating; the fastest of each is compared (the
    // two-thread timing moves by ±30% between runs on a small machine).
    var subjects: [(ns: Double, peakKB: Double)] = []
    var baselines: [(ns: Double, peakKB: Double)] = []
    var floors: [(ns: Double, peakKB: Double)] = []
    for _ in 0..<3 {
      subjects.append(try child("subject"))
      baselines.append(try child("baseline"))
      floors.append(try child("floor"))
    }
    let subject = subjects.min { $0.ns < $1.ns }!
    let baseline = baselines.min { $0.ns < $1.ns }!
    let floor = floors.min { $0.ns < $1.ns }!
    Harness.report("OrderedQueue, 1M trivial jobs", subject: subject.ns, baseline: baseline.ns, baselineName: "task chain:", goal: "≤ 0.02× (50× faster)")
    print(String(format: "    → %.0f vs %.0f jobs per second; peak memory %.0f MB vs %.0f MB (%.2f×, goal ≤ 0.1×)",
      1e9 / subject.ns, 1e9 / baseline.ns, subject.peakKB / 1024, baseline.peakKB / 1024, subject.peakKB / baseline.peakKB))
    Harness.report("    the same closures run in a bare loop", subject: subject.ns, baseline: floor.ns, baselineName: "loop:", goal: "report")

    let runtime = try RuntimeBenchmark.makeRuntime()
    let luaJobs = try RuntimeBenchmark.timeScript(runtime, iterations: 100_000, rounds: 3, """
      local q, n = require('lunar.queue').new('bench'), ...
      for i = 1, n do q:submit(function() return i * i end) end
      q:drain()
      """)
    let luaCall = try RuntimeBenchmark.timeScript(runtime, iterations: 100_000, rounds: 3, """
      local n = ...
      local t = {}
      for i = 1, n do t[i] = (function() return i * i end)() end
      """)
    Harness.report("Lua queue, 100k jobs of i * i", subject: luaJobs, baseline: luaCall, baselineName: "Lua call:", goal: "report")
    print(String(format: "    → %.0f jobs per second", 1e9 / luaJobs))
  }

  /// Runs in a child process: times 1M jobs and prints "ns-per-job peak-KB".
  static func child(_ mode: String) {
    let done = DispatchSemaphore(value: 0)
    let start = ContinuousClock.now
    Task {
      if mode == "floor" {
        // No queue at all: the same closures, stored type-erased as a queue
        // must store them, then run one after another in one task.
        var closures: [@Sendable () async throws -> any Sendable] = []
        for _ in 0..<jobs {
          let work: @Sendable () async throws -> Void = {}
          closures.append { try await work() }
        }
        for closure in closures { _ = try? await closure() }
      } else if mode == "subject" {
        let queue = OrderedQueue(name: "bench")
        for _ in 0..<jobs { queue.submit { () -> Void in } }
        await queue.drain()
      } else {
        let queue = TaskChainQueue()
        var last: Task<Void, Never>?
        for _ in 0..<jobs { last = queue.submit {} }
        await last?.value
      }
      done.signal()
    }
    done.wait()
    let elapsed = ContinuousClock.now - start
    let ns = elapsed.nanoseconds / Double(jobs)
    print(ns, peakKB())
  }

  /// VmHWM: the process's peak resident memory, in KB.
  static func peakKB() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      return Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "0") ?? 0
    }
    return 0
  }
}
