import CLua
import CLuaShim
import LuaKit
import LunarStore

/// `lunar.workflow`: the declarative layer (written in Lua, `workflow.lua`)
/// and the host functions it needs: the planner, the runner (`WorkflowRuns`)
/// and the step graph's drawing; and what happens to a workflow a script
/// returns (`ReturnedWorkflow`).
public struct WorkflowPlugin: LunarPlugin {
  public let name = "lunar.workflow"
  /// How returned workflows run, which run a resume continues, and progress.
  public let options: WorkflowRunOptions

  /// The plugin with `options` (the defaults: plain progress, every step).
  public init(options: WorkflowRunOptions = WorkflowRunOptions()) {
    self.options = options
  }

  /// Installs `lunar.workflow` and takes the workflow a main chunk returns.
  public func install(in runtime: RuntimeCore) throws {
    let options = options
    let runs = WorkflowRuns(runtime: runtime, options: options)
    let sandboxed = runtime.configuration.sandbox
    // A workflow the main chunk returns is run (or drawn) here. The
    // drawings are made with the runtime, not when its first script ends: a
    // runtime reused for script after script keeps what it had when set up.
    let drawings = runtime.component(Drawings.self)
    runtime.scripts.handleResults { (results) throws(LuaError) in
      try ReturnedWorkflow.handle(results, options: options, drawings: drawings)
    }
    try runtime.installLuaModule("lunar.workflow", source: PackageResources.workflow_lua, host: [
      ("may_write", Self.mayWrite(sandboxed: sandboxed, resumeStore: options.resumeStore)),
      ("plan", Self.plan),
      ("begin", Self.begin(runs)),
      ("run", Self.run(runs, runtime: runtime)),
      ("prepare", Self.prepare(runs)),
      ("accept", Self.accept(runs)),
      ("fan_out", Self.fanOut(runs)),
      ("children", Self.children(runs, runtime: runtime)),
      ("unfinished_job", Self.unfinishedJob(runs, runtime: runtime)),
      ("submit_job", Self.submitJob(runs, runtime: runtime)),
      ("wait_deadline", Self.waitDeadline(runs)),
      ("signal", Self.signal(runs)),
      ("waiting", Self.waiting(runs)),
      ("virtual_clock", Self.virtualClock(runtime)),
      ("graph", Self.graph),
      ("file_digest", Self.fileDigest),
      ("bytecode", { call in
        call.push(LuaString(bytes: StepBytecode.withoutLines(try call.bytes(1).bytes)))
        return .one
      }),
      ("version", { call in
        call.push(Lunar.version)
        return .one
      }),
    ], cHost: [("caller", lunar_caller), ("step_definer", lunar_stepdefiner)])
  }

  /// may_write(path) -> whether a script may have Lunar write `path`:
  /// always, except under --sandbox, where only the command line's
  /// --journal is written.
  private static func mayWrite(sandboxed: Bool, resumeStore: String?) -> LuaFunction {
    { call in
      let path = try call.bytes(1)
      call.push(!sandboxed || resumeStore.map { LuaString($0) == path } == true)
      return .one
    }
  }

  /// plan(steps, only, from) -> the parallel groups of the selected steps,
  /// as lists of positions from 1 (steps described as for `begin`)
  private static func plan(_ call: LuaCall) throws -> LuaReturn {
    guard let steps = WorkflowStep.read(call, at: 1) else {
      throw LuaArgumentError.invalid(1, "step descriptions expected")
    }
    let needs = steps.map(\.needs)
    var selection = WorkflowPlan.Selection.all
    if let only = try call.value(2).integerValue { selection = .only(Int(only) - 1) }
    if let from = try call.value(3).integerValue { selection = .from(Int(from) - 1) }
    let groups = WorkflowPlan(needs: needs, selection: selection).groups
    try call.push(.table(LuaTable(array: groups.map { .table(LuaTable(array: $0.map { .integer(Int64($0 + 1)) })) })))
    return .one
  }

