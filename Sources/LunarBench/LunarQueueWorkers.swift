import Foundation
import LunarStore

/// `lunar worker` processes running a store's waiting jobs, timed from
/// their spawn until every job has finished or a time limit has passed.
/// Completion is read cheaply, without counting the waiting jobs: order is
/// strict, so a queue is done when its last job is.
enum LunarQueueWorkers {
  /// What the workers did.
  struct Processing {
    var seconds: Double
    /// Jobs finished within `seconds`: all of them, unless the limit came first.
    var finished: Int
    var submitted: Int
    var peakMegabytes: [Double]
    /// False if a job the check looked at failed (an unknown action fails too).
    var succeeded: Bool

    var jobsPerSecond: Double { Double(finished) / seconds }
    var isComplete: Bool { finished == submitted }
  }

  /// Starts `workers` worker processes of `lunar` loading `worker` on the
  /// store at `location`, waits until every job there finished or `limit`
  /// passed, then stops them with SIGTERM.
  static func run(_ lunar: String, location: String, worker: String, workers: Int, limit: Duration) throws -> Processing {
    let store = try StoreLocation(parsing: location, currentFolder: StoreLocation.currentFolder)
      .openQueueStore(createIfMissing: false)
    let queues = try store.queues()
    let submitted = queues.reduce(0) { $0 + Int($1.submitted) }
    var unfinished = queues[...]
    let start = ContinuousClock.now
    let pids = (0..<workers).map { _ in QuietChild.spawn(lunar, ["worker", "--store", location, worker]) }
    while let queue = unfinished.first, ContinuousClock.now - start < limit {
      if try store.job(queue: queue.name, sequence: queue.submitted)?.status.isFinal == true {
        unfinished.removeFirst()
      } else {
        usleep(5_000)
      }
    }
    let seconds = (ContinuousClock.now - start).nanoseconds / 1e9
    let finished =
      unfinished.isEmpty
      ? submitted
      : try store.queues().reduce(0) { $0 + Int($1.submitted) - $1.waiting - ($1.running == nil ? 0 : 1) }
    var peaks: [Double] = []
    for pid in pids where pid > 0 {
      kill(pid, SIGTERM)
      var status: Int32 = 0
      var usage = rusage()
      wait4(pid, &status, 0, &usage)
      peaks.append(Double(usage.ru_maxrss) / 1024)
    }
    return Processing(
      seconds: seconds, finished: finished, submitted: submitted, peakMegabytes: peaks,
      succeeded: try firstAndLastSucceeded(store, queues))
  }

  /// True if the first and the last job of every queue succeeded, or have
  /// not finished yet.
  static func firstAndLastSucceeded(_ store: any QueueStore, _ queues: [QueueSummary]) throws -> Bool {
    for queue in queues {
      for sequence in [1, queue.submitted] {
        guard let job = try store.job(queue: queue.name, sequence: sequence) else { return false }
        if job.status.isFinal && job.status != .succeeded { return false }
      }
    }
    return true
  }

  /// Prints the peak RSS of each worker and of the submitting process.
  static func printMemory(_ processing: Processing, enqueueing: WorkflowBenchmark.Child) {
    let rss = processing.peakMegabytes.map { String(format: "%.0f", $0) }.joined(separator: ", ")
    print(String(format: "    peak RSS per worker %@ MB, enqueueing process %.0f MB", rss as NSString, enqueueing.peakMegabytes))
  }
}
