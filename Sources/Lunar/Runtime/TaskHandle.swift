import LuaKit

/// The Lua face of a `LuaTask`: the handle `lunar.spawn` and queue
/// submissions return, with `await`, `result`, `cancel` and `status`.
enum TaskHandle {
  static func makeClass(scheduler: Scheduler) -> LuaClass<LuaTask> {
    var handle = LuaClass<LuaTask>(name: "lunar.task")
    handle.describe = { "\($0.label) (\($0.status.rawValue))" }

    handle.method("await") { [unowned scheduler] task, call in
      task.observed = true
      if task.isFinished {
        return scheduler.deliver(task.waitResult(appendingTraceback: true), on: call.L)
      }
      if task === scheduler.currentTask {
        call.push("\(task.label) cannot await itself")
        return .error
      }
      return scheduler.suspend(call, on: scheduler.completionWait(of: task, appendingTraceback: true))
    }

    handle.method("result") { [unowned scheduler] task, call in
      task.observed = true
      if task.isFinished {
        return scheduler.deliver(task.protectedResult(), on: call.L)
      }
      if task === scheduler.currentTask {
        call.push("\(task.label) cannot await itself")
        return .error
      }
      let wait = scheduler.completionWait(of: task, appendingTraceback: false)
      wait.protected = true
      return scheduler.suspend(call, on: wait)
    }

    handle.method("cancel") { [unowned scheduler] task, call in
      call.push(scheduler.cancel(task))
      return .one
    }

    handle.method("status") { task, call in
      // Seeing "failed" is seeing the failure.
      if task.isFinished { task.observed = true }
      call.push(task.status.rawValue)
      return .one
    }

    handle.property("id") { task, call in
      call.push(task.id)
      return .one
    }

    handle.property("traceback") { task, call in
      if let traceback = task.traceback { call.push(traceback) } else { call.pushNil() }
      return .one
    }

    handle.property("label") { task, call in
      call.push(task.label)
      return .one
    }
    return handle
  }
}

extension Scheduler {
  /// A wait completed when `task` finishes, with its results or error.
  func completionWait(of task: LuaTask, appendingTraceback: Bool) -> Wait {
    let wait = Wait(subject: task.label)
    wait.onCancel = { [weak task, weak wait] in
      task?.waiters.removeAll { $0 === wait }
    }
    task.waiters.append(wait)
    return wait
  }
}

/// The userdata class of a runtime's task handles, made on first use.
final class TaskHandles: RuntimeComponent {
  /// The class, bound to the runtime's scheduler.
  let luaClass: LuaClass<LuaTask>

  init(core: RuntimeCore) {
    luaClass = TaskHandle.makeClass(scheduler: core.scheduler)
  }
}

extension RuntimeCore {
  /// The userdata class of task handles (what `lunar.spawn` and queues return).
  public var taskClass: LuaClass<LuaTask> { component(TaskHandles.self).luaClass }
}
