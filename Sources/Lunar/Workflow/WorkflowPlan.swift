/// Which steps of a workflow run, and in which parallel groups: the planner
/// behind `--only`, `--from` and `--dry-run`. Built from the steps'
/// dependencies alone, in time proportional to steps plus edges.
public struct WorkflowPlan: Sendable, Equatable {
  /// Which steps a run selects.
  public enum Selection: Sendable, Equatable {
    /// Every step.
    case all
    /// The step at this position and everything it needs (`--only`).
    case only(Int)
    /// The step at this position and everything that needs it (`--from`).
    case from(Int)
  }

  /// Whether each step (by declaration position) runs.
  public let selected: [Bool]
  /// The selected steps by level: a step's level is one more than the
  /// highest level among the selected steps it needs, so the steps of a
  /// group can run at the same time once the groups before it are done.
  /// Declaration order within a group. Made when asked (a plan printed, a
  /// run resumed): a run does not need them.
  public var groups: [[Int]] { Self.levels(needs: needs, dependents: dependents, selected: selected) }
  /// For each step, the positions of the steps that need it.
  public let dependents: [[Int]]
  /// For each step, the positions of the steps it needs.
  private let needs: [[Int]]

  /// The plan for steps whose needs (positions) are `needs`, which must
  /// form no cycle (workflow definitions refuse cycles).
  public init(needs: [[Int]], selection: Selection = .all) {
    var dependents = [[Int]](repeating: [], count: needs.count)
    for (step, stepNeeds) in needs.enumerated() {
      for need in stepNeeds { dependents[need].append(step) }
    }
    self.dependents = dependents
    self.needs = needs
    selected = Self.select(selection, needs: needs, dependents: dependents)
  }

  /// How many steps run.
  public var selectedCount: Int { selected.reduce(0) { $0 + ($1 ? 1 : 0) } }

  /// The steps reached from `selection` by following `needs` (`--only`) or
  /// `dependents` (`--from`), iteratively: a chain of any length is fine.
  private static func select(_ selection: Selection, needs: [[Int]], dependents: [[Int]]) -> [Bool] {
    let start: Int
    let edges: [[Int]]
    switch selection {
    case .all: return [Bool](repeating: true, count: needs.count)
    case .only(let step): (start, edges) = (step, needs)
    case .from(let step): (start, edges) = (step, dependents)
    }
    var selected = [Bool](repeating: false, count: needs.count)
    var pending = [start]
    selected[start] = true
    while let step = pending.popLast() {
      for next in edges[step] where !selected[next] {
        selected[next] = true
        pending.append(next)
      }
    }
    return selected
  }

  /// Kahn's algorithm over the selected steps: each step's level is set
  /// when its last selected need is done.
  private static func levels(needs: [[Int]], dependents: [[Int]], selected: [Bool]) -> [[Int]] {
    var waitingOn = [Int](repeating: 0, count: needs.count)
    var level = [Int](repeating: 0, count: needs.count)
    var ready: [Int] = []
    for step in needs.indices where selected[step] {
      waitingOn[step] = needs[step].reduce(0) { $0 + (selected[$1] ? 1 : 0) }
      if waitingOn[step] == 0 { ready.append(step) }
    }
    var deepest = -1
    var next = 0
    while next < ready.count {
      let step = ready[next]
      next += 1
      deepest = max(deepest, level[step])
      for dependent in dependents[step] where selected[dependent] {
        level[dependent] = max(level[dependent], level[step] + 1)
        waitingOn[dependent] -= 1
        if waitingOn[dependent] == 0 { ready.append(dependent) }
      }
    }
    var groups = [[Int]](repeating: [], count: deepest + 1)
    for step in needs.indices where selected[step] { groups[level[step]].append(step) }
    return groups
  }
}