  /// begin(name, steps, options) -> run, the earlier run's outputs of the
  /// steps before `--from` by name, whether the run is recorded (the body
  /// then gives every output), and the queues of the worker processes that
  /// run its steps (for `options._processes` under `--processes`; else
  /// nil); or nil and why the run cannot begin
  private static func begin(_ runs: WorkflowRuns) -> LuaFunction {
    { call in
      let name = try call.bytes(1)
      guard let steps = WorkflowStep.read(call, at: 2) else {
        throw LuaArgumentError.invalid(2, "step descriptions expected")
      }
      let options = try call.value(3, name: "options")
      let id: Int
      let earlier: LuaTable
      do {
        (id, earlier) = try runs.begin(workflow: name, steps: steps, options: options)
      } catch let error as WorkflowRuns.BeginError {
        call.pushNil()
        call.push(error.description)
        return .values(2)
      }
      call.push(id)
      try call.push(.table(earlier))
      call.push(runs.records(id))
      let queues = runs.processQueues(options, recorded: runs.records(id))
      if !queues.isEmpty {
        try call.push(.table(LuaTable(array: queues.map { .string($0) })))
      } else {
        call.pushNil()
      }
      return .values(4)
    }
  }

  /// run(run, body, record, launcher [, codes [, per_step]]) -> ok, failed,
  /// statuses, attempts, reasons: runs the steps, `body(position, attempt,
  /// counted)` for each attempt, and waits for the end; `codes` are the
  /// steps' code texts by position, for a recorded run; with `per_step`
  /// false, only `ok` and `failed` come back
  private static func run(_ runs: WorkflowRuns, runtime: RuntimeCore) -> LuaFunction {
    { [unowned runtime] call in
      let id = Int(try call.integer(1))
      try call.check(2, is: .function)
      try call.check(3, is: .function)
      try call.check(4, is: .thread)
      func reference(_ n: Int32) -> LuaReference {
        call.pushValue(at: n)
        return LuaReference(popping: call.L, in: runtime.state)
      }
      guard let thread = call.thread(at: 4) else { throw LuaArgumentError.invalid(4, "thread expected") }
      let codes = try call.value(5, name: "codes").tableValue?.array.compactMap(\.luaStringValue) ?? []
      let run = try runs.start(
        id, body: reference(2), record: reference(3), launcher: reference(4), launcherThread: thread, codes: codes,
        returnsStepResults: call.isNil(6) || call.boolean(6))
      return runtime.scheduler.suspend(call, on: run.wait)
    }
  }

  /// prepare(run, position, input) -> true and the earlier output to reuse,
  /// or false: the step starts
  private static func prepare(_ runs: WorkflowRuns) -> LuaFunction {
    { call in
      let run = try runs.run(Int(try call.integer(1)))
      let step = Int(try call.integer(2)) - 1
      let input = try call.value(3, name: "with")
      guard let output = try run.prepare(step, input: input) else {
        call.push(false)
        return .one
      }
      call.push(true)
      try call.push(output.first ?? .nil)
      return .values(2)
    }
  }

  /// accept(run, position, ...) -> nothing, or nil and why the output
  /// cannot be kept (`output.self: a table that contains itself ...`)
  private static func accept(_ runs: WorkflowRuns) -> LuaFunction {
    { call in
      let run = try runs.run(Int(try call.integer(1)))
      let step = Int(try call.integer(2)) - 1
      let count = call.argumentCount - 2
      var output: [LuaValue] = []
      output.reserveCapacity(Int(count))
      do {
        var n: Int32 = 1
        while n <= count {
          output.append(try call.value(n + 2, name: count == 1 ? "output" : "output[\(n)]"))
          n += 1
        }
      } catch let error as LuaConversionError {
        call.pushNil()
        call.push(error.description)
        return .values(2)
      }
      run.accept(step, output: output)
      return .none
    }
  }

