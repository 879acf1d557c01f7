import LuaKit
import LunarStore

/// `lunar.queue`: ordered actor queues from Lua.
///
/// ```lua
/// local queue = require "lunar.queue"
/// local q = queue.new("calc")                 -- or queue.new{ name = "calc", policy = "stop" }
/// local job = q:submit(function(x) return x * x end, 3)
/// print(job:await())                           --> 9
/// q:drain()
/// ```
///
/// With `durable = true` the queue lives in the run's store and its jobs
/// (named actions with value inputs) are run by `lunar worker` processes;
/// `queue.job(name, sequence)` finds a durable job's handle again.
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
      let task = scheduler.prepare(on: call.L, function: 2, arguments: call.argumentCount - 2, label: .text(queue.nextLabel()))
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

    let durableClass = Self.durableQueueClass(runtime)
    var module = LuaModule("lunar.queue")
    // queue.new(name) or queue.new{ name = ..., policy = "continue" | "stop", durable = true }
    module.function("new") { [unowned runtime] call in
      let (name, policy, durable) = try Self.arguments(call)
      if durable {
        do {
          try QueueLimits.check(name: name, "queue")
        } catch let error as StoreError {
          throw LuaArgumentError.invalid(1, "field 'name': \(error.message)")
        }
        let store = try runtime.component(DurableQueues.self).store(for: "durable queue \(name.quoted)")
        let queue = DurableQueue(name: name, policy: policy, store: store)
        call.push(queue, as: durableClass)
        return .one
      }
      let queue = LuaQueue(name: name, policy: policy, core: runtime)
      call.push(queue, as: queueClass)
      return .one
    }
    // queue.job(name, sequence) -> the handle of job `sequence` of durable queue `name`, or nil
    module.function("job") { [unowned runtime] call in
      let name = try call.bytes(1)
      let sequence = try call.integer(2)
      let store = try runtime.component(DurableQueues.self).store(for: "durable queue \(name.quoted)")
      let found: JobRecord?
      do throws(StoreError) {
        found = try store.job(queue: name, sequence: sequence)
      } catch {
        throw DurableQueueError("durable queue \(name.quoted): \(error.message)")
      }
      guard let found else {
        call.pushNil()
        return .one
      }
      let handle = DurableJobHandle(store: store, id: found.id, queue: found.queue, sequence: found.sequence)
      call.push(handle, as: runtime.component(DurableJobHandles.self).luaClass)
      return .one
    }
    return module
  }

  /// The class of durable queues: `submit(action, input)`, `name`,
  /// `policy`, `durable`.
  static func durableQueueClass(_ runtime: RuntimeCore) -> LuaClass<DurableQueue> {
    var durableClass = LuaClass<DurableQueue>(name: "lunar.durable_queue")
    durableClass.describe = { "durable queue \($0.name.quoted) in \($0.store.location)" }
    // q:submit("action.name", input) -> handle
    durableClass.method("submit") { [unowned runtime] queue, call in
      switch call.type(2) {
      case .string: break
      case .function:
        throw LuaArgumentError.invalid(
          2, "a durable queue runs a named action, not a function: closures cannot cross processes")
      default: throw LuaArgumentError.type(2, expected: "action name")
      }
      guard call.argumentCount <= 3 else {
        throw LuaArgumentError.invalid(4, "a durable job takes one input value (put several in a table)")
      }
      let input: LuaValue
      do {
        input = try call.value(3, name: "input")
      } catch let error as LuaConversionError {
        throw LuaArgumentError.invalid(3, DurableQueue.inputProblem(error))
      }
      let handle = try queue.submit(action: try call.bytes(2), input: input)
      call.push(handle, as: runtime.component(DurableJobHandles.self).luaClass)
      return .one
    }
    durableClass.property("name") { queue, call in
      call.push(queue.name)
      return .one
    }
    durableClass.property("policy") { queue, call in
      call.push(queue.policy.rawValue)
      return .one
    }
    durableClass.property("durable") { _, call in
      call.push(true)
      return .one
    }
    return durableClass
  }

  /// The name, policy and durability from `new`'s argument.
  static func arguments(_ call: LuaCall) throws -> (LuaString, QueuePolicy, Bool) {
    switch call.type(1) {
    case .string:
      return (try call.bytes(1), .continue, false)
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
      let durable: Bool
      switch options["durable"] {
      case .nil: durable = false
      case .boolean(let value): durable = value
      case let other: throw LuaArgumentError.invalid(1, "field 'durable' must be a boolean, got \(other.typeName)")
      }
      return (name, policy, durable)
    default:
      throw LuaArgumentError.type(1, expected: "string or table")
    }
  }
}
