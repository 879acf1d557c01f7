/// Decides when each selected step of a run starts or is skipped, from what
/// has finished: the count of needs each step still waits for, the `jobs`
/// limit, and each queue's declaration order. Pure (no Lua, no clock), so
/// every rule is tested alone; each step costs constant work plus its edges.
///
/// A step runs once every selected step it needs has finished and none of
/// them failed (unless that one continues on error) or was skipped. Steps
/// sharing a queue run one at a time in declaration order: each waits for
/// the queue's previous selected step to finish, however that ended.
///
/// A running step may fan out (`map`): it gives up its job slot and its
/// children, steps added at the end, run like any other, at most its
/// `max_parallel` at once; the step finishes after the last of them.
public struct StepDispatcher: Sendable {
  /// What the dispatcher knows of a step.
  public struct Step: Sendable, Equatable {
    /// The steps it needs, by position.
    public var needs: [Int]
    /// The queue it runs in, if any (any number naming the queue).
    public var queue: Int?
    /// A failure of this step does not stop the steps that need it.
    public var continuesOnError: Bool

    /// A step with these needs, queue and failure rule.
    public init(needs: [Int] = [], queue: Int? = nil, continuesOnError: Bool = false) {
      self.needs = needs
      self.queue = queue
      self.continuesOnError = continuesOnError
    }
  }

  /// How a step ended.
  public enum Outcome: Sendable, Equatable {
    case succeeded, reused, failed, skipped
  }

  /// What to do next.
  public enum Decision: Sendable, Equatable {
    /// Start the step at this position.
    case start(Int)
    /// Skip it without running it, because the step at `because` failed or
    /// was skipped.
    case skip(Int, because: Int)
  }

  private var steps: [Step]
  private var dependents: [[Int]]
  /// The selected step after each one in its queue, by position.
  private var nextInQueue: [Int?]
  /// How many selected needs (and queue predecessors) each step still waits for.
  private var waitingOn: [Int]
  /// The first selected need that stops a step, if one did.
  private var blockedBy: [Int?]
  private var ready: [Int] = []
  private var readyHead = 0
  private let jobs: Int
  /// Steps started and not finished.
  public private(set) var running = 0
  /// Selected steps not finished yet.
  public private(set) var unfinished: Int
  /// Steps that fanned out: they hold no job slot while their children run.
  private var fannedOut: Set<Int> = []
  /// The children of each step that fanned out not released yet: the next
  /// one and the end of their positions.
  private var unreleasedChildren: [Int: (next: Int, end: Int)] = [:]
  /// The step each child belongs to, by the child's position past the declared steps.
  private var parents: [Int] = []
  private let declaredCount: Int

  /// A dispatcher for `steps` (by declaration position) of which `plan`
  /// selects some, running at most `jobs` at once.
  public init(steps: [Step], plan: WorkflowPlan, jobs: Int) {
    self.steps = steps
    declaredCount = steps.count
    dependents = plan.dependents
    self.jobs = max(1, jobs)
    var waitingOn = [Int](repeating: 0, count: steps.count)
    var nextInQueue = [Int?](repeating: nil, count: steps.count)
    var lastInQueue: [Int: Int] = [:]
    var unfinished = 0
    for (position, step) in steps.enumerated() where plan.selected[position] {
      unfinished += 1
      waitingOn[position] = step.needs.reduce(0) { $0 + (plan.selected[$1] ? 1 : 0) }
      if let queue = step.queue {
        if let previous = lastInQueue[queue] {
          nextInQueue[previous] = position
          waitingOn[position] += 1
        }
        lastInQueue[queue] = position
      }
    }
    self.waitingOn = waitingOn
    self.nextInQueue = nextInQueue
    self.unfinished = unfinished
    blockedBy = [Int?](repeating: nil, count: steps.count)
    for position in steps.indices where plan.selected[position] && waitingOn[position] == 0 {
      ready.append(position)
    }
    selected = plan.selected
  }

  private var selected: [Bool]

