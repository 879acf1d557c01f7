import LuaKit

/// What `lunar run` does with a workflow that a script's main chunk
/// returns: runs it with the run's workflow options, or, in drawing mode,
/// draws it, or, in a step worker (`lunar worker --steps`), makes its
/// steps actions. Refuses, as usage errors, workflow options for a script that
/// returned no workflow and a run flag given after the script's name.
enum ReturnedWorkflow {
  /// Handles `results` (see `ScriptRunner.handleResults`): a returned
  /// workflow is run (a failed run raises) and the chunk then returned
  /// nothing; its drawing goes to `drawings` instead.
  static func handle(
    _ results: MainChunkResults, options: WorkflowRunOptions, drawings: Drawings
  ) throws(LuaError) -> RunFailure? {
    let state = results.state
    let returned = results.base + 1
    let format = drawings.format
    let noWorkflow: RunFailure? = options.workflowFlag.flatMap { flag in
      format != nil ? nil : .usage("'\(flag)' is for a file that returns a workflow; \(results.script.name) ran and returned none")
    }
    guard state.top >= returned else { return noWorkflow }
    let chunkResults = state.top
    state.pushLoadedModules()
    // A workflow can only exist if the workflow module was loaded.
    let loaded = state.pushField("lunar.workflow", of: -1) == .table
    let module = state.top
    guard loaded, try isWorkflow(at: returned, module: module, on: state) else {
      state.top = chunkResults
      return noWorkflow
    }
    if let format {
      state.pushField("graph", of: module)
      state.pushValue(at: returned)
      state.push(format.rawValue)
      try state.call(arguments: 2, results: 1)
      if let drawing = state.bytes(at: -1) { drawings.add(drawing) }
      state.top = chunkResults
      return nil
    }
    if options.servesSteps {
      state.pushField("_serve", of: module)
      state.pushValue(at: returned)
      try state.call(arguments: 1, results: 0)
      state.top = results.base
      return nil
    }
    if let misplaced = options.misplacedFlag {
      state.top = chunkResults
      return .usage(
        "'\(misplaced.flag)' after FILE goes to the script; put lunar's flags before FILE (\(misplaced.corrected))")
    }
    state.pushField("_run", of: module)
    state.pushValue(at: returned)
    if (try? state.push(options.luaValue)) == nil { state.pushNil() }
    try state.call(arguments: 2, results: 0)
    // The run replaces everything the chunk returned; `_run` builds no
    // per-step results, which nobody would read.
    state.top = results.base
    return nil
  }

  /// Whether the value at `index` is a workflow, as the workflow module
  /// at `module` tells (`workflow.is`).
  private static func isWorkflow(at index: Int32, module: Int32, on state: LuaState) throws(LuaError) -> Bool {
    state.pushField("is", of: module)
    state.pushValue(at: index)
    try state.call(arguments: 1, results: 1)
    defer { state.pop() }
    return state.boolean(at: -1)
  }
}
