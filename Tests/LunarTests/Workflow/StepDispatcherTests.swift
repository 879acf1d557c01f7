import Testing

@testable import Lunar

@Suite struct StepDispatcherTests {
  typealias Step = StepDispatcher.Step

  /// Runs `steps` to the end, finishing each started step with the outcome
  /// `outcome(step)` in the order they started; returns the decisions.
  static func run(
    _ steps: [Step], selection: WorkflowPlan.Selection = .all, jobs: Int = 4,
    outcome: (Int) -> StepDispatcher.Outcome = { _ in .succeeded }
  ) -> [StepDispatcher.Decision] {
    var dispatcher = StepDispatcher(steps: steps, plan: WorkflowPlan(needs: steps.map(\.needs), selection: selection), jobs: jobs)
    var log: [StepDispatcher.Decision] = []
    var started: [Int] = []
    var decisions = dispatcher.next()
    while true {
      log += decisions
      started += decisions.compactMap { if case .start(let step) = $0 { step } else { nil } }
      guard !started.isEmpty else { break }
      let step = started.removeFirst()
      dispatcher.finished(step, outcome(step))
      decisions = dispatcher.next()
    }
    #expect(dispatcher.isFinished && dispatcher.running == 0)
    return log
  }

  @Test func stepsStartOnceWhatTheyNeedSucceeded() {
    let log = Self.run([Step(), Step(needs: [0]), Step(needs: [0]), Step(needs: [1, 2])])
    #expect(log == [.start(0), .start(1), .start(2), .start(3)])
  }

  @Test func theJobsLimitHoldsStepsBack() {
    var dispatcher = StepDispatcher(steps: [Step(), Step(), Step()], plan: WorkflowPlan(needs: [[], [], []]), jobs: 2)
    #expect(dispatcher.next() == [.start(0), .start(1)])
    #expect(dispatcher.next() == [])
    dispatcher.finished(1, .succeeded)
    #expect(dispatcher.next() == [.start(2)])
    #expect(dispatcher.running == 2)
  }

  @Test func aFailureSkipsWhatNeedsItTransitively() {
    let log = Self.run([Step(), Step(needs: [0]), Step(needs: [1]), Step()]) { $0 == 0 ? .failed : .succeeded }
    #expect(log == [.start(0), .start(3), .skip(1, because: 0), .skip(2, because: 1)])
  }

  @Test func aStepThatContinuesOnErrorLetsItsDependentsRun() {
    let log = Self.run([Step(continuesOnError: true), Step(needs: [0])]) { $0 == 0 ? .failed : .succeeded }
    #expect(log == [.start(0), .start(1)])
  }

  @Test func aSkippedStepSkipsWhatNeedsIt() {
    // Step 0's own condition said no: it started and ended skipped.
    let log = Self.run([Step(), Step(needs: [0])]) { $0 == 0 ? .skipped : .succeeded }
    #expect(log == [.start(0), .skip(1, because: 0)])
  }

  @Test func aReusedStepCountsAsSucceeded() {
    let log = Self.run([Step(), Step(needs: [0])]) { $0 == 0 ? .reused : .succeeded }
    #expect(log == [.start(0), .start(1)])
  }

  @Test func aQueueRunsItsStepsOneAtATimeInDeclarationOrder() {
    // Step 1 (declared first in queue 7) waits for step 0; step 2, ready at
    // once, still waits its turn behind step 1.
    let steps = [Step(), Step(needs: [0], queue: 7), Step(queue: 7), Step(queue: 7)]
    let log = Self.run(steps)
    #expect(log == [.start(0), .start(1), .start(2), .start(3)])
    var dispatcher = StepDispatcher(steps: steps, plan: WorkflowPlan(needs: steps.map(\.needs)), jobs: 4)
    #expect(dispatcher.next() == [.start(0)])
    dispatcher.finished(0, .succeeded)
    #expect(dispatcher.next() == [.start(1)])
    dispatcher.finished(1, .failed)
    #expect(dispatcher.next() == [.start(2)], "a failure in a queue does not stop the next step")
  }

  @Test func aSkippedQueueStepLetsTheNextOneRun() {
    let steps = [Step(), Step(needs: [0], queue: 1), Step(queue: 1)]
    let log = Self.run(steps) { $0 == 0 ? .failed : .succeeded }
    #expect(log == [.start(0), .skip(1, because: 0), .start(2)])
  }

