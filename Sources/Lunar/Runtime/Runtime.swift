import CLuaShim  // interrupts reach the state from other threads only through the shim's signal-safe control block
import LuaKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A Lua runtime: one Lua state on its own event-loop thread
/// (docs/architecture.md, "One thread per Lua state"). This handle is Sendable; everything it asks of
/// the state is posted to the loop and runs there.
///
/// ```swift
/// let runtime = try Runtime()
/// let results = try await runtime.run(Script(source: .text("return 6 * 7", chunkName: "=demo")))
/// ```
public final class Runtime: Sendable {
  let inbox: Inbox
  private let control: ControlHandle
  private let loop: LoopThread
  private let waitsForClose: Bool

  /// Starts the loop thread and prepares the state there: standard
  /// libraries, the built-in plugins, then `configuration.plugins`.
  public init(_ configuration: RuntimeConfiguration = RuntimeConfiguration()) throws {
    let setUp = BlockingHandoff<Result<Parts, any Error>>()
    loop = LoopThread {
      do {
        let core = try RuntimeCore(configuration: configuration)
        setUp.put(.success(Parts(inbox: core.inbox, control: core.control)))
        core.serve()
      } catch {
        setUp.put(.failure(error))
      }
    }
    let parts = try setUp.take().get()
    waitsForClose = configuration.waitsForCloseOnRelease
    inbox = parts.inbox
    control = parts.control
    if let timeout = configuration.timeout {
      Self.startWatchdog(for: control, after: timeout, endsProcess: configuration.ownsProcess)
    }
  }

  deinit {
    inbox.post { core in core.stop() }
    if waitsForClose { loop.join() } else { loop.detach() }
  }

  /// Runs a script's main chunk and then every task it started; returns the
  /// chunk's results.
  public func run(_ script: Script) async throws(RunFailure) -> [LuaValue] {
    let result: Result<[LuaValue], RunFailure> = await withCheckedContinuation { continuation in
      let posted = inbox.post { core in continuation.resume(returning: core.scripts.run(script)) }
      if !posted { continuation.resume(returning: .failure(.interrupted("the runtime has stopped"))) }
    }
    return try result.get()
  }

  /// Runs a script and blocks the calling thread until it is done (for the
  /// command line, whose main thread has nothing else to do).
  public func runBlocking(_ script: Script) -> Result<[LuaValue], RunFailure> {
    let answer = BlockingHandoff<Result<[LuaValue], RunFailure>>()
    let posted = inbox.post { core in answer.put(core.scripts.run(script)) }
    guard posted else { return .failure(.interrupted("the runtime has stopped")) }
    return answer.take()
  }

  /// Runs one script on the calling thread and returns the chunk's results
  /// once it and every task it started are done. The calling thread serves
  /// as the loop thread for that time, which saves starting one: for a
  /// command line's main thread. Never call it from Swift's cooperative pool
  /// (docs/architecture.md, "One thread per Lua state").
  public static func runOnCurrentThread(_ configuration: RuntimeConfiguration, _ script: Script) throws
    -> Result<[LuaValue], RunFailure>
  {
    let core = try RuntimeCore(configuration: configuration)
    if let timeout = configuration.timeout {
      startWatchdog(for: core.control, after: timeout, endsProcess: configuration.ownsProcess)
    }
    let result = core.scripts.run(script)
    core.shutDown()
    return result
  }

  /// Runs a chunk for an interactive session and blocks until it returns
  /// and the tasks it woke have run (see `Scheduler.runWoken`); background
  /// tasks keep running afterwards.
  public func evaluateBlocking(_ source: String, name: String = "=stdin", arguments: [LuaValue] = [])
    -> Result<[LuaValue], RunFailure>
  {
    let answer = BlockingHandoff<Result<[LuaValue], RunFailure>>()
    let posted = inbox.post { core in answer.put(core.scripts.evaluate(source, name: name, arguments: arguments)) }
    guard posted else { return .failure(.interrupted("the runtime has stopped")) }
    return answer.take()
  }

  /// How many Ctrl-Cs the process has received so far.
  public static var interruptCount: Int { Int(lunar_sigintcount()) }

  /// Runs `body` on the loop thread with the core, and returns its result.
  public func perform<T: Sendable>(_ body: @escaping @Sendable (RuntimeCore) throws -> T) async throws -> T {
    let result: Result<T, any Error> = await withCheckedContinuation { continuation in
      let posted = inbox.post { core in
        continuation.resume(returning: Result { try body(core) })
      }
      if !posted { continuation.resume(returning: .failure(RunFailure.interrupted("the runtime has stopped"))) }
    }
    return try result.get()
  }

