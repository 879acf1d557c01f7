import CLuaShim
import LuaKit

#if canImport(Glibc)
import Glibc
#endif

/// The built-in `lunar` module: tasks, sleeping, the clock, and waiting for
/// several tasks at once.
struct LunarModulePlugin: LunarPlugin {
  let name = "lunar"

  func install(in runtime: RuntimeCore) throws {
    let scheduler = runtime.scheduler
    let clock = runtime.clock
    var module = LuaModule("lunar")
    module.value("version", .string(LuaString(Lunar.version)))

    // lunar.spawn(fn, ...) -> task
    module.function("spawn") { [unowned runtime] call in
      try call.check(1, is: .function)
      let task = runtime.scheduler.spawn(on: call.L, function: 1, arguments: call.argumentCount - 1)
      call.push(task, as: runtime.taskClass)
      return .one
    }

    // lunar.sleep(seconds): any non-negative number; one whose deadline is
    // past the clock's horizon (math.huge too) waits until something
    // else ends the wait, and is a deadlock if nothing can.
    module.function("sleep") { [unowned scheduler, unowned clock] call in
      let seconds = try call.number(1)
      guard seconds >= 0 else {
        let given = (try? call.value(1)) ?? .number(seconds)
        throw LuaArgumentError.invalid(1, "non-negative number expected, got \(given)")
      }
      let wait = Wait(subject: seconds.isFinite ? "sleep \(LuaValue.number(seconds).formattedSeconds)s" : "sleep forever")
      let timer = scheduler.timers.schedule(at: clock.deadline(after: seconds), completing: wait) { [unowned scheduler, weak wait] in
        guard let wait else { return }
        if scheduler.trace.isEnabled { scheduler.trace.emit("timer.fired", [.init("after", .number(seconds))]) }
        scheduler.complete(wait, .nothing)
      }
      wait.onCancel = { [unowned scheduler] in scheduler.timers.cancel(timer) }
      if scheduler.trace.isEnabled { scheduler.trace.emit("timer.set", [.init("after", .number(seconds))]) }
      return scheduler.suspend(call, on: wait)
    }

    // lunar.cwd() -> the current folder's path, its exact bytes, of any
    // length; or nil, the reason and errno (as io.open fails) when the
    // system cannot tell (the folder was removed: "No such file or directory").
    module.function("cwd") { call in
      guard let path = getcwd(nil, 0) else {
        let code = errno
        call.pushNil()
        call.push(String(cString: strerror(code)))
        call.push(Int(code))
        return .values(3)
      }
      defer { free(path) }
      call.push(LuaString(bytes: Array(UnsafeRawBufferPointer(start: path, count: strlen(path)))))
      return .one
    }

    // lunar.now() -> seconds since the epoch on the runtime clock
    module.function("now") { [unowned clock] call in
      call.push(clock.now)
      return .one
    }

    // lunar.await_all{t1, t2, ...} -> first result of each, in order
    module.function("await_all") { [unowned scheduler] call in
      let tasks = try Self.tasks(call)
      if let failed = tasks.first(where: { $0.status == .failed || $0.status == .cancelled }) {
        return scheduler.deliver(failed.waitResult(appendingTraceback: true), on: call.L)
      }
      let wait = Wait(subject: "all of \(tasks.map(\.label).joined(separator: ", "))")
      let group = GroupWait(tasks: tasks, wait: wait, scheduler: scheduler, mode: .all)
      group.start()
      return scheduler.suspend(call, on: wait)
    }

    // lunar.await_any{t1, t2, ...} -> index of the first to finish, its results
    module.function("await_any") { [unowned scheduler] call in
      let tasks = try Self.tasks(call)
      guard !tasks.isEmpty else { throw LuaArgumentError.invalid(1, "at least one task expected") }
      let wait = Wait(subject: "any of \(tasks.map(\.label).joined(separator: ", "))")
      let group = GroupWait(tasks: tasks, wait: wait, scheduler: scheduler, mode: .any)
      group.start()
      return scheduler.suspend(call, on: wait)
    }

    try runtime.install(module)
    let state = runtime.state
    state.getGlobal("lunar")
    // Sub-modules load on first use, from C: no Lua chunk to compile at
    // start-up (docs/performance.md, "Start-up").
    lunar_installsubmodules(state.L, -1)
    // lunar.cancelled: the error value of a cancelled task.
    scheduler.pushCancelled(on: state.L)
    state.setField("cancelled", of: -2)
    state.pop()
  }

