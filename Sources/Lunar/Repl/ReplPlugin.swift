import LuaKit

/// `lunar.repl`: what the console evaluates entries with (`repl.lua`), and
/// the runtime views its dot-commands show.
struct ReplPlugin: LunarPlugin {
  let name = "lunar.repl"

  func install(in runtime: RuntimeCore) throws {
    let printing = TextTraceSink(descriptor: 1)
    var printingOn = false
    try runtime.installLuaModule("lunar.repl", source: PackageResources.repl_lua, host: [
      ("tasks", { [unowned runtime] call in
        let tasks = runtime.scheduler.liveTasks.sorted.filter(\.traced)
        try call.push(.table(LuaTable(array: tasks.map { task in
          var t = LuaTable()
          t["label"] = .string(LuaString(task.label))
          t["status"] = .string(LuaString(task.status.rawValue))
          if let wait = task.waitingOn {
            t["waiting"] = .string(LuaString(wait.subject))
            t["where"] = .string(LuaString(wait.location))
          }
          return .table(t)
        })))
        return .one
      }),
      ("queues", { [unowned runtime] call in
        try call.push(.table(LuaTable(array: runtime.queues.map { queue in
          var t = LuaTable()
          t["name"] = .string(queue.name)
          t["length"] = .integer(Int64(queue.length))
          if let running = queue.running { t["running"] = .string(LuaString(running.task.label)) }
          return .table(t)
        })))
        return .one
      }),
      ("machines", { [unowned runtime] call in
        try call.push(.table(LuaTable(array: runtime.machines.map { machine in
          var t = LuaTable()
          t["name"] = .string(machine.name)
          t["state"] = .string(machine.state)
          t["mailbox"] = .integer(Int64(machine.mailboxCount))
          t["stopped"] = .boolean(machine.isStopped)
          t["active"] = .boolean(!machine.isStopped && (!machine.isSettled || machine.hasTimers))
          return .table(t)
        })))
        return .one
      }),
      ("print_trace", { [unowned runtime] call in
        let on = call.boolean(1)
        if on && !printingOn { runtime.trace.add(printing) }
        if !on { runtime.trace.remove(printing) }
        printingOn = on
        return .none
      }),
      ("clock_kind", { [unowned runtime] call in
        call.push(runtime.clock.isVirtual ? "virtual" : "real")
        return .one
      }),
      // display(value) -> a table's contents as text, nested, bounded
      ("display", { call in
        call.push(LuaDisplay.live(call.L, at: 1).rendered(packed: true))
        return .one
      }),
      ("clock_start", { [unowned runtime] call in
        call.push(runtime.clock.start)
        return .one
      }),
      ("advance", { [unowned runtime] call in
        let seconds = call.type(1) == .number ? try call.number(1) : .nan
        guard seconds >= 0, seconds.isFinite else {
          call.push(false)
          call.push("usage: .clock advance SECONDS (a non-negative number)")
          return .values(2)
        }
        guard runtime.clock.isVirtual else {
          call.push(false)
          call.push("the clock is real; start with --clock virtual to move it")
          return .values(2)
        }
        guard seconds >= 0, runtime.clock.deadline(after: seconds).isFinite else {
          call.push(false)
          call.push(
            "cannot advance the clock by \(LuaValue.number(seconds)) seconds: the clock ends at "
              + "\(LuaValue.number(RuntimeClock.horizon)) seconds since the epoch")
          return .values(2)
        }
        do {
          try runtime.scheduler.advanceVirtualTime(to: runtime.clock.now + seconds, on: call.L)
        } catch {
          // Ctrl-C: the entry ends as interrupted (the flag is still set).
          call.push("interrupted")
          return .error
        }
        call.push(true)
        return .one
      }),
    ])
  }
}