  /// The errors of background tasks that failed with nobody looking so
  /// far, now marked observed, so each is returned once (a console reports
  /// them between entries).
  public func takeUnobservedFailures() async -> [UnobservedError] {
    (try? await perform { core in core.scheduler.takeUnobservedFailures() }) ?? []
  }

  /// Stops the running script at its next Lua instruction, as Ctrl-C does.
  public func interrupt() {
    control.interrupt(reason: LUNAR_INTERRUPT_REQUEST)
  }

  /// Interrupts the run after `seconds`; with `endsProcess`, ends the
  /// process if the interrupt has not taken effect a second later.
  private static func startWatchdog(for control: ControlHandle, after seconds: Double, endsProcess: Bool) {
    let thread = LoopThread(stackSize: 64 << 10) {
      guard pause(seconds, while: { control.isAlive }) else { return }
      control.interrupt(reason: LUNAR_INTERRUPT_TIMEOUT)
      guard endsProcess else { return }
      if pause(stuckGrace, while: { control.isAlive && !control.interruptTaken }) {
        let place = control.isClosing ? "inside a finalizer while the state closed" : "inside a C function"
        control.endProcessIfStuck(suffix: " (stopped \(place))")
        return
      }
      // Taken: the run ends and the state closes. Lua runs finalizers with
      // hooks off, so one that loops is ended with the process.
      while control.isAlive {
        if control.isClosing, pause(stuckGrace, while: { control.isAlive }) {
          control.endProcessIfStuck(suffix: " (stopped inside a finalizer while the state closed)", evenIfTaken: true)
          return
        }
        usleep(20_000)
      }
    }
    thread.detach()
  }

  /// How long a timeout may go untaken before the process is ended.
  static let stuckGrace = 1.0

  /// Sleeps `seconds` in short steps; false as soon as `condition` fails.
  private static func pause(_ seconds: Double, while condition: () -> Bool) -> Bool {
    var remaining = seconds
    while remaining > 0 {
      let step = min(remaining, 0.05)
      usleep(UInt32(step * 1_000_000))
      remaining -= step
      if !condition() { return false }
    }
    return true
  }

  private struct Parts: Sendable {
    let inbox: Inbox
    let control: ControlHandle
  }
}

/// Interrupts a state from any thread (Ctrl-C, timeouts, `Runtime.interrupt`)
/// until the loop thread has closed it (finalizers that run while it
/// closes are interrupted too).
final class ControlHandle: Sendable {
  private struct Target: @unchecked Sendable {
    // Safe: the control block is reference-counted (retained here, released
    // in deinit) and outlives the state; lunar_interrupt is thread- and
    // signal-safe, and touches no state once the state stops running Lua.
    let control: OpaquePointer
    let timeoutMessage: UnsafePointer<CChar>?
  }

  private let target: Target
  private let alive = Mutex(true)

  init(L: OpaquePointer, timeoutMessage: UnsafePointer<CChar>?) {
    target = Target(control: lunar_retaincontrol(lunar_control(L)), timeoutMessage: timeoutMessage)
  }

  deinit { lunar_releasecontrol(target.control) }

  /// False once the state is closed.
  var isAlive: Bool { alive.withLock { $0 } }

  /// Tells the state's Lua code whether someone listens to the trace
  /// (`lunar_tracing`); on the loop thread, as the trace lives there.
  func setTracing(_ on: Bool) { lunar_settracing(target.control, on ? 1 : 0) }

  /// Interrupts the state's Lua code unless the state has been closed.
  func interrupt(reason: Int32) {
    alive.withLock { alive in
      guard alive else { return }
      let message = reason == LUNAR_INTERRUPT_TIMEOUT ? target.timeoutMessage : nil
      lunar_interrupt(target.control, reason, message)
    }
  }

  /// True once the loop thread has acted on the interrupt.
  var interruptTaken: Bool {
    alive.withLock { alive in !alive || lunar_interrupttaken(target.control) != 0 }
  }

  /// True while the state closes and runs its finalizers.
  var isClosing: Bool { lunar_isclosing(target.control) != 0 }

  /// Ends the process with status 1 and `lunar: <timeout message><suffix>`
  /// if the state is still open and (unless `evenIfTaken`) its interrupt
  /// still not taken.
  func endProcessIfStuck(suffix: String, evenIfTaken: Bool = false) {
    alive.withLock { alive in
      guard alive, evenIfTaken || lunar_interrupttaken(target.control) == 0 else { return }
      let message = target.timeoutMessage.map { String(cString: $0) } ?? "timeout"
      lunar_endprocess("lunar: " + message + suffix + "\n", 1)
    }
  }

  /// Called on the loop thread once the state is closed.
  func invalidate() { alive.withLock { $0 = false } }
}
