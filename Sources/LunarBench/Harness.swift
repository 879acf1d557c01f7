import Foundation

/// Times a piece of work the same way for the subject and its baseline.
enum Harness {
  /// The best per-iteration time in nanoseconds over `rounds` rounds of
  /// `iterations` each (the minimum is the least noisy on a shared machine).
  static func nanoseconds(iterations: Int, rounds: Int = 5, _ body: (Int) throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<rounds {
      let start = ContinuousClock.now
      try body(iterations)
      let elapsed = ContinuousClock.now - start
      let ns = elapsed.nanoseconds
      best = min(best, ns / Double(iterations))
    }
    return best
  }

  /// The best per-iteration time of each body, in nanoseconds, with the
  /// bodies taking turns round by round: a subject and its baselines then
  /// meet the same moments of a shared machine's load, not different ones.
  static func interleaved(iterations: Int, rounds: Int, _ bodies: [(Int) throws -> Void]) throws -> [Double] {
    var best = [Double](repeating: .infinity, count: bodies.count)
    for _ in 0..<rounds {
      for (index, body) in bodies.enumerated() {
        let start = ContinuousClock.now
        try body(iterations)
        best[index] = min(best[index], (ContinuousClock.now - start).nanoseconds / Double(iterations))
      }
    }
    return best
  }

  /// Prints one result line: subject, baseline, and their ratio.
  static func report(_ name: String, subject: Double, baseline: Double, baselineName: String, unit: String = "ns/op", goal: String) {
    let ratio = subject / baseline
    // Small ratios also read as "N× faster", which two decimals would hide.
    let faster = ratio < 0.5 ? String(format: " (%.0f× faster)", 1 / ratio) : ""
    print(
      String(format: "%-44@ %10.1f %@   %@ %10.1f %@   ratio %.3f×%@   (goal: %@)",
        name as NSString, subject, unit as NSString, baselineName as NSString, baseline, unit as NSString, ratio,
        faster as NSString, goal as NSString))
  }
}

extension Duration {
  /// The duration in nanoseconds, as a Double.
  var nanoseconds: Double { Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9 }
}

/// Every benchmark, run in order.
enum BenchmarkSuite {
  static func main(arguments: [String]) {
    if arguments.count >= 3 && arguments[1] == "queue-child" {
      QueueBenchmark.child(arguments[2])
      return
    }
    let only = arguments.dropFirst().first
    let all: [(String, () throws -> Void)] = [
      ("host-call", HostCallBenchmark.run),
      ("values", ValueRoundTripBenchmark.run),
      ("runtime", RuntimeBenchmark.run),
      ("queue", QueueBenchmark.run),
      ("queue-durable", QueueDurableBenchmark.run),
      ("queue-durable-postgres", PostgresQueueBenchmark.run),
      ("queue-durable-wal", WriteAheadLogBenchmark.run),
      ("machine", MachineBenchmark.run),
      ("action", ActionBenchmark.run),
      ("startup", StartupBenchmark.run),
      ("specs", SpecSuiteBenchmark.run),
      ("coverage", CoverageBenchmark.run),
      ("workflow", WorkflowBenchmark.run),
      ("step-log", StepLogBenchmark.run),
      ("durable-steps", DurableStepBenchmark.run),
      ("submitted-runs", SubmittedRunBenchmark.run),
      ("schedule-ticks", ScheduleTickBenchmark.run),
      ("every-core", EveryCoreBenchmark.run),
      ("submitted-drain", SubmittedDrainBenchmark.run),
      ("serve", ServeBenchmark.run),
    ]
    for (name, run) in all where only == nil || only == name {
      do {
        try run()
      } catch {
        print("\(name): failed: \(error)")
      }
    }
  }
}
