-- require's stock semantics, printed line by line: `lunar run` must print
-- exactly what `lua5.4` prints for this file (run in this folder).
package.path = "./?.lua;./lib/?/init.lua"
package.cpath = "./?.so"

local function show(label, ...)
  local parts = { label }
  for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
  print(table.concat(parts, " | "))
end

-- A module found on package.path: its value and the file it came from.
show("plain", require("plain"))
show("plain again", require("plain"))
show("loaded", package.loaded.plain == require("plain"))
show("init", require("pkg"))

-- A loader that returns nothing stores true; one that sets package.loaded
-- itself and returns nothing keeps its own value; a returned value wins.
show("returns nothing", require("nothing"), package.loaded.nothing)
show("sets loaded", require("setsloaded"), package.loaded.setsloaded)
show("returns over loaded", require("returnsover"), package.loaded.returnsover)

-- The loader receives the name and the searcher's data.
package.preload.args = function(...) return table.concat({ ... }, ",") end
show("preload", require("args"))

-- A value of false in package.loaded means "not loaded".
package.loaded.plain = false
show("reloaded", require("plain"))

-- Not found: every searcher's message, in order.
show("missing", pcall(require, "no.such.module"))

-- Errors: a syntax error in the file, an error in the body, bad names.
show("syntax", pcall(require, "syntaxerror"))
show("body", pcall(require, "bodyerror"))
show("bad name", pcall(require))
show("table name", pcall(require, {}))
package.preload["5"] = function(name) return "number name " .. name end
show("number name", require(5))

-- Modules that require each other see the first one's table in progress.
show("cycle", require("cyclea").b.seen)

-- package.searchers is the user's: replaced entries, messages of any kind.
local saved = package.searchers
package.searchers = {
  function(name) return "\n\tfirst says no to " .. name end,
  function() return 42 end,
  function() return nil end,
  function() return {} end,
  function(name) if name == "custom" then return function(n, extra) return { n, extra } end, "extra data" end end,
}
local custom, data = require("custom")
show("custom", custom[1], custom[2], data)
show("custom missing", pcall(require, "other"))
package.searchers = function() end
show("searchers not a table", pcall(require, "x"))
package.searchers = {}
show("no searchers", pcall(require, "y"))
package.searchers = { function() error("searcher failed") end }
show("searcher error", pcall(require, "z"))
package.searchers = { function() error({ code = 7 }) end }
show("searcher error value", select(2, pcall(require, "w")).code)
package.searchers = saved

-- Messages carry the caller's position, and tracebacks show require.
show("position", pcall(function() local m = require("no.such") end))
show("position searchers", pcall(function() package.searchers = 1; local ok = require("q") end))
package.searchers = saved
-- (lua.c runs the chunk from a C function, which ends its tracebacks with
-- "[C]: in ?"; that last line is not require's.)
local traceback = select(2, xpcall(require, debug.traceback, "bodyerror"))
show("traceback", (traceback:gsub("\n\t%[C%]: in %?$", "")))

show("done", require("plain") ~= nil)