  /// fan_out(run, position, count) -> the position of the first of the
  /// `count` children step `position` fans out into
  private static func fanOut(_ runs: WorkflowRuns) -> LuaFunction {
    { call in
      let run = try runs.run(Int(try call.integer(1)))
      let position = Int(try call.integer(2)) - 1
      let count = try call.integer(3)
      guard run.steps.indices.contains(position), run.steps[position].fansOut, count >= 0, count <= Int64(Int32.max)
      else { throw LuaArgumentError.invalid(3, "a count of children expected") }
      call.push(run.fanOut(position, count: Int(count)) + 1)
      return .one
    }
  }

  /// children(run, position) -> nothing, once the children of step
  /// `position` have all ended; raises if any failed
  private static func children(_ runs: WorkflowRuns, runtime: RuntimeCore) -> LuaFunction {
    { [unowned runtime] call in
      let run = try runs.run(Int(try call.integer(1)))
      guard let wait = run.children(of: Int(try call.integer(2)) - 1) else {
        throw LuaArgumentError.invalid(2, "a step that fanned out expected")
      }
      return runtime.scheduler.suspend(call, on: wait)
    }
  }

  /// wait_deadline(run, position, deadline) -> the deadline sleep step
  /// `position` waits for: the resumed run's if it recorded one, else `deadline`
  private static func waitDeadline(_ runs: WorkflowRuns) -> LuaFunction {
    { call in
      let run = try runs.run(Int(try call.integer(1)))
      let position = Int(try call.integer(2)) - 1
      let proposed = try call.number(3)
      do throws(StoreError) {
        call.push(try run.waitDeadline(position, proposed: proposed))
      } catch {
        throw WaitError("step \"\(run.steps[position].name.lossyString)\": its deadline could not be recorded: \(error.message)")
      }
      return .one
    }
  }

  /// signal(run, position, name) -> true and the value of signal `name`
  /// sent to the run, or false
  private static func signal(_ runs: WorkflowRuns) -> LuaFunction {
    { call in
      let run = try runs.run(Int(try call.integer(1)))
      let position = Int(try call.integer(2)) - 1
      let name = try call.bytes(3)
      let sent: LuaValue??
      do throws(StoreError) {
        sent = try run.signal(name, for: position)
      } catch {
        throw WaitError("step \"\(run.steps[position].name.lossyString)\": its signal could not be read: \(error.message)")
      }
      guard let value = sent else {
        call.push(false)
        return .one
      }
      call.push(true)
      try call.push(value ?? .nil)
      return .values(2)
    }
  }

  /// waiting(run, position, deadline) says step `position` waits until
  /// `deadline` (false: for a signal only, nil: no more): a run a worker
  /// handed over parks when all it does is wait
  private static func waiting(_ runs: WorkflowRuns) -> LuaFunction {
    { call in
      let run = try runs.run(Int(try call.integer(1)))
      let position = Int(try call.integer(2)) - 1
      switch call.type(3) {
      case .nil, .none: run.endWait(position)
      case .boolean: run.beginWait(position, until: nil)
      default: run.beginWait(position, until: try call.number(3))
      }
      return .none
    }
  }

  /// virtual_clock() -> true under --clock virtual, where a wait for a
  /// signal looks at its start and at its deadline only
  private static func virtualClock(_ runtime: RuntimeCore) -> LuaFunction {
    { [unowned runtime] call in
      call.push(runtime.clock.isVirtual)
      return .one
    }
  }

  /// unfinished_job(run, position) -> the handle of the durable job the
  /// run this one resumes left the step waiting for, or nil (submit one)
  private static func unfinishedJob(_ runs: WorkflowRuns, runtime: RuntimeCore) -> LuaFunction {
    { [unowned runtime] call in
      let run = try runs.run(Int(try call.integer(1)))
      let position = Int(try call.integer(2)) - 1
      let step = run.steps[position]
      let what = "step \"\(step.name.lossyString)\""
      let store = try runtime.component(DurableQueues.self).store(for: what)
      do throws(StoreError) {
        // Only the job this step submitted: the same queue and action.
        // A job that failed or was cancelled is not waited for again: the
        // step's attempt submits a new one.
        guard let left = run.unfinishedJob(position), let job = try store.job(left.job), job.queue == step.queue,
          job.action == step.uses, job.status != .failed, job.status != .cancelled
        else {
          call.pushNil()
          return .one
        }
        let handle = DurableJobHandle(store: store, id: job.id, queue: job.queue, sequence: job.sequence)
        call.push(handle, as: runtime.component(DurableJobHandles.self).luaClass)
        return .one
      } catch {
        throw DurableQueueError("\(what): its durable job from the resumed run: \(error.message)")
      }
    }
  }

