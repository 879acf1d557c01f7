import Testing

@testable import Lunar

@Suite struct WorkflowPlanTests {
  /// fetch → parse → (report, archive); lint alone.
  static let needs: [[Int]] = [[], [0], [1], [1], []]

  @Test func everyStepByLevel() {
    let plan = WorkflowPlan(needs: Self.needs)
    #expect(plan.selected == [true, true, true, true, true])
    #expect(plan.groups == [[0, 4], [1], [2, 3]])
    #expect(plan.selectedCount == 5)
    #expect(plan.dependents == [[1], [2, 3], [], [], []])
  }

  @Test func onlyTakesAStepAndWhatItNeeds() {
    let plan = WorkflowPlan(needs: Self.needs, selection: .only(2))
    #expect(plan.selected == [true, true, true, false, false])
    #expect(plan.groups == [[0], [1], [2]])
  }

  @Test func fromTakesAStepAndWhatNeedsIt() {
    let plan = WorkflowPlan(needs: Self.needs, selection: .from(1))
    #expect(plan.selected == [false, true, true, true, false])
    // Needs outside the selection are done already: parse is level one.
    #expect(plan.groups == [[1], [2, 3]])
  }

  @Test func aStepNeedingALaterOneIsPlacedAfterIt() {
    let plan = WorkflowPlan(needs: [[2], [], [1]])
    #expect(plan.groups == [[1], [2], [0]])
  }

  @Test func aLevelIsTheLongestPathNotTheShortest() {
    // d needs a directly and through b → c.
    let plan = WorkflowPlan(needs: [[], [0], [1], [0, 2]])
    #expect(plan.groups == [[0], [1], [2], [3]])
  }

  @Test func longChainsNeedNoRecursion() {
    let count = 200_000
    let needs = (0..<count).map { $0 == 0 ? [] : [$0 - 1] }
    let plan = WorkflowPlan(needs: needs, selection: .only(count - 1))
    #expect(plan.groups.count == count)
    #expect(plan.groups.last == [count - 1])
    #expect(WorkflowPlan(needs: needs, selection: .from(0)).selectedCount == count)
  }

  @Test func anEmptyWorkflowHasNoGroups() {
    #expect(WorkflowPlan(needs: []).groups.isEmpty)
  }
}
