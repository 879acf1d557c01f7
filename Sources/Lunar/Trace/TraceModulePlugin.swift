import LuaKit

/// `lunar.trace`: lets a script record and read the run's own trace, the
/// basis of the test runner's trace assertions. Recording starts when the
/// module is first required, or with the run under
/// `RuntimeConfiguration.recordsTrace` (`--trace`).
///
/// ```lua
/// local trace = require "lunar.trace"
/// ...
/// for _, line in ipairs(trace.summaries("task.")) do print(line) end
/// ```
struct TraceModulePlugin: LunarPlugin {
  let name = "lunar.trace"

  func install(in runtime: RuntimeCore) throws {
    let recorder = TraceRecorder(budget: runtime.memoryBudget)
    let trace = runtime.trace
    var recording = runtime.configuration.recordsTrace
    if recording { trace.add(recorder) }
    var module = LuaModule("lunar.trace")
    module.whenLoaded { [unowned trace] _ in
      if !recording {
        trace.add(recorder)
        recording = true
      }
    }

    // A reused runtime (lunar test's) gives each script an empty recorder,
    // recording as it was when the runtime was set up.
    runtime.whenRestored { [unowned trace] in
      let recordedAtMark = recording
      return {
        recorder.clear()
        guard recording != recordedAtMark else { return }
        if recordedAtMark { trace.add(recorder) } else { trace.remove(recorder) }
        recording = recordedAtMark
      }
    }

    module.function("start") { [unowned trace] _ in
      if !recording {
        trace.add(recorder)
        recording = true
      }
      return .none
    }
    module.function("stop") { [unowned trace] _ in
      trace.remove(recorder)
      recording = false
      return .none
    }
    module.function("clear") { _ in
      recorder.clear()
      return .none
    }
    module.function("recording") { call in
      call.push(recording)
      return .one
    }
    // trace.events([prefix]) -> { {seq=, time=, kind=, <fields>...}, ... }
    module.function("events") { call in
      let prefix = try call.optionalString(1) ?? ""
      let events = recorder.events.filter { $0.kind.hasPrefix(prefix) }
      let list = LuaValue.table(LuaTable(array: events.map(Self.table)))
      try call.push(list)
      return .one
    }
    // trace.summaries([prefix]) -> { "task.done id=1", ... }
    module.function("summaries") { call in
      let prefix = try call.optionalString(1) ?? ""
      let lines = recorder.events.filter { $0.kind.hasPrefix(prefix) }.map { LuaValue.string(LuaString($0.summary)) }
      try call.push(.table(LuaTable(array: lines)))
      return .one
    }
    try runtime.install(module)
  }

  static func table(_ event: TraceEvent) -> LuaValue {
    var table = LuaTable()
    table["sequence"] = .integer(Int64(event.sequence))
    table["time"] = .number(event.time)
    table["kind"] = .string(LuaString(event.kind))
    table["summary"] = .string(LuaString(event.summary))
    for field in event.fields { table[field.name] = field.value }
    return .table(table)
  }
}
