import Foundation
import Glibc
import LuaKit
import LunarStore
import Synchronization

/// The worker processes of `lunar run --processes N`: N `lunar worker
/// --steps` children, each serving a durable queue of its own in the run's
/// store, which load the run's file with its arguments and run the steps'
/// jobs the run submits, so CPU-bound steps use N cores. Under
/// `--no-store` the store is a temporary one, removed with the workers.
/// A worker that ends while the run goes on stops the run (SIGTERM to
/// this process): its queue would never be served again.
final class StepProcesses {
  /// The most worker processes a run may start.
  static let limit = 256

  /// One queue per worker process, named after this run's process so no
  /// other run's workers serve it, with the private prefix so no worker of
  /// every queue takes its jobs.
  let queues: [LuaString]
  /// The temporary store's folder, under `--no-store`.
  private let temporaryFolder: String?
  private var pids: [pid_t] = []
  /// What the threads waiting for the workers share with `stop`.
  private let watch = WorkerWatch()
  /// How long `stop` waits for the workers before it kills them.
  static let stopGrace = 5.0

  /// `count` workers' queues; a temporary store too if `temporary`.
  init(count: Int, temporary: Bool) throws {
    let token = "\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
    queues = (1...count).map { LuaString(bytes: QueueLimits.privateQueuePrefix + Array("\(token)/\($0)".utf8)) }
    if temporary {
      var template = Array((NSTemporaryDirectory() + "/lunar-processes-XXXXXX").utf8CString)
      guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
        throw ChildProcessError(description: "cannot make a temporary store for --processes: \(String(cString: strerror(errno)))")
      }
      temporaryFolder = String(cString: made)
    } else {
      temporaryFolder = nil
    }
  }

  /// The temporary store, under `--no-store`.
  var temporaryStore: StoreLocation? {
    temporaryFolder.map { StoreLocation(.sqlite(path: $0 + "/store.db")) }
  }

  /// Starts the workers on `store`, each loading `file` with `arguments`
  /// (and Lua plugins from `pluginDirectories`) in this folder, writing
  /// to this process's standard output and error.
  func start(store: StoreLocation, file: String, arguments: [String], pluginDirectories: [String]) throws {
    var environment = Environment.current
    environment["LUNAR_STORE"] = store.url
    let directories = pluginDirectories.flatMap { ["--plugin-dir", $0] }
    for queue in queues {
      let command =
        [ChildProcess.executable, "worker", "--steps", "--queues", queue.lossyString, "--parent", "\(getpid())", "--grace", "1"]
        + directories + ["--", file] + arguments
      let pid = try ChildProcess.spawn(command, environment: environment)
      pids.append(pid)
      startWatching(pid)
    }
  }

  /// Waits for worker `pid` on a thread of its own; if it ends before
  /// `stop`, says so and stops the run.
  private func startWatching(_ pid: pid_t) {
    let watch = watch
    Thread.detachNewThread {
      let status = ChildProcess.waitForExit(pid)
      if !watch.stopping.load(ordering: .acquiring) {
        Console.error("lunar: step worker \(pid) ended (status \(status)) while the run needed it: stopping the run")
        kill(getpid(), SIGTERM)
      }
      watch.ended.signal()
    }
  }

  /// Stops the workers (SIGTERM: a job still running may finish for a
  /// second) and waits for them; removes the temporary store.
  func stop() {
    watch.stopping.store(true, ordering: .releasing)
    for pid in pids { kill(pid, SIGTERM) }
    let deadline = DispatchTime.now() + Self.stopGrace
    var waiting = pids.count
    while waiting > 0, watch.ended.wait(timeout: deadline) == .success { waiting -= 1 }
    if waiting > 0 {
      // A worker stuck in a long call: its jobs are the run's, which is over.
      for pid in pids { kill(pid, SIGKILL) }
      while waiting > 0 {
        watch.ended.wait()
        waiting -= 1
      }
    }
    pids.removeAll()
    if let temporaryFolder { try? FileManager.default.removeItem(atPath: temporaryFolder) }
  }

  deinit { stop() }
}

/// One signal per worker that ended, and whether `stop` began.
private final class WorkerWatch: Sendable {
  let ended = DispatchSemaphore(value: 0)
  let stopping = Atomic<Bool>(false)
}
