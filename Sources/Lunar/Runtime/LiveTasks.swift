/// The tasks that have not finished, in no particular order: a task is
/// added and removed in constant time without hashing its id (every step
/// of a workflow is a task). Each task knows its place (`LuaTask.liveIndex`).
public struct LiveTasks {
  /// The tasks; ask `sorted` for them in the order they were made.
  public private(set) var values: [LuaTask] = []

  /// No task is live.
  public var isEmpty: Bool { values.isEmpty }

  /// Adds `task`, which is not live yet.
  mutating func insert(_ task: LuaTask) {
    task.liveIndex = values.count
    values.append(task)
  }

  /// Removes `task` if it is live: the last task takes its place.
  mutating func remove(_ task: LuaTask) {
    let index = task.liveIndex
    guard index >= 0, index < values.count, values[index] === task else { return }
    let last = values.removeLast()
    if last !== task {
      values[index] = last
      last.liveIndex = index
    }
    task.liveIndex = -1
  }

  /// The live tasks in the order they were made (by id).
  public var sorted: [LuaTask] { values.sorted { $0.id < $1.id } }
}
