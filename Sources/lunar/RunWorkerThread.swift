import Foundation
import LunarSchedules
import LunarStore

/// `lunar worker --runs N`'s `RunWorker`, on a thread of its own beside the
/// durable-queue worker, stopped by the same SIGTERM or SIGINT; what it
/// does is printed on standard error as `lunar worker` lines.
final class RunWorkerThread: Sendable {
  private let worker: RunWorker
  private let done = DispatchSemaphore(value: 0)

  private init(worker: RunWorker) {
    self.worker = worker
  }

  /// Opens the store at `location` and starts a worker of its submitted
  /// runs, at most `runs` at once, from files under `root`, each held with
  /// `lease`.
  static func start(location: StoreLocation, runs: Int, root: String, lease: Duration, grace: Duration) throws -> RunWorkerThread {
    let store = try location.openSchedulingStore()
    let absoluteRoot = ((root.hasPrefix("/") ? root : (StoreLocation.currentFolder as NSString).appendingPathComponent(root)) as NSString).standardizingPath
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: absoluteRoot, isDirectory: &isFolder), isFolder.boolValue else {
      throw RunProcessError(description: "--root \(root): no such folder")
    }
    let launcher = WarmRunProcesses(store: location.url, root: absoluteRoot, environment: Environment.current, lease: lease)
    let worker = RunWorker(
      store: store, options: RunWorker.Options(root: absoluteRoot, runs: runs, claimLease: lease), launcher: launcher,
      report: { event in if let line = Self.line(event) { Console.error("lunar worker: \(line)") } })
    let thread = RunWorkerThread(worker: worker)
    Thread {
      worker.run(stopRequested: { Signals.stopRequests }, graceful: grace)
      launcher.stopIdle()
      thread.done.signal()
    }.start()
    return thread
  }

  /// Waits until the worker stopped (after a stop signal).
  func wait() {
    done.wait()
    done.signal()
  }

  /// True when runs were still running as the worker stopped.
  var leftRunning: Bool { !worker.running.isEmpty }

  private static func tick(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

  /// The line an event prints, if any.
  static func line(_ event: RunWorker.Event) -> String? {
    switch event {
    case .started(let run, let file): "run \(run): started \(file)"
    case .tookOver(let run, let file): "run \(run): took over (its owner was lost), resuming \(file)"
    case .woke(let run, let file): "run \(run): due (parked until now), resuming \(file)"
    case .refused(let run, let reason): "run \(run): \(reason)"
    case .ended(let run, let status): "run \(run): ended with status \(status)"
    case .fired(let fired):
      switch fired.outcome {
      case .started(let run): "schedule \(RunText.name(fired.schedule)): tick \(tick(fired.tick)) queued run \(run)"
      case .skipped: "schedule \(RunText.name(fired.schedule)): tick \(tick(fired.tick)) skipped: its previous run is unfinished"
      case .taken: nil
      }
    case .problem(let problem): problem
    }
  }
}
