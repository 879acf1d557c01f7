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

  /// A step with these rules.
  public init(
    name: LuaString, needs: [Int] = [], queue: LuaString? = nil, continuesOnError: Bool = false,
    attempts: Int = 1, backoff: Double = 0, timeout: Double? = nil, uses: LuaString? = nil, hasCondition: Bool = false
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
  }

  /// The steps workflow.lua describes in the table at `index` of `stack`:
  /// a list of `{ name, needs = { positions from 1 }, queue, continue_on_error, attempts, backoff, timeout, uses, condition }`
  /// the Lua side has already checked; nil if it is not one. Read with raw
  /// field access: a workflow may have tens of thousands of steps.
  static func read(_ stack: some LuaStack, at index: Int32) -> [WorkflowStep]? {
    let table = stack.absoluteIndex(index)
    guard stack.type(at: table) == .table else { return nil }
    let count = stack.rawLength(at: table)
    var steps: [WorkflowStep] = []
    steps.reserveCapacity(count)
    for position in 0..<count {
      guard stack.pushField(position + 1, of: table) == .table else {
        stack.pop()
        return nil
      }
      let step = stack.top
      defer { stack.top = step - 1 }
      func field(_ key: String) -> Int32 {
        stack.pushField(key, of: step)
        return stack.top
      }
      func string(_ key: String) -> LuaString? {
        defer { stack.pop() }
        return stack.type(at: field(key)) == .string ? stack.bytes(at: -1) : nil
      }
      func number(_ key: String) -> Double? {
        defer { stack.pop() }
        return stack.number(at: field(key))
      }
      func integer(_ key: String) -> Int64? {
        defer { stack.pop() }
        return stack.integer(at: field(key))
      }
      guard let name = string("name") else { return nil }
      var needs: [Int] = []
      let list = field("needs")
      if stack.type(at: list) == .table {
        let length = stack.rawLength(at: list)
        needs.reserveCapacity(length)
        for entry in 0..<length {
          stack.pushField(entry + 1, of: list)
          let need = stack.integer(at: -1)
          stack.pop()
          guard let need, need >= 1, need <= count else { return nil }
          needs.append(Int(need) - 1)
        }
      }
      stack.pop()
      let continues = stack.boolean(at: field("continue_on_error"))
      stack.pop()
      let hasCondition = stack.boolean(at: field("condition"))
      stack.pop()
      steps.append(
        WorkflowStep(
          name: name, needs: needs, queue: string("queue"), continuesOnError: continues,
          attempts: Int(clamping: integer("attempts") ?? 1), backoff: number("backoff") ?? 0, timeout: number("timeout"),
          uses: string("uses"), hasCondition: hasCondition))
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
