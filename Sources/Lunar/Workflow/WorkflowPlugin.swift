import LuaKit

#if canImport(Glibc)
import Glibc
#endif

/// `lunar.workflow`: the declarative layer (written in Lua, `workflow.lua`)
/// and the host functions it needs: the resume journal, input fingerprints,
/// wall-clock time for progress and the step graph's drawing; and what
/// happens to a workflow a script returns (`ReturnedWorkflow`).
struct WorkflowPlugin: LunarPlugin {
  let name = "lunar.workflow"

  func install(in runtime: RuntimeCore) throws {
    var journals: [WorkflowJournal] = []
    let core = runtime
    func journal(_ call: LuaCall) throws -> WorkflowJournal {
      let index = Int(try call.integer(1))
      guard index >= 1, index <= journals.count else { throw LuaArgumentError.invalid(1, "no such journal") }
      return journals[index - 1]
    }
    let configuration = runtime.configuration
    // A workflow the main chunk returns is run (or drawn) here.
    runtime.scripts.handleResults { [unowned runtime] (results) throws(LuaError) in
      try ReturnedWorkflow.handle(
        results, options: configuration.workflowOptions, drawings: runtime.component(Drawings.self))
    }
    try runtime.installLuaModule("lunar.workflow", source: PackageResources.workflow_lua, host: [
      // may_write(path) -> whether a script may have Lunar write `path`:
      // always, except under --sandbox, where only the command line's
      // --journal is written.
      ("may_write", { call in
        let path = try call.bytes(1)
        call.push(!configuration.sandbox || configuration.workflowOptions.journal.map { LuaString($0) == path } == true)
        return .one
      }),
      // journal_open(path) -> index, or nil and why it cannot be used
      ("journal_open", { call in
        let journal: WorkflowJournal
        do {
          journal = try WorkflowJournal(path: try call.string(1))
        } catch {
          call.pushNil()
          call.push(String(describing: error))
          return .values(2)
        }
        core.scripts.endRun(whenWriteFails: journal.output)
        journals.append(journal)
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
      // fingerprint(input, needs, uses) -> a stable text of a step's inputs:
      // its input (`with`), the outputs of the steps it needs, its action
      // (the text of { input =, needs =, uses = }, which journals hold).
      // A value that cannot cross is named as the step names it (`with.f`).
      ("fingerprint", { call in
        var inputs = LuaTable()
        inputs["input"] = try call.value(1, name: "with")
        inputs["needs"] = try call.value(2, name: "needs")
        inputs["uses"] = try call.value(3, name: "uses")
        call.push(JSON.encode(.table(inputs)))
        return .one
      }),
      // graph(name, steps, format) -> the drawing of a workflow whose steps
      // are { name =, uses =, needs = { ... } }, in "mermaid" or "dot"
      ("graph", { call in
        let name = try call.bytes(1)
        let steps = try call.value(2, name: "steps").tableValue?.array ?? []
        let format = try call.bytes(3)
        let graph = WorkflowGraph(name: name, steps: steps.map { step in
          WorkflowGraph.Step(
            name: step["name"].luaStringValue ?? "", uses: step["uses"].luaStringValue,
            needs: step["needs"].tableValue?.array.compactMap(\.luaStringValue) ?? [])
        })
        call.push(graph.render(as: GraphFormat.allCases.first { LuaString($0.rawValue) == format } ?? .mermaid))
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
  /// What a resume journal is: JSON lines that begin with the step's name.
  static let kind = FileOutput.Kind.starting(with: [#"{"step":"#], name: "a Lunar workflow journal")

  /// A line that is not a journal entry.
  struct NotAJournal: Error, CustomStringConvertible {
    let path: String
    let line: Int
    var description: String { "\(path):\(line): not a workflow journal entry; Lunar never overwrites this file" }
  }

  private var entries: [(step: LuaString, key: LuaString, output: LuaValue)] = []
  /// The journal's file.
  let output: FileOutput

  /// Opens the journal at `path` (a missing file is an empty journal):
  /// its entries are read with a bound, written to a new file that replaces
  /// it, and new entries are appended there.
  init(path: String) throws {
    var bytes: [UInt8] = []
    do {
      bytes = try BoundedFileReader.read(path)
    } catch {
      guard error.reason == .missing else { throw error }
    }
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    for (index, line) in lines.enumerated() where !line.isEmpty {
      guard let entry = try? JSON.decode(String(decoding: line, as: UTF8.self)), let step = entry["step"].luaStringValue,
        let key = entry["key"].luaStringValue
      else {
        // The unfinished last line of a run that stopped while writing it.
        if index == lines.count - 1 { continue }
        throw NotAJournal(path: path, line: index + 1)
      }
      entries.append((step, key, entry["output"]))
    }
    let contents = entries.compactMap { Self.line($0.step, $0.key, $0.output) }.joined()
    output = try FileOutput(path: path, kind: Self.kind, contents: Array(contents.utf8))
  }

  /// Throws what opening `path` would for a file that is not a regular file
  /// or not a journal, without reading it all.
  static func check(_ path: String) throws {
    var info = stat()
    if stat(path, &info) == 0, let kind = BoundedFileReader.nonRegularKind(info.st_mode) {
      throw BoundedFileReader.ReadError(path: path, reason: .notRegular(kind))
    }
    try FileOutput.check(path, kind: Self.kind)
  }

  func lookup(step: LuaString, key: LuaString) -> LuaValue? {
    entries.last { $0.step == step && $0.key == key }?.output
  }

  func last(step: LuaString) -> LuaValue? {
    entries.last { $0.step == step }?.output
  }

  /// Records a step's output; a failed write is an error.
  func store(step: LuaString, key: LuaString, output value: LuaValue) throws {
    entries.append((step, key, value))
    if let line = Self.line(step, key, value) { try output.write(line) }
  }

  /// An entry's line; nil if its step or key is not UTF-8: JSON would
  /// change such a name, and a later run would take one step's output for
  /// another's. Those steps are reused within this run only.
  private static func line(_ step: LuaString, _ key: LuaString, _ value: LuaValue) -> String? {
    guard step.string != nil, key.string != nil else { return nil }
    return JSON.encode(["step": .string(step), "key": .string(key), "output": value], keyOrder: ["step", "key", "output"]) + "\n"
  }
}
