import LuaKit
import Lunar

/// Delivers due reminders on the runtime's clock: a timer at the next due
/// time; when it fires, each due reminder calls its Lua function (as a
/// task) or sends `{ "reminder", launch = ..., minutes = ... }` to its
/// machine. Lives on the loop thread.
final class ReminderDelivery {
  let schedule: LaunchSchedule
  unowned let core: RuntimeCore
  private var targets: [Int: LuaReference] = [:]
  private var timer: Int?

  init(schedule: LaunchSchedule, core: RuntimeCore) {
    self.schedule = schedule
    self.core = core
  }

  func register(_ id: Int, target: LuaReference) {
    targets[id] = target
    arm()
  }

  /// Sets the timer for the next pending reminder.
  private func arm() {
    let schedule = self.schedule
    core.afterAsync({ await schedule.nextReminderDue.map { LuaValue.number($0) } ?? .nil }) { [weak self] next in
      guard let self else { return }
      if let timer = self.timer { self.core.scheduler.timers.cancel(timer) }
      self.timer = nil
      guard let due = next.numberValue else { return }
      self.timer = self.core.scheduler.timers.schedule(at: due) { [weak self] in self?.fire() }
    }
  }

  private func fire() {
    timer = nil
    let schedule = self.schedule
    core.afterAsync({
      var list = LuaTable()
      for reminder in await schedule.takeDueReminders() {
        var entry = LaunchesPlugin.table(reminder).tableValue ?? LuaTable()
        if let launch = await schedule.launch(id: reminder.launchID) { entry["launch"] = LaunchesPlugin.table(launch) }
        list.append(.table(entry))
      }
      return .table(list)
    }) { [weak self] due in
      guard let self else { return }
      for reminder in due.tableValue?.array ?? [] {
        guard let id = reminder["id"].integerValue, let target = self.targets.removeValue(forKey: Int(id)) else { continue }
        self.deliver(reminder, to: target)
      }
      self.arm()
    }
  }

  private func deliver(_ reminder: LuaValue, to target: LuaReference) {
    let lua = core.state
    lua.withStackScope {
      target.push(on: lua)
      let function = lua.top
      if let machine = lua.object(at: function, of: MachineDriver.self) {
        var message = LuaTable(array: ["reminder"])
        message["launch"] = reminder["launch"]
        message["minutes"] = reminder["minutes"]
        try? machine.send(MachineMessage(value: .table(message))!)
        return
      }
      if (try? lua.push(reminder)) == nil { lua.pushNil() }
      _ = core.scheduler.spawn(on: lua.L, function: function, arguments: 1, label: "reminder")
    }
  }
}
