import LuaKit

/// `lunar.queue`: ordered actor queues from Lua.
///
/// ```lua
/// local queue = require "lunar.queue"
/// local q = queue.new("calc")                 -- or queue.new{ name = "calc", policy = "stop" }
/// local job = q:submit(function(x) return x * x end, 3)
/// print(job:await())                           --> 9
/// q:drain()
/// ```
struct QueueModulePlugin: ModulePlugin {
  let name = "lunar.queue"

  func makeModule(_ runtime: RuntimeCore) throws -> LuaModule {
    let scheduler = runtime.scheduler
    let taskClass = runtime.taskClass
    var queueClass = LuaClass<LuaQueue>(name: "lunar.queue")
    queueClass.describe = { "queue \($0.name) (\($0.length) job\($0.length == 1 ? "" : "s"))" }

    // q:submit(fn, ...) -> task handle
    queueClass.method("submit") { [unowned scheduler] queue, call in
      try call.check(2, is: .function)
      let task = scheduler.prepare(on: call.L, function: 2, arguments: call.argumentCount - 2, label: queue.nextLabel())
      queue.submit(task) { [unowned scheduler] in scheduler.start(task) }
      call.push(task, as: taskClass)
      return .one
    }

    // q:drain(): waits until every job submitted so far has finished
    queueClass.method("drain") { [unowned scheduler] queue, call in
      guard let last = queue.lastJob, !last.isFinished else { return .none }
      let wait = scheduler.completionWait(of: last, appendingTraceback: false)
      wait.protected = true
      let outcome = scheduler.suspend(call, on: wait)
      // drain reports nothing: the jobs' own handles hold their results.
      return outcome.status >= 0 ? .none : outcome
    }

    queueClass.method("length") { queue, call in
      call.push(queue.length)
      return .one
    }

    // q:running() -> the running job's handle, or nil
    queueClass.method("running") { queue, call in
      if let running = queue.running {
        call.push(running.task, as: taskClass)
      } else {
        call.pushNil()
      }
      return .one
    }

    queueClass.property("name") { queue, call in
      call.push(queue.name)
      return .one
    }

    queueClass.property("policy") { queue, call in
      call.push(queue.policy.rawValue)
      return .one
    }

    var module = LuaModule("lunar.queue")
    // queue.new(name) or queue.new{ name = ..., policy = "continue" | "stop" }
    module.function("new") { [unowned runtime] call in
      let (name, policy) = try Self.arguments(call)
      let queue = LuaQueue(name: name, policy: policy, core: runtime)
      call.push(queue, as: queueClass)
      return .one
    }
    return module
  }

  /// The name and policy from `new`'s argument.
  static func arguments(_ call: LuaCall) throws -> (LuaString, QueuePolicy) {
    switch call.type(1) {
    case .string:
      return (try call.bytes(1), .continue)
    case .table:
      let options = try call.value(1, name: "options")
      guard case .string(let name) = options["name"] else {
        throw LuaArgumentError.invalid(1, "field 'name' must be a string, got \(options["name"].typeName)")
      }
      var policy = QueuePolicy.continue
      switch options["policy"] {
      case .nil: break
      case .string(let value):
        guard let chosen = QueuePolicy.allCases.first(where: { LuaString($0.rawValue) == value }) else {
          throw LuaArgumentError.invalid(1, "field 'policy' must be 'continue' or 'stop', got '\(value)'")
        }
        policy = chosen
      case let other:
        throw LuaArgumentError.invalid(1, "field 'policy' must be 'continue' or 'stop', got \(other.typeName)")
      }
      return (name, policy)
    default:
      throw LuaArgumentError.type(1, expected: "string or table")
    }
  }
}
