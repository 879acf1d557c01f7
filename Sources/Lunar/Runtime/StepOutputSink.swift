import CLua
import CLuaShim
import LuaKit
import LunarStore

/// Hands what Lua's `print`, `io.write` and file writes put on standard
/// output or standard error to the step log of the task that wrote it
/// (`LuaTask.stepLog`), if any; what they show on the terminal is not
/// changed (see Output.c).
enum StepOutputSink {
  /// Replaces the writing functions of `state` and points their sink at
  /// `scheduler`. The scheduler is not retained: its runtime core owns it and
  /// closes the state (the last Lua code that can print) before releasing it.
  static func install(in state: LuaState, scheduler: Scheduler) throws(LuaError) {
    let base = state.top
    defer { state.top = base }
    guard lunar_installoutput(state.L) == LUA_OK else {
      throw LuaError(kind: .memory, message: "cannot install print: not enough memory")
    }
    lunar_setoutputsink(state.L, sink, Unmanaged.passUnretained(scheduler).toOpaque())
  }

  /// Called on the loop thread, inside the writing Lua function: it only
  /// copies bytes, never calls into Lua.
  private static let sink: lunar_OutputSink = { context, stream, bytes, size in
    guard let context, let bytes, let stream = StepLogStream(rawValue: Int(stream)) else { return }
    let scheduler = Unmanaged<Scheduler>.fromOpaque(context).takeUnretainedValue()
    guard let log = scheduler.currentTask?.stepLog else { return }
    log.append(UnsafeRawBufferPointer(start: bytes, count: size), to: stream)
  }
}
