import Foundation

/// The lines of the durable-queue benchmarks: one per figure, in jobs/s
/// (higher is better), with its baseline, their ratio and the goal.
enum DurableQueueReport {
  /// Prints Lunar's rate beside `baseline`'s (a label such as
  /// "SqliteHuey" and its rate), or says why the baseline is missing.
  static func line(_ name: String, lunar: Double, baseline: (label: String, jobsPerSecond: Double?), goal: String) {
    guard let rate = baseline.jobsPerSecond else {
      print(String(format: "%-58@ %8.0f jobs/s   (%@ not measured: baseline missing)", name as NSString, lunar, baseline.label as NSString))
      return
    }
    print(
      String(format: "%-58@ %8.0f jobs/s   %@: %8.0f jobs/s   ratio %.2f×   (goal: %@)",
        name as NSString, lunar, baseline.label as NSString, rate, lunar / rate, goal as NSString))
  }
}