  /// Argument 1 as an array of task handles.
  static func tasks(_ call: LuaCall) throws -> [LuaTask] {
    try call.check(1, is: .table)
    var tasks: [LuaTask] = []
    for position in 1..<(call.rawLength(at: 1) + 1) {
      call.pushField(position, of: 1)
      defer { call.pop() }
      guard let task = call.object(at: -1, of: LuaTask.self) else {
        throw LuaArgumentError.invalid(1, "task expected at index \(position), got \(call.typeName(at: -1))")
      }
      task.observed = true
      tasks.append(task)
    }
    return tasks
  }
}

/// Waits for all or any of several tasks.
final class GroupWait {
  enum Mode { case all, any }

  let tasks: [LuaTask]
  let wait: Wait
  unowned let scheduler: Scheduler
  let mode: Mode
  private var remaining: Int
  private var memberWaits: [(task: LuaTask, wait: Wait)] = []

  init(tasks: [LuaTask], wait: Wait, scheduler: Scheduler, mode: Mode) {
    self.tasks = tasks
    self.wait = wait
    self.scheduler = scheduler
    self.mode = mode
    remaining = tasks.count
  }

  func start() {
    if let index = tasks.firstIndex(where: \.isFinished), mode == .any {
      finishAny(index)
      return
    }
    if mode == .all && tasks.allSatisfy(\.isFinished) {
      finishAll()
      return
    }
    for (index, task) in tasks.enumerated() where !task.isFinished {
      let member = Wait(subject: task.label)
      member.onComplete = { [self] _ in self.memberFinished(index) }
      task.waiters.append(member)
      memberWaits.append((task, member))
    }
    wait.onCancel = { [self] in self.detach() }
    remaining = tasks.filter { !$0.isFinished }.count
  }

  private func memberFinished(_ index: Int) {
    guard !wait.isComplete else { return }
    let task = tasks[index]
    switch mode {
    case .any:
      finishAny(index)
    case .all:
      if task.status != .done {
        detach()
        scheduler.complete(wait, task.waitResult(appendingTraceback: true))
        return
      }
      remaining -= 1
      if remaining == 0 { finishAll() }
    }
  }

  private func finishAny(_ index: Int) {
    detach()
    let task = tasks[index]
    if task.status != .done {
      scheduler.complete(wait, task.waitResult(appendingTraceback: true))
      return
    }
    scheduler.complete(
      wait,
      .values { L in
        LuaThread(L).push(index + 1)
        return task.pushOutcome(on: L) + 1
      })
  }

  private func finishAll() {
    detach()
    let tasks = self.tasks
    scheduler.complete(
      wait,
      .values { L in
        let thread = LuaThread(L)
        guard thread.ensureStack(Int32(tasks.count) + 2) else { return 0 }
        for task in tasks {
          let count = task.pushOutcome(on: L)
          if count == 0 {
            thread.pushNil()
          } else if count > 1 {
            thread.pop(count - 1)  // keep the first result only
          }
        }
        return Int32(tasks.count)
      })
  }

  private func detach() {
    for (task, member) in memberWaits {
      task.waiters.removeAll { $0 === member }
    }
    memberWaits.removeAll()
  }
}

/// Lunar's version.
public enum Lunar {
  /// The version `lunar version` prints.
  public static let version = "0.1.0"
}
