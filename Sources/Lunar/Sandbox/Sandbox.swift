import CLua
import CLuaShim
import LuaKit

/// `--sandbox`: takes away what reaches outside the script — files,
/// processes, native code, binary chunks and the debug library — and loads
/// Lua source (`require`, `loadfile`, `dofile`, `package.searchpath`) only
/// from the script's folder and the plugin path (see `SandboxFolders`);
/// Lunar's own modules are preloaded and need no file. Any other file is
/// refused with the same message whether or not it exists, before it is
/// opened; a file is then opened once and loaded only if the file opened
/// lies inside (a symlink flipped meanwhile cannot let another file in).
enum Sandbox {

  /// Applies the sandbox to `state`, loading source only from `folders`.
  static func apply(to state: LuaState, folders: SandboxFolders) throws(LuaError) {
    // sandbox.lua, run with a table of the two host functions below as `...`.
    try state.load(bytes: PackageResources.sandbox_lua, name: "=sandbox", mode: .text)
    state.newTable(fieldCapacity: 2)
    // loadfile(filename, has_env, env) -> the chunk (text only), or nil and
    // "cannot open FILE (outside the sandbox)" or the loader's message
    state.push(function: { call in
      let path = try call.bytes(1).bytes
      let fd: Int32
      switch folders.open(path) {
      case .success(let opened): fd = opened
      case .failure(let refusal):
        call.pushNil()
        try call.push(.string(LuaString(bytes: refusal.message)))
        return .values(2)
      }
      let name = SandboxFolders.cString(path) + [0]
      let status = name.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { lunar_loadopened(call.L, fd, $0.baseAddress, "t") }
      }
      guard status == LUA_OK else {
        call.pushNil()
        lua_rotate(call.L, -2, 1)
        return .values(2)
      }
      if call.boolean(2) {
        lua_pushvalue(call.L, 3)
        if lua_setupvalue(call.L, -2, 1) == nil { lua_settop(call.L, -2) }
      }
      return .one
    })
    state.setField("loadfile", of: -2)
    // searchpath(name, path [, sep [, rep]]) -> filename, or nil and the files tried
    state.push(function: { call in
      let name = try call.bytes(1).bytes
      let templates = try call.bytes(2).bytes
      let separator = call.isNil(3) ? Array(".".utf8) : try call.bytes(3).bytes
      let replacement = call.isNil(4) ? Array("/".utf8) : try call.bytes(4).bytes
      let (found, message) = folders.searchPath(name: name, templates: templates, separator: separator, replacement: replacement)
      if let found {
        try call.push(.string(LuaString(bytes: found)))
        return .one
      }
      call.pushNil()
      try call.push(.string(LuaString(bytes: message)))
      return .values(2)
    })
    state.setField("searchpath", of: -2)
    try state.call(arguments: 1, results: 0)
  }
}
