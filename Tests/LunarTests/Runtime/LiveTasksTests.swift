import Testing

@testable import Lunar

/// The scheduler's set of unfinished tasks: constant-time removal by the
/// place each task keeps, whatever order tasks finish in.
struct LiveTasksTests {
  private func tasks(_ count: Int) -> [LuaTask] {
    (1...count).map { LuaTask(id: $0, label: "task \($0)", origin: "") }
  }

  @Test func tasksRemovedInAnyOrderLeaveTheOthersFindable() {
    var live = LiveTasks()
    let made = tasks(5)
    for task in made { live.insert(task) }
    live.remove(made[1])
    live.remove(made[4])
    #expect(live.sorted.map(\.id) == [1, 3, 4])
    #expect(made[1].liveIndex == -1 && made[4].liveIndex == -1)
    // Each task left still knows where it is: removing it removes it.
    for task in live.values { #expect(live.values[task.liveIndex] === task) }
    live.remove(made[0])
    live.remove(made[3])
    live.remove(made[2])
    #expect(live.isEmpty)
  }

  @Test func removingATaskTwiceOrOneNeverAddedChangesNothing() {
    var live = LiveTasks()
    let made = tasks(3)
    live.insert(made[0])
    live.insert(made[1])
    live.remove(made[0])
    live.remove(made[0])
    live.remove(made[2])
    #expect(live.values.map(\.id) == [2])
  }
}
