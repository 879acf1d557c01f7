#if canImport(Glibc)
import Glibc
#endif

/// A dedicated POSIX thread with a chosen stack size: the runtime's event
/// loop runs here, never on Swift's cooperative pool (docs/architecture.md,
/// "One thread per Lua state").
final class LoopThread: Sendable {
  private final class Body {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }

  private let handle: Handle

  private struct Handle: @unchecked Sendable {
    // Safe: a pthread_t is an opaque id; joining or detaching it from any
    // thread is allowed, and each LoopThread does exactly one of them.
    let thread: pthread_t
  }

  /// Starts `body` on a new thread with `stackSize` bytes of stack (Lua's
  /// nested loops and deep C calls need more than the default).
  init(stackSize: Int = 16 << 20, _ body: @escaping @Sendable () -> Void) {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setstacksize(&attributes, stackSize)
    defer { pthread_attr_destroy(&attributes) }
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, &attributes, { context in
      let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
      body.run()
      return nil
    }, context)
    precondition(status == 0, "cannot start a thread: error \(status)")
    handle = Handle(thread: thread)
  }

  /// Waits for the thread to end.
  func join() {
    pthread_join(handle.thread, nil)
  }

  /// Lets the thread end on its own.
  func detach() {
    pthread_detach(handle.thread)
  }
}