  /// submit_job(run, position, attempt, input, counted [, queue, action]) -> the handle
  /// of a new job (whose action sees `ctx.attempt` counted on from `counted`, the step's
  /// attempt) of the step's durable queue and action, or of `queue` running `action`
  /// (a `--processes` worker's), recorded as the attempt's before any Lua
  /// code runs again: an interrupt cannot fall between the two, so a
  /// resumed run always finds the job its interrupted run submitted.
  private static func submitJob(_ runs: WorkflowRuns, runtime: RuntimeCore) -> LuaFunction {
    { [unowned runtime] call in
      let run = try runs.run(Int(try call.integer(1)))
      let position = Int(try call.integer(2)) - 1
      let attempt = Int(try call.integer(3))
      let step = run.steps[position]
      let what = "step \"\(step.name.lossyString)\""
      guard let queueName = call.isNil(6) ? step.queue : try call.bytes(6),
        let action = call.isNil(7) ? step.uses : try call.bytes(7)
      else {
        throw DurableQueueError("\(what): a durable step needs a queue and an action")
      }
      let input: LuaValue
      do {
        input = try call.value(4, name: "input")
      } catch let error as LuaConversionError {
        throw DurableQueueError("\(what): \(DurableQueue.inputProblem(error))")
      }
      let store = try runtime.component(DurableQueues.self).store(for: what)
      let counted = call.isNil(5) ? attempt : Int(try call.integer(5))
      let handle = try DurableQueue(name: queueName, policy: .continue, store: store).submit(
        action: action, input: input, firstAttempt: counted)
      do throws(StoreError) {
        try run.submitted(position, attempt: attempt, job: handle.id)
      } catch {
        throw DurableQueueError("\(what): its durable job \(handle.id) could not be recorded: \(error.message)")
      }
      call.push(handle, as: runtime.component(DurableJobHandles.self).luaClass)
      return .one
    }
  }

  /// file_digest(path) -> the SHA-256 of the file's bytes (32 bytes), or
  /// nil if it cannot be read: a module's part of a step's code
  private static func fileDigest(_ call: LuaCall) throws -> LuaReturn {
    let path = try call.bytes(1)
    // A path that is not UTF-8 cannot be opened by name here: it counts as unreadable.
    guard let text = String(validating: path.bytes, as: UTF8.self), let bytes = try? BoundedFileReader.read(text) else {
      call.pushNil()
      return .one
    }
    call.push(LuaString(bytes: SHA256.hash(bytes)))
    return .one
  }

  /// graph(name, steps, format) -> the drawing of a workflow whose steps are
  /// { name =, uses =, needs = { ... } }, in "mermaid" or "dot"
  private static func graph(_ call: LuaCall) throws -> LuaReturn {
    let name = try call.bytes(1)
    let steps = try call.value(2, name: "steps").tableValue?.array ?? []
    let format = try call.bytes(3)
    let graph = WorkflowGraph(
      name: name,
      steps: steps.map { step in
        WorkflowGraph.Step(
          name: step["name"].luaStringValue ?? "", uses: step["uses"].luaStringValue,
          needs: step["needs"].tableValue?.array.compactMap(\.luaStringValue) ?? [],
          fansOut: step["map"].isTruthy)
      })
    call.push(graph.render(as: GraphFormat.allCases.first { LuaString($0.rawValue) == format } ?? .mermaid))
    return .one
  }
}
