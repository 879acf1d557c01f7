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

  /// A step with these rules.
  public init(
    name: LuaString, needs: [Int] = [], queue: LuaString? = nil, continuesOnError: Bool = false,
    attempts: Int = 1, backoff: Double = 0, timeout: Double? = nil, uses: LuaString? = nil
  ) {
    self.name = name
    self.needs = needs
    self.queue = queue
    self.continuesOnError = continuesOnError
    self.attempts = attempts
    self.backoff = backoff
    self.timeout = timeout
    self.uses = uses
  }

  /// The steps workflow.lua describes in `described`, a list of
  /// `{ name, needs = { positions from 1 }, queue, continue_on_error, attempts, backoff, timeout, uses }`
  /// the Lua side has already checked; nil if it is not one.
  static func read(_ described: LuaTableReader) -> [WorkflowStep]? {
    let count = described.length
    var steps: [WorkflowStep] = []
    steps.reserveCapacity(count)
    do {
      for position in 0..<count {
        let step = try described.table(.integer(Int64(position + 1))) { step throws -> WorkflowStep? in
          guard let name = try step.string("name") else { return nil }
          var needs: [Int] = []
          try step.table("needs") { list in
            needs.reserveCapacity(list.length)
            for index in 0..<list.length {
              guard let need = try list.integer(.integer(Int64(index + 1))), need >= 1, need <= count else {
                throw LuaArgumentError.invalid(1, "malformed step description")
              }
              needs.append(Int(need) - 1)
            }
          }
          return WorkflowStep(
            name: name, needs: needs, queue: try step.string("queue"),
            continuesOnError: try step.boolean("continue_on_error") ?? false,
            attempts: Int(try step.integer("attempts") ?? 1), backoff: try step.number("backoff") ?? 0,
            timeout: try step.number("timeout"), uses: try step.string("uses"))
        }
        guard let step, let step else { return nil }
        steps.append(step)
      }
    } catch {
      return nil
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
