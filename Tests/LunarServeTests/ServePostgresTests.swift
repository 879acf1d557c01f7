import Testing
import TestSupport

/// The site on a PostgreSQL store (the test server `scripts/test` starts):
/// the pages and every action, as on SQLite, each in a fresh schema.
@Suite(.enabled(if: TestPostgresSchema.isAvailable)) struct ServePostgresTests {
  func site() throws -> ServeSiteTests { try ServeSiteTests(postgres: TestPostgresSchema()) }

  @Test func theRunsPageListsEveryRunNewestFirst() throws { try site().theRunsPageListsEveryRunNewestFirstWithItsStatus() }
  @Test func filtersByWorkflowAndStatus() throws { try site().filtersByWorkflowAndStatus() }
  @Test func aRunsPageShowsItsSteps() throws { try site().aRunsPageShowsItsStepsWithTheirOutputs() }
  @Test func namesAreText() throws { try site().namesOutputsAndErrorsFromTheStoreAreTextNeverMarkup() }
  @Test func cancelIsRecorded() throws { try site().cancelThroughThePageIsRecordedAsTheCLIRecordsIt() }
  @Test func aForeignPostIsRefused() throws { try site().aPostWithoutTheSessionsTokenOrFromAnotherOriginIs403AndChangesNothing() }
  @Test func theQueuesPage() throws { try site().theQueuesPageShowsEachQueueAndTheWorkersHoldingJobs() }
  @Test func theSchedulesPage() throws { try site().theSchedulesPageShowsTheNextTicksInTheSchedulesZone() }
  @Test func aSignalIsRecorded() throws { try ServeActionTests(base: site()).aSignalFromThePageIsRecordedAsTheCLIRecordsIt() }
  @Test func aHaltedQueueIsResumed() throws { try ServeActionTests(base: site()).aHaltedQueueIsResumedFromThePageByItsBytes() }
  @Test func runsAreResumedAndRerun() throws { try ServeActionTests(base: site()).anEndedRunIsResumedAndRerunFromAStepAsLunarSubmitWould() }
  @Test func schedulesAreActedOn() throws { try ServeActionTests(base: site()).schedulesArePausedResumedAndTriggeredFromThePage() }
  @Test func theLogsPage() throws { try RunDetailsTests(base: site()).theLogsPageShowsEachAttemptsBytesAsText() }
  @Test func waits() throws { try RunDetailsTests(base: site()).aRunningRunShowsWhatItsStepsWaitFor() }
  @Test func pagingAndTime() throws { try RunDetailsTests(base: site()).theRunsPagePagesOnAndFiltersByTime() }
  @Test func changes() async throws { try await site().changesCountWhatAnotherProcessCommits() }
  @Test func theRunsGraph() throws { try RunGraphTests(base: site()).aRunsPageDrawsItsPlanWithEachStepsStatusAndEdges() }
  @Test func graphNamesAreText() throws { try RunGraphTests(base: site()).namesInTheGraphAreTextNeverMarkup() }
}