  /// Adds `count` children of the running step `parent`, at the positions
  /// returned, and frees `parent`'s job slot: they become ready at most
  /// `maxParallel` at a time (nil: all at once); `parent` is finished once
  /// they all are. A child's failure stops nothing but its parent.
  public mutating func fanOut(_ parent: Int, count: Int, maxParallel: Int?) -> Range<Int> {
    precondition(!fannedOut.contains(parent), "a step fans out once")
    let first = steps.count
    let children = first..<(first + count)
    steps.append(contentsOf: repeatElement(Step(), count: count))
    dependents.append(contentsOf: repeatElement([], count: count))
    nextInQueue.append(contentsOf: repeatElement(nil, count: count))
    waitingOn.append(contentsOf: repeatElement(0, count: count))
    blockedBy.append(contentsOf: repeatElement(nil, count: count))
    selected.append(contentsOf: repeatElement(true, count: count))
    parents.append(contentsOf: repeatElement(parent, count: count))
    unfinished += count
    fannedOut.insert(parent)
    running -= 1
    let released = min(count, max(1, maxParallel ?? count))
    ready.append(contentsOf: first..<(first + released))
    if released < count { unreleasedChildren[parent] = (first + released, children.upperBound) }
    return children
  }

  /// The step that `child` is a child of, or nil for a declared step.
  public func parent(of child: Int) -> Int? {
    child < declaredCount ? nil : parents[child - declaredCount]
  }

  /// The first step (by position) that could never start because its queue
  /// runs steps in declaration order while it needs, directly or not, a
  /// step declared after it in that queue; nil when every order can hold.
  /// Workflow definitions refuse such a step.
  public static func queueOrderConflict(in steps: [Step]) -> Int? {
    guard steps.contains(where: { $0.queue != nil }) else { return nil }
    var after = [[Int]](repeating: [], count: steps.count)
    var waitingOn = [Int](repeating: 0, count: steps.count)
    var lastInQueue: [Int: Int] = [:]
    for (position, step) in steps.enumerated() {
      for need in step.needs { after[need].append(position) }
      waitingOn[position] = step.needs.count
      if let queue = step.queue {
        if let previous = lastInQueue[queue] {
          after[previous].append(position)
          waitingOn[position] += 1
        }
        lastInQueue[queue] = position
      }
    }
    var ready = steps.indices.filter { waitingOn[$0] == 0 }
    var done = [Bool](repeating: false, count: steps.count)
    while let step = ready.popLast() {
      done[step] = true
      for next in after[step] {
        waitingOn[next] -= 1
        if waitingOn[next] == 0 { ready.append(next) }
      }
    }
    return steps.indices.first { !done[$0] && steps[$0].queue != nil }
  }

  /// True once every selected step has finished.
  public var isFinished: Bool { unfinished == 0 }

  /// True while a step is ready and waits only for a free job slot.
  public var hasReady: Bool { readyHead < ready.count }

  /// The steps to start (up to the `jobs` limit) or skip now; call once at
  /// the start and after every `finished`.
  public mutating func next() -> [Decision] {
    var decisions: [Decision] = []
    next(into: &decisions)
    return decisions
  }

  /// `next()`, appended to `decisions`: a runner that keeps one buffer
  /// allocates nothing per step.
  public mutating func next(into decisions: inout [Decision]) {
    while readyHead < ready.count {
      let step = ready[readyHead]
      if let cause = blockedBy[step] {
        readyHead += 1
        decisions.append(.skip(step, because: cause))
        // A skip is a finish: its dependents may be decided now too.
        finish(step, .skipped)
        continue
      }
      guard running < jobs else { break }
      readyHead += 1
      running += 1
      decisions.append(.start(step))
    }
    if readyHead > 1024 && readyHead * 2 > ready.count {
      ready.removeFirst(readyHead)
      readyHead = 0
    }
  }

  /// Records that a started step ended with `outcome`; then call `next`.
  public mutating func finished(_ step: Int, _ outcome: Outcome) {
    assert(blockedBy[step] == nil, "a step skipped by next() was never started")
    if fannedOut.remove(step) == nil { running -= 1 }
    finish(step, outcome)
    if let parent = parent(of: step), let children = unreleasedChildren[parent] {
      ready.append(children.next)
      unreleasedChildren[parent] = children.next + 1 < children.end ? (children.next + 1, children.end) : nil
    }
  }

  private mutating func finish(_ step: Int, _ outcome: Outcome) {
    unfinished -= 1
    let stops = outcome == .skipped || (outcome == .failed && !steps[step].continuesOnError)
    for dependent in dependents[step] where selected[dependent] {
      if stops && blockedBy[dependent] == nil { blockedBy[dependent] = step }
      release(dependent)
    }
    if let next = nextInQueue[step] { release(next) }
  }

  private mutating func release(_ step: Int) {
    waitingOn[step] -= 1
    if waitingOn[step] == 0 { ready.append(step) }
  }
}
