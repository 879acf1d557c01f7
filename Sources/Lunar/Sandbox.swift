import LuaKit

/// `--sandbox`: takes away what reaches outside the script — files,
/// processes, native code, binary chunks and the debug library.
enum Sandbox {
  static let source = """
    local load, loadfile, searchpath, select = load, loadfile, package.searchpath, select
    io = nil
    package.loaded.io = nil
    debug = nil
    package.loaded.debug = nil
    os.execute, os.remove, os.rename, os.tmpname = nil, nil, nil, nil
    package.loadlib = nil
    package.cpath = ""
    -- Text chunks only: the mode argument is forced to "t".
    _G.load = function(chunk, name, mode, ...)
      if select("#", ...) > 0 then return load(chunk, name, "t", ...) end
      return load(chunk, name, "t")
    end
    _G.loadfile = function(filename, mode, ...)
      if select("#", ...) > 0 then return loadfile(filename, "t", ...) end
      return loadfile(filename, "t")
    end
    _G.dofile = function(filename)
      local f = assert(loadfile(filename, "t"))
      return f()
    end
    -- require: preloaded modules and Lua source files, never native code.
    local function source_searcher(name)
      local path, err = searchpath(name, package.path)
      if not path then return err end
      local chunk, message = loadfile(path, "t")
      if not chunk then
        error(("error loading module '%s' from file '%s':\\n\\t%s"):format(name, path, message), 2)
      end
      return chunk, path
    end
    package.searchers = { package.searchers[1], source_searcher }
    """

  static func apply(to state: LuaState) throws(LuaError) {
    try state.load(source, name: "=sandbox", mode: .text)
    try state.call(arguments: 0, results: 0)
  }
}
