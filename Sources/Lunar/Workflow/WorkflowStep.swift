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

  /// A step described by workflow.lua's table
  /// `{ name, needs = { positions from 1 }, queue, continue_on_error, attempts, backoff, timeout, uses }`,
  /// which the Lua side has already checked; nil if it is not one.
  init?(describedBy value: LuaValue, stepCount: Int) {
    guard let table = value.tableValue, let name = table["name"].luaStringValue else { return nil }
    var needs: [Int] = []
    for need in table["needs"].tableValue?.array ?? [] {
      guard case .integer(let position) = need, position >= 1, position <= stepCount else { return nil }
      needs.append(Int(position) - 1)
    }
    self.init(
      name: name, needs: needs, queue: table["queue"].luaStringValue,
      continuesOnError: table["continue_on_error"] == .boolean(true),
      attempts: table["attempts"].integerValue.map { Int($0) } ?? 1,
      backoff: table["backoff"].numberValue ?? 0,
      timeout: table["timeout"].numberValue, uses: table["uses"].luaStringValue)
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
