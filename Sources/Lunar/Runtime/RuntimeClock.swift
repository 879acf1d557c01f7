import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The runtime's clock: real time, or virtual time that jumps to the next
/// timer whenever every task is waiting on one (tests sleep an hour in
/// milliseconds). Times are seconds since the Unix epoch.
public final class RuntimeClock {
  /// Which kind of clock a runtime uses.
  public enum Kind: Sendable, Equatable {
    /// Wall-clock time; the loop really sleeps.
    case real
    /// Time that only moves when the loop is idle, starting at `start`
    /// (seconds since the epoch).
    case virtual(start: Double)

    /// Virtual time starting at the wall clock's time now, so `os.time`
    /// and `os.date` answer as they would with real time.
    public static var virtualFromNow: Kind { .virtual(start: RuntimeClock.realTime(CLOCK_REALTIME)) }
  }

  /// The clock's kind.
  public private(set) var kind: Kind
  private let startEpoch: Double
  private let startMonotonic: Double
  private var virtualNow: Double {
    didSet { published.bits.store(virtualNow.bitPattern, ordering: .releasing) }
  }
  /// Virtual time as other threads may read it.
  private let published = PublishedTime()

  init(_ kind: Kind) {
    self.kind = kind
    startEpoch = RuntimeClock.realTime(CLOCK_REALTIME)
    startMonotonic = RuntimeClock.realTime(CLOCK_MONOTONIC)
    if case .virtual(let start) = kind { virtualNow = start } else { virtualNow = 0 }
    published.bits.store(virtualNow.bitPattern, ordering: .releasing)
  }

  /// A reading of `now` that is safe from any thread (Swift actions use it).
  public var sendableNow: @Sendable () -> Double {
    switch kind {
    case .real:
      let offset = startEpoch - startMonotonic
      return { offset + RuntimeClock.realTime(CLOCK_MONOTONIC) }
    case .virtual:
      let published = self.published
      return { Double(bitPattern: published.bits.load(ordering: .acquiring)) }
    }
  }

  /// When the clock started, in seconds since the epoch.
  public var start: Double {
    if case .virtual(let start) = kind { start } else { startEpoch }
  }

  /// True for virtual time.
  public var isVirtual: Bool { kind != .real }

  /// Seconds since the epoch, now.
  public var now: Double {
    switch kind {
    case .real: startEpoch + (RuntimeClock.realTime(CLOCK_MONOTONIC) - startMonotonic)
    case .virtual: virtualNow
    }
  }

  /// Seconds since the run started.
  public var elapsed: Double {
    switch kind {
    case .real: RuntimeClock.realTime(CLOCK_MONOTONIC) - startMonotonic
    case .virtual(let start): virtualNow - start
    }
  }

  /// The latest time the clock represents: 2^53 seconds since the epoch
  /// (about 285 million years), where a Double stops counting whole
  /// seconds exactly. A deadline past it never comes.
  public static let horizon: Double = 9_007_199_254_740_992

  /// The deadline `seconds` from now, or `.infinity` (never) when it lies
  /// past `horizon` or `seconds` is not a finite number: deadlines saturate
  /// rather than overflow.
  public func deadline(after seconds: Double) -> Double {
    let deadline = now + seconds
    return deadline.isFinite && deadline <= RuntimeClock.horizon ? deadline : .infinity
  }

  /// Moves virtual time forward to `time` (never backward, never past
  /// `horizon`; no-op when real).
  public func advance(to time: Double) {
    guard isVirtual, time.isFinite else { return }
    let target = min(time, RuntimeClock.horizon)
    if target > virtualNow { virtualNow = target }
  }

  /// Starts virtual time again at `start`, as a new runtime's clock would
  /// (a runtime reused for another script); no-op when real.
  func restart(at start: Double) {
    guard isVirtual else { return }
    kind = .virtual(start: start)
    virtualNow = start
  }

  /// The virtual time, shared with other threads.
  private final class PublishedTime: Sendable {
    let bits = Atomic<UInt64>(0)
  }

  private static func realTime(_ id: clockid_t) -> Double {
    var spec = timespec()
    clock_gettime(id, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }
}
