import Lunar
import Synchronization

/// Spec runtimes made ready ahead of the files that need them. A runtime a
/// file has finished with is restored on its own thread while the next
/// file runs in another, so on two cores the next file does not wait for
/// it; one that cannot be restored (or, without reuse, every one) is
/// replaced by a new one, set up in the background too.
final class SpecRuntimePool: Sendable {
  /// A ready runtime, or why none could be set up.
  typealias Made = Result<SpecRuntime, any Error>

  /// How the pool's runtimes were got, for tests and benchmarks.
  struct Statistics: Sendable, Equatable {
    /// Runtimes set up.
    var made = 0
    /// Files handed a runtime an earlier file ran in.
    var restored = 0
  }

  private struct State {
    var ready: [Made] = []
    var waiting: [CheckedContinuation<Made, Never>] = []
    /// Runtimes being set up or restored.
    var busy = 0
    var closed = false
    /// Runtimes handed to files so far.
    var taken = 0
    var drained: CheckedContinuation<Void, Never>?
    var statistics = Statistics()
    /// The files whose runtimes are being restored, by restore number.
    var restoring: [Int: String] = [:]
    var nextRestore = 0
    /// The files whose restore outlasted the grace.
    var abandoned: [String] = []
  }

  private let state = Mutex(State())
  private let options: SpecOptions
  private let reuses: Bool
  private let files: Int
  private let interruptsBefore: Int

  /// A pool for `files` files of `options` that sets up `size` runtimes at
  /// once, and restores them between files when `reuses`.
  init(size: Int, files: Int, options: SpecOptions, reuses: Bool) {
    self.options = options
    self.reuses = reuses
    self.files = files
    interruptsBefore = Runtime.interruptCount
    for _ in 0..<size { prepare() }
  }

  /// What the pool has done so far.
  var statistics: Statistics { state.withLock { $0.statistics } }

  /// A ready runtime (or the error that kept one from being set up: then
  /// another is set up for the next file), waiting for one when none is
  /// ready.
  func take() async -> Made {
    let made = await withCheckedContinuation { continuation in
      let made: Made? = state.withLock { state in
        state.taken += 1
        guard !state.ready.isEmpty else {
          state.waiting.append(continuation)
          return nil
        }
        return state.ready.removeFirst()
      }
      if let made { continuation.resume(returning: made) }
    }
    switch made {
    case .success(let runtime):
      if runtime.files > 0 { state.withLock { $0.statistics.restored += 1 } }
    case .failure:
      prepare(unlessEveryFileHasOne: true)
    }
    return made
  }

  /// Takes back a runtime a file has finished with: restored for another
  /// file, or replaced by a new one; let go once every file has one.
  func giveBack(_ runtime: SpecRuntime) {
    guard begin(unlessEveryFileHasOne: true) else { return }
    let restore = state.withLock { state in
      state.nextRestore += 1
      state.restoring[state.nextRestore] = runtime.lastFile ?? "?"
      return state.nextRestore
    }
    Task {
      let restored = await runtime.restore()
      // Abandoned meanwhile (see below): another runtime took its place.
      guard state.withLock({ $0.restoring.removeValue(forKey: restore) }) != nil else { return }
      if restored {
        finish(.success(runtime))
      } else {
        finish(await made())
      }
    }
    // A restore runs the finalizers of what the file made, and Lua runs
    // those with hooks off: nothing can stop one that never returns. After
    // the grace, the runtime is left to it and a new one takes its place.
    Task {
      try? await Task.sleep(for: .seconds(Self.cleanUpGrace))
      let abandoned = state.withLock { state -> Bool in
        guard let path = state.restoring.removeValue(forKey: restore) else { return false }
        state.abandoned.append(path)
        return true
      }
      if abandoned { finish(await made()) }
    }
  }

  /// Stops making and restoring runtimes, lets go of the ready ones and
  /// waits until none is being set up or restored. Returns the files whose
  /// clean-up outlasted the grace and was left running.
  func close() async -> [String] {
    await withCheckedContinuation { continuation in
      let done: Bool = state.withLock { state in
        state.closed = true
        state.ready.removeAll()
        guard state.busy > 0 else { return true }
        state.drained = continuation
        return false
      }
      if done { continuation.resume() }
    }
    return state.withLock { $0.abandoned }
  }

  /// How long a file's clean-up may take before its runtime is left to it.
  static let cleanUpGrace = 5.0

  private func prepare(unlessEveryFileHasOne: Bool = false) {
    guard begin(unlessEveryFileHasOne: unlessEveryFileHasOne) else { return }
    Task { finish(await made()) }
  }

  private func made() async -> Made {
    // After a Ctrl-C no file starts: nothing is set up for one.
    if options.catchesInterrupts && Runtime.interruptCount > interruptsBefore {
      return .failure(RunFailure.interrupted("interrupted"))
    }
    do {
      let runtime = try await SpecRuntime(options: options, reusable: reuses)
      state.withLock { $0.statistics.made += 1 }
      return .success(runtime)
    } catch {
      return .failure(error)
    }
  }

  private func begin(unlessEveryFileHasOne: Bool = false) -> Bool {
    state.withLock { state in
      guard !state.closed, !(unlessEveryFileHasOne && state.taken >= files) else { return false }
      state.busy += 1
      return true
    }
  }

  /// Hands `made` to the first file waiting, or keeps it ready; after
  /// `close`, lets it go.
  private func finish(_ made: Made) {
    let (waiter, drained): (CheckedContinuation<Made, Never>?, CheckedContinuation<Void, Never>?) = state.withLock { state in
      state.busy -= 1
      if state.closed {
        defer { if state.busy == 0 { state.drained = nil } }
        return (nil, state.busy == 0 ? state.drained : nil)
      }
      guard !state.waiting.isEmpty else {
        state.ready.append(made)
        return (nil, nil)
      }
      return (state.waiting.removeFirst(), nil)
    }
    waiter?.resume(returning: made)
    drained?.resume()
  }
}
