import CLua
import CLuaShim
import LuaKit

/// What `lunar run` does with a workflow that a script's main chunk
/// returns: runs it with the run's workflow options, or, in drawing mode,
/// draws it. Refuses, as usage errors, workflow options for a script that
/// returned no workflow and a run flag given after the script's name.
///
/// Raw C calls reach the workflow module's functions: LuaKit has no table
/// field access yet.
enum ReturnedWorkflow {
  /// Handles `results` (see `ScriptRunner.handleResults`): a returned
  /// workflow's outcome replaces everything the chunk returned; its
  /// drawing goes to `drawings` instead.
  static func handle(
    _ results: MainChunkResults, options: WorkflowRunOptions, drawings: Drawings
  ) throws(LuaError) -> RunFailure? {
    let state = results.state
    let L = state.L
    let base = results.base
    let format = drawings.format
    let noWorkflow: RunFailure? = options.workflowFlag.flatMap { flag in
      format != nil ? nil : .usage("'\(flag)' is for a file that returns a workflow; \(results.script.name) ran and returned none")
    }
    guard lua_gettop(L) > base else { return noWorkflow }
    lua_getfield(L, lunar_registryindex(), LUA_LOADED_TABLE)
    lua_getfield(L, -1, "lunar.workflow")
    lunar_remove(L, -2)
    let module = lua_gettop(L)
    // A workflow can only exist if the workflow module was loaded.
    guard lua_type(L, module) == LUA_TTABLE else {
      lua_settop(L, module - 1)
      return noWorkflow
    }
    lua_getfield(L, module, "is")
    lua_pushvalue(L, base + 1)
    try state.call(arguments: 1, results: 1)
    let isWorkflow = lua_toboolean(L, -1) != 0
    lua_settop(L, module)
    guard isWorkflow else {
      lua_settop(L, module - 1)
      return noWorkflow
    }
    if let misplaced = options.misplacedFlag, format == nil {
      lua_settop(L, module - 1)
      return .usage(
        "'\(misplaced.flag)' after FILE goes to the script; put lunar's flags before FILE (\(misplaced.corrected))")
    }
    if let format {
      lua_getfield(L, module, "graph")
      lua_pushvalue(L, base + 1)
      state.push(format.rawValue)
      try state.call(arguments: 2, results: 1)
      if let drawing = state.bytes(at: -1) { drawings.add(drawing) }
      lua_settop(L, module - 1)
      return nil
    }
    lua_getfield(L, module, "run")
    lua_pushvalue(L, base + 1)
    if (try? state.push(options.luaValue)) == nil { lua_pushnil(L) }
    try state.call(arguments: 2, results: 1)
    // The outcome replaces everything the chunk returned.
    lunar_replace(L, base + 1)
    lua_settop(L, base + 1)
    return nil
  }
}
