import CLua
import LuaKit

/// A step as the runner knows it, read once from the workflow's Lua
/// definition: its name's bytes, what it needs (by position), and the rules
/// for running it. Its Lua functions (`run`, `with`, `if`) stay in Lua.
public struct WorkflowStep: Sendable, Equatable {
  /// The step's name.
  public var name: LuaString
  /// The steps it needs, by declaration position (from 0).
  public var needs: [Int]
  /// The queue it runs in, in declaration order with the queue's other steps.
  public var queue: LuaString?
  /// A failure lets the steps that need it run, and does not fail the run.
  public var continuesOnError: Bool
  /// How many times it may run before it fails (`retry.attempts`).
  public var attempts: Int
  /// Seconds before the second attempt, doubling for each one after.
  public var backoff: Double
  /// Seconds an attempt may take.
  public var timeout: Double?
  /// The action it runs, if it names one (`uses`); part of its fingerprint.
  public var uses: LuaString?
  /// It has a condition (`if`): whether it starts is known only once it ran.
  public var hasCondition: Bool
  /// It fans out (`map`): one child per item runs its action, and its
  /// retry and timeout rules are each child's.
  public var fansOut: Bool
  /// The most children of a step that fans out running at once (nil: no limit but `jobs`).
  public var maxParallel: Int?

  /// A step with these rules.
  public init(
    name: LuaString, needs: [Int] = [], queue: LuaString? = nil, continuesOnError: Bool = false,
    attempts: Int = 1, backoff: Double = 0, timeout: Double? = nil, uses: LuaString? = nil, hasCondition: Bool = false,
    fansOut: Bool = false, maxParallel: Int? = nil
  ) {
    self.name = name
    self.needs = needs
    self.queue = queue
    self.continuesOnError = continuesOnError
    self.attempts = attempts
    self.backoff = backoff
    self.timeout = timeout
    self.uses = uses
    self.hasCondition = hasCondition
    self.fansOut = fansOut
    self.maxParallel = maxParallel
  }

  /// Child `index` (from 1) of this step, which fans out: `name[index]`,
  /// with this step's needs, action, queue (a durable one's jobs go there)
  /// and retry and timeout rules.
  func child(_ index: Int) -> WorkflowStep {
    var child = self
    child.name = LuaString(bytes: name.bytes + Array("[\(index)]".utf8))
    child.hasCondition = false
    child.fansOut = false
    child.maxParallel = nil
    return child
  }

  /// The steps workflow.lua describes in the table at `index` of `stack`:
  /// columns `{ count = n, name = {...}, needs = { { positions from 1 }, ... }, queue, continue_on_error,
  /// attempts, backoff, timeout, uses, condition, map, max_parallel }`, each a list by step position, which the Lua side has
  /// already checked; nil if it is not that. Read with raw access: a workflow may have tens of thousands of steps.
  static func read(_ stack: some LuaStack, at index: Int32) -> [WorkflowStep]? {
    let table = stack.absoluteIndex(index)
    guard stack.type(at: table) == .table else { return nil }
    let base = stack.top
    defer { stack.top = base }
    stack.pushField("count", of: table)
    guard let total = stack.integer(at: -1), total >= 0, total <= Int64(Int32.max) else { return nil }
    let count = Int(total)
    let keys = [
      "name", "needs", "queue", "continue_on_error", "attempts", "backoff", "timeout", "uses", "condition", "map",
      "max_parallel",
    ]
    var columns: [Int32] = []
    for key in keys {
      guard stack.pushField(key, of: table) == .table else { return nil }
      columns.append(stack.top)
    }
    let (names, needLists, queues, continues, attemptCounts, backoffs, timeouts, actions, conditions) =
      (columns[0], columns[1], columns[2], columns[3], columns[4], columns[5], columns[6], columns[7], columns[8])
    let (maps, parallelLimits) = (columns[9], columns[10])
    // Most columns have no entry for any step (no queues, no retries, ...):
    // those are not read step by step.
    let first = columns[0]
    let empty = columns.map { column in
      lua_pushnil(stack.L)
      guard lua_next(stack.L, column) != 0 else { return true }
      stack.pop(2)
      return false
    }
    /// Pushes column `column`'s entry for the step at `position` (nil from an
    /// empty column), runs `read` on it, and pops it.
    func entry<T>(_ column: Int32, _ position: Int, _ read: (Int32) -> T) -> T {
      if empty[Int(column - first)] { lua_pushnil(stack.L) } else { stack.pushField(position + 1, of: column) }
      defer { stack.pop() }
      return read(stack.top)
    }
    func string(_ column: Int32, _ position: Int) -> LuaString? {
      entry(column, position) { stack.type(at: $0) == .string ? stack.bytes(at: $0) : nil }
    }
    var steps: [WorkflowStep] = []
    steps.reserveCapacity(count)
    for position in 0..<count {
      guard let name = string(names, position) else { return nil }
      var needs: [Int] = []
      var malformed = false
      entry(needLists, position) { list in
        guard stack.type(at: list) == .table else { return }
        let length = stack.rawLength(at: list)
        needs.reserveCapacity(length)
        for item in 0..<length {
          stack.pushField(item + 1, of: list)
          let need = stack.integer(at: -1)
          stack.pop()
          guard let need, need >= 1, need <= count else { return malformed = true }
          needs.append(Int(need) - 1)
        }
      }
      guard !malformed else { return nil }
      steps.append(
        WorkflowStep(
          name: name, needs: needs, queue: string(queues, position),
          continuesOnError: entry(continues, position) { stack.boolean(at: $0) },
          attempts: Int(clamping: entry(attemptCounts, position) { stack.integer(at: $0) } ?? 1),
          backoff: entry(backoffs, position) { stack.number(at: $0) } ?? 0,
          timeout: entry(timeouts, position) { stack.number(at: $0) }, uses: string(actions, position),
          hasCondition: entry(conditions, position) { stack.boolean(at: $0) },
          fansOut: entry(maps, position) { stack.boolean(at: $0) },
          maxParallel: entry(parallelLimits, position) { stack.integer(at: $0) }.map { Int(clamping: $0) }))
    }
    return steps
  }
}

extension WorkflowStep {
  /// What the dispatcher needs of `steps`: needs, failure rules, and queues
  /// numbered by their first use.
  static func dispatcherSteps(_ steps: [WorkflowStep]) -> [StepDispatcher.Step] {
    var numbers: [LuaString: Int] = [:]
    return steps.map { step in
      var queue: Int?
      if let name = step.queue {
        queue = numbers[name] ?? numbers.count
        numbers[name] = queue
      }
      return StepDispatcher.Step(needs: step.needs, queue: queue, continuesOnError: step.continuesOnError)
    }
  }
}