  @Test func onlySelectedStepsAreDecided() {
    let steps = [Step(), Step(needs: [0]), Step(needs: [1]), Step()]
    #expect(Self.run(steps, selection: .from(1)) == [.start(1), .start(2)])
    #expect(Self.run(steps, selection: .only(1)) == [.start(0), .start(1)])
  }

  @Test func queueOrderCountsOnlySelectedSteps() {
    let steps = [Step(queue: 0), Step(queue: 0), Step(needs: [1], queue: 0)]
    #expect(Self.run(steps, selection: .from(1)) == [.start(1), .start(2)])
  }

  @Test func tenThousandIndependentStepsAndAChainFinish() {
    let independent = [Step](repeating: Step(), count: 10_000)
    #expect(Self.run(independent, jobs: 4).count == 10_000)
    let chain = (0..<10_000).map { Step(needs: $0 == 0 ? [] : [$0 - 1]) }
    #expect(Self.run(chain).count == 10_000)
  }

  @Test func aQueueStepNeedingALaterOneOfItsQueueIsAConflict() {
    // Step 0 is first in queue 3 but needs step 2, later in the same queue.
    let steps = [Step(needs: [2], queue: 3), Step(), Step(needs: [1], queue: 3)]
    #expect(StepDispatcher.queueOrderConflict(in: steps) == 0)
    #expect(StepDispatcher.queueOrderConflict(in: [Step(queue: 3), Step(needs: [0], queue: 3)]) == nil)
    #expect(StepDispatcher.queueOrderConflict(in: [Step(needs: [1]), Step(queue: 1), Step(queue: 1)]) == nil)
  }

  @Test func aStepThatFansOutGivesUpItsSlotAndFinishesAfterItsChildren() {
    // jobs 1: the parent's children could never start if it kept its slot.
    var dispatcher = StepDispatcher(steps: [Step(), Step(needs: [0])], plan: WorkflowPlan(needs: [[], [0]]), jobs: 1)
    #expect(dispatcher.next() == [.start(0)])
    let children = dispatcher.fanOut(0, count: 3, maxParallel: nil)
    #expect(children == 2..<5)
    #expect(dispatcher.parent(of: 3) == 0 && dispatcher.parent(of: 1) == nil)
    #expect(dispatcher.running == 0)
    #expect(dispatcher.next() == [.start(2)], "the jobs limit holds children back too")
    dispatcher.finished(2, .succeeded)
    #expect(dispatcher.next() == [.start(3)])
    dispatcher.finished(3, .failed)
    #expect(dispatcher.next() == [.start(4)], "a child's failure stops no other child")
    dispatcher.finished(4, .succeeded)
    #expect(dispatcher.next() == [], "step 1 waits for step 0 itself, not its children")
    #expect(!dispatcher.isFinished)
    dispatcher.finished(0, .succeeded)
    #expect(dispatcher.next() == [.start(1)])
    dispatcher.finished(1, .succeeded)
    #expect(dispatcher.isFinished && dispatcher.running == 0)
  }

  @Test func maxParallelReleasesChildrenOneAsAnotherEnds() {
    var dispatcher = StepDispatcher(steps: [Step(), Step()], plan: WorkflowPlan(needs: [[], []]), jobs: 8)
    #expect(dispatcher.next() == [.start(0), .start(1)])
    _ = dispatcher.fanOut(0, count: 5, maxParallel: 2)
    #expect(dispatcher.next() == [.start(2), .start(3)])
    #expect(dispatcher.running == 3)
    dispatcher.finished(3, .succeeded)
    #expect(dispatcher.next() == [.start(4)])
    dispatcher.finished(1, .succeeded)
    #expect(dispatcher.next() == [], "a declared step's end releases no child")
    dispatcher.finished(2, .succeeded)
    dispatcher.finished(4, .succeeded)
    #expect(dispatcher.next() == [.start(5), .start(6)])
  }

  @Test func aStepThatFansOutIntoNothingCanFinishAtOnce() {
    var dispatcher = StepDispatcher(steps: [Step()], plan: WorkflowPlan(needs: [[]]), jobs: 2)
    #expect(dispatcher.next() == [.start(0)])
    #expect(dispatcher.fanOut(0, count: 0, maxParallel: 3).isEmpty)
    #expect(dispatcher.next() == [])
    dispatcher.finished(0, .succeeded)
    #expect(dispatcher.isFinished && dispatcher.running == 0)
  }
}
