import CLuaShim
import LuaKit
import LunarStore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Why a workflow run is being cancelled before it finished.
enum RunCancellation: Sendable, Equatable {
  /// A stop signal reached `lunar run` (SIGINT, SIGTERM, SIGHUP).
  case signal(Int32)
  /// Someone ran `lunar runs cancel` (the store's request says who).
  case request(String)
  /// The store refused this process's commit or heartbeat: another
  /// process holds the run now.
  case lostOwnership(String)
  /// Every running step only waits: the run is parked in the store until
  /// this time (seconds since the epoch; nil: until a signal) and its
  /// process leaves it for a worker to take again.
  case parked(wakeAt: Double?)

  /// What the store records as what stopped the run.
  var stoppedBy: String {
    switch self {
    case .signal(let signal): RunCancellation.signalName(signal)
    case .request(let who): who
    case .lostOwnership: "lost ownership"
    case .parked: "parked"
    }
  }

  /// The message of the steps it cancels.
  var message: String {
    switch self {
    case .signal(let signal): "cancelled by \(RunCancellation.signalName(signal))"
    case .request: "cancelled by request"
    case .lostOwnership(let why): "cancelled: \(why)"
    case .parked: "parked: the run waits in the store"
    }
  }

  /// `SIGTERM` for 15, and so on for the stop signals.
  static func signalName(_ signal: Int32) -> String {
    switch signal {
    case SIGINT: "SIGINT"
    case SIGTERM: "SIGTERM"
    case SIGHUP: "SIGHUP"
    default: "signal \(signal)"
    }
  }
}

/// The steps of a run that are running now, by position: kept by the
/// loop thread, read by the watch's heartbeat.
final class RunningSteps: Sendable {
  /// By position: a slot per step that has started, nil once it ended.
  private let steps = Mutex<[LuaString?]>([])

  /// Step `position`, named `name`, started an attempt.
  func started(_ position: Int, _ name: LuaString) {
    steps.withLock { steps in
      if position >= steps.count { steps.append(contentsOf: repeatElement(nil, count: position + 1 - steps.count)) }
      steps[position] = name
    }
  }

  /// Step `position`'s attempt ended.
  func ended(_ position: Int) {
    steps.withLock { steps in
      if position < steps.count { steps[position] = nil }
    }
  }

  /// Their names, in declaration order.
  var names: [LuaString] { steps.withLock { $0.compactMap { $0 } } }
}

/// The thread that watches over one workflow run, off the loop: it renews
/// the run's lease in the store every `heartbeat` (and so sees a
/// `lunar runs cancel` within that time), wakes at once for a stop signal,
/// and tells the loop through `deliver`; after a cancellation it gives the
/// steps `grace` seconds to end, then interrupts the runtime.
final class RunWatch: Sendable {
  /// How long the steps of a cancelled run may take to end (their
  /// `finally` and `<close>`) before the run is stopped at once.
  static let grace: Double = 5

  /// Set once the run ended, shared with the thread.
  private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
  }

  private let stopped = Flag()
  private let thread: LoopThread

  /// Watches run `run` of `store` held with `token` (no store: signals
  /// only), handing cancellations to `deliver` (called on this thread; it
  /// posts to the loop).
  init(
    store: (any RunStore)?, run: RunID?, token: ClaimToken, running: RunningSteps, lease: Duration = RunLease.defaultDuration,
    heartbeat: Duration = RunLease.defaultHeartbeat, deliver: @escaping @Sendable (RunCancellation) -> Void
  ) {
    let stopped = self.stopped
    let interval = Double(heartbeat.components.seconds) + Double(heartbeat.components.attoseconds) / 1e18
    lunar_cooperatestop(1)
    thread = LoopThread(stackSize: 256 << 10) {
      var cancelledAt: Double?
      var sawSignal = false
      while !stopped.value.load(ordering: .acquiring) {
        let wait = cancelledAt.map { max(0.01, min(interval, $0 + RunWatch.grace - lunar_monotonic())) } ?? interval
        let posted = lunar_waitstopsignal(wait) != 0
        if stopped.value.load(ordering: .acquiring) { return }
        if let at = cancelledAt, lunar_monotonic() >= at + RunWatch.grace {
          // The grace is over: stopped at once, as by a second signal.
          lunar_interruptforstop()
          return
        }
        if posted, !sawSignal, lunar_stopsignal() != 0 {
          sawSignal = true
          if cancelledAt == nil { cancelledAt = lunar_monotonic() }
          deliver(.signal(lunar_stopsignal()))
          continue
        }
        guard let store, let run else { continue }
        do {
          let beat = try store.heartbeat(run, owner: token, lease: lease, running: running.names, at: .now)
          if let who = beat.cancelRequest, cancelledAt == nil {
            cancelledAt = lunar_monotonic()
            deliver(.request(who))
          }
        } catch let error as StoreError where error.kind == .staleOwner {
          if cancelledAt == nil { cancelledAt = lunar_monotonic() }
          deliver(.lostOwnership(error.message))
        } catch {
          // A store that fails a heartbeat (a restarting server) is tried
          // again at the next one; the lease lasts several heartbeats.
        }
      }
    }
  }

  /// Stops watching (the run ended) and waits for the thread.
  func stop() {
    stopped.value.store(true, ordering: .releasing)
    lunar_cooperatestop(0)
    lunar_poststop()
    thread.join()
  }
}

extension Runtime {
  /// The first stop signal (SIGINT, SIGTERM, SIGHUP) the process received
  /// while it caught them, or 0.
  public static var stopSignal: Int32 { lunar_stopsignal() }
}
