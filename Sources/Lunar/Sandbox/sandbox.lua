-- --sandbox (Sandbox.swift): runs with a table of host functions as `...`:
-- `loadfile(filename, has_env, env)` opens and loads a file of the
-- sandbox's folders; `searchpath` is the sandbox's `package.searchpath`.
local host = ...
local load, loadfile, select, type, error = load, loadfile, select, type, error
io = nil
package.loaded.io = nil
debug = nil
package.loaded.debug = nil
os.execute, os.remove, os.rename, os.tmpname = nil, nil, nil, nil
package.loadlib = nil
package.cpath = ""
-- Text chunks only: the mode argument is forced to "t".
_G.load = function(chunk, name, _mode, ...)
  if select("#", ...) > 0 then return load(chunk, name, "t", ...) end
  return load(chunk, name, "t")
end
-- Files only from the sandbox's folders (no file name: standard input),
-- opened by the host, which checks the file it opened.
local load_checked, tostring = host.loadfile, tostring
local function sandboxed_loadfile(filename, _mode, ...)
  if type(filename) == "number" then filename = tostring(filename) end
  if type(filename) == "string" then return load_checked(filename, select("#", ...) > 0, ...) end
  if select("#", ...) > 0 then return loadfile(filename, "t", ...) end
  return loadfile(filename, "t")
end
_G.loadfile = sandboxed_loadfile
_G.dofile = function(filename)
  local f, message = sandboxed_loadfile(filename)
  if not f then error(message, 0) end
  return f()
end
-- require: preloaded modules and Lua source files, never native code.
local searchpath = host.searchpath
package.searchpath = searchpath
local function source_searcher(name)
  local path, err = searchpath(name, package.path)
  if not path then return err end
  local chunk, message = load_checked(path, false)
  if not chunk then
    error(("error loading module '%s' from file '%s':\n\t%s"):format(name, path, message), 2)
  end
  return chunk, path
end
package.searchers = { package.searchers[1], source_searcher }
