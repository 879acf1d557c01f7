import CLua
import CLuaShim
import LuaKit

#if canImport(Glibc)
import Glibc
#endif

/// `lunar.workflow`: the declarative layer (written in Lua, `workflow.lua`)
/// and the host functions it needs: the resume journal, input fingerprints
/// and wall-clock time for progress.
struct WorkflowPlugin: LunarPlugin {
  let name = "lunar.workflow"

  func install(in runtime: RuntimeCore) throws {
    var journals: [WorkflowJournal] = []
    func journal(_ call: LuaCall) throws -> WorkflowJournal {
      let index = Int(try call.integer(1))
      guard index >= 1, index <= journals.count else { throw LuaArgumentError.invalid(1, "no such journal") }
      return journals[index - 1]
    }
    try runtime.installLuaModule("lunar.workflow", source: PackageResources.workflow_lua, host: [
      ("journal_open", { call in
        journals.append(try WorkflowJournal(path: try call.string(1)))
        call.push(journals.count)
        return .one
      }),
      ("journal_lookup", { call in
        let entry = try journal(call).lookup(step: try call.bytes(2), key: try call.bytes(3))
        if let entry { try call.push(entry) } else { call.pushNil() }
        return .one
      }),
      ("journal_last", { call in
        let entry = try journal(call).last(step: try call.bytes(2))
        if let entry { try call.push(entry) } else { call.pushNil() }
        return .one
      }),
      ("journal_store", { call in
        try journal(call).store(step: try call.bytes(2), key: try call.bytes(3), output: try call.value(4, name: "output"))
        return .none
      }),
      // fingerprint(value) -> a stable text of a step's inputs
      ("fingerprint", { call in
        call.push(JSON.encode(try call.value(1, name: "input")))
        return .one
      }),
      ("monotonic", { call in
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        call.push(Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9)
        return .one
      }),
    ])
  }
}

/// The resume journal: each succeeded step with the fingerprint of its
/// inputs and its output, as JSON lines. A rerun reuses a step whose inputs
/// have not changed. Steps are found by their names' bytes.
final class WorkflowJournal {
  private var entries: [(step: LuaString, key: LuaString, output: LuaValue)] = []
  private let output: FileOutput

  init(path: String) throws {
    if let text = FileSystemReader.read(path) {
      for line in text.split(separator: "\n") where !line.isEmpty {
        guard let entry = try? JSON.decode(String(line)), let step = entry["step"].luaStringValue,
          let key = entry["key"].luaStringValue
        else { continue }
        entries.append((step, key, entry["output"]))
      }
    }
    output = try FileOutput(path: path)
    for entry in entries { write(entry.step, entry.key, entry.output) }
  }

  func lookup(step: LuaString, key: LuaString) -> LuaValue? {
    entries.last { $0.step == step && $0.key == key }?.output
  }

  func last(step: LuaString) -> LuaValue? {
    entries.last { $0.step == step }?.output
  }

  func store(step: LuaString, key: LuaString, output value: LuaValue) {
    entries.append((step, key, value))
    write(step, key, value)
  }

  /// Writes an entry, unless its step or key is not UTF-8: JSON would
  /// change such a name, and a later run would take one step's output for
  /// another's. Those steps are reused within this run only.
  private func write(_ step: LuaString, _ key: LuaString, _ value: LuaValue) {
    guard step.string != nil, key.string != nil else { return }
    output.write(JSON.encode(["step": .string(step), "key": .string(key), "output": value], keyOrder: ["step", "key", "output"]) + "\n")
  }
}
