-- Checks Lunar's editor types and luacheck standard (what `lunar types` writes)
-- against the running API, so neither can drift from it. Run by
-- Tests/LunarCLITests/TypesCommandTests.swift:
--
--   lunar run --clock virtual Tests/lua/types_drift.lua LUACHECKRC ANNOTATION_FILE...
--
-- Nothing public is listed here: every module (each `lunar.*` entry of
-- package.preload, and `lunar`) is required and its fields walked; each
-- object is made once and its fields walked (methods from its metatable,
-- properties of Swift classes from the registry's `lunar.properties`); every
-- service an action can declare is reached through an action's context. Each
-- name must be annotated (`---@field`, or a `function C.name` / `C:name`), and
-- each annotation must name something that exists. A Swift class of objects
-- the walk met but did not check is reported too.
--
-- lua-language-server itself is not installable here (it is neither in Debian
-- nor fetchable), so the annotations are read by the small parser below, not
-- by the language server.
--
-- Prints one line per problem; the last line is
-- "types: N names checked, N problems".
local luacheckrc = assert(arg[1], "usage: types_drift.lua LUACHECKRC ANNOTATION_FILE...")

local problems = {}
local function problem(text) problems[#problems + 1] = text end
local checked = 0

-- MARK: The annotations

-- classes[name] = { members = { [name] = { private =, type = } }, parents = {...}, callable = bool }
local classes, globals, modules = {}, {}, {}

local function class_named(name)
  local c = classes[name]
  if not c then
    c = { members = {}, parents = {}, callable = false }
    classes[name] = c
  end
  return c
end

local function read_annotations(path)
  local file = assert(io.open(path))
  local text = file:read("a")
  file:close()
  local meta, returned
  local variables = {}     -- local or global variable -> class
  local current            -- the class the doc lines describe
  local private = false    -- the doc block holds ---@private
  for line in (text .. "\n"):gmatch("(.-)\n") do
    local doc = line:match("^%-%-%-(.*)$")
    if doc then
      local name = doc:match("^@meta%s+(%S+)")
      if name then meta = name end
      local class, parents = doc:match("^@class%s+([%w_.]+)%s*:?%s*(.*)$")
      if class then
        current = class_named(class)
        for parent in parents:gmatch("[%w_.]+") do current.parents[#current.parents + 1] = parent end
        current.name = class
      end
      if doc:match("^@alias") then current = nil end
      if doc:match("^@overload") and current then current.callable = true end
      if doc:match("^@private") then private = true end
      local field = doc:match("^@field%s+(.*)$")
      if field and current then
        local scope, rest = field:match("^(%a+)%s+(.*)$")
        if scope == "private" or scope == "protected" or scope == "package" or scope == "public" then
          field = rest
        else
          scope = nil
        end
        local key, after = field:match('^%["([^"]+)"%]%??%s*(.*)$')
        if not key then key, after = field:match("^([%a_][%w_]*)%??%s*(.*)$") end
        if key then
          current.members[key] = { private = scope == "private", type = after:match("^(%S+)") }
        end
      end
    else
      local variable = line:match("^local%s+([%a_][%w_]*)%s*=%s*{}") or line:match("^([%a_][%w_]*)%s*=%s*{}")
      if variable and current then
        variables[variable] = current
        if not line:match("^local") then globals[variable] = current end
      end
      local owner, name = line:match("^function%s+([%a_][%w_]*)[.:]([%a_][%w_]*)%s*%(")
      if owner then
        local c = variables[owner]
        if c then
          c.members[name] = { private = private, type = "function" }
        else
          problem(("%s: function %s.%s belongs to no class"):format(path, owner, name))
        end
      end
      returned = line:match("^return%s+([%a_][%w_]*)") or returned
      current, private = nil, false
    end
  end
  if meta then
    local c = returned and variables[returned]
    if not c then problem(("%s: ---@meta %s returns no class"):format(path, meta)) end
    modules[meta] = c
  end
end

for i = 2, #arg do read_annotations(arg[i]) end

-- A class's members with its parents'.
local function members_of(class)
  local all = {}
  local function add(c)
    for _, parent in ipairs(c.parents) do
      if classes[parent] then add(classes[parent]) end
    end
    for name, member in pairs(c.members) do all[name] = member end
  end
  add(class)
  return all
end

-- MARK: Comparing

local function sorted_keys(t)
  local keys = {}
  for key in pairs(t) do keys[#keys + 1] = key end
  table.sort(keys)
  return keys
end

-- Compares the names `runtime` (a set) with the annotations of class `name`;
-- with `partial`, only runtime names are required (data whose fields vary).
local function compare(label, runtime, name, partial)
  local class = classes[name]
  if not class then
    problem(("missing: %s has no class %s in the annotations"):format(label, name))
    return
  end
  local annotated = members_of(class)
  for _, key in ipairs(sorted_keys(runtime)) do
    checked = checked + 1
    if not annotated[key] then problem(("missing: %s.%s has no annotation (class %s)"):format(label, key, name)) end
  end
  if not partial then
    for _, key in ipairs(sorted_keys(annotated)) do
      if not runtime[key] then
        problem(("stale: %s.%s is annotated (class %s) but does not exist"):format(label, key, name))
      end
    end
  end
end

-- The string keys of `t`, raw.
local function raw_names(t)
  local names = {}
  for key in next, t do
    if type(key) == "string" then names[key] = true end
  end
  return names
end

-- MARK: Modules

local registry = debug.getregistry()
for name in pairs(package.preload) do
  if type(name) == "string" and name:match("^lunar%.") then require(name) end
end
local module_names = {}
for name, value in pairs(package.loaded) do
  if type(name) == "string" and (name == "lunar" or name:match("^lunar%.")) and type(value) == "table" then
    module_names[#module_names + 1] = name
  end
end
table.sort(module_names)
local is_module = {}
for _, name in ipairs(module_names) do is_module[package.loaded[name]] = name end

for _, name in ipairs(module_names) do
  local module = package.loaded[name]
  local class = modules[name]
  if not class then
    problem(("missing: module %s has no annotation file (---@meta %s)"):format(name, name))
  else
    compare(name, raw_names(module), class.name)
    local mt = getmetatable(module)
    local callable = type(mt) == "table" and rawget(mt, "__call") ~= nil
    if callable ~= class.callable then
      problem(("%s: module %s is %scallable but its class has %s ---@overload"):format(
        callable and "missing" or "stale", name, callable and "" or "not ", callable and "no" or "an"))
    end
  end
end
for name in pairs(modules) do
  if not package.loaded[name] then
    problem(("stale: annotation file for module %s, which does not exist"):format(name))
  end
end

-- Globals Lunar adds to Lua's: `lunar`, annotated as a global table.
for name, class in pairs(globals) do
  checked = checked + 1
  if _G[name] == nil then problem(("stale: global %s is annotated but does not exist"):format(name)) end
  if _G[name] ~= nil and is_module[_G[name]] and modules[is_module[_G[name]]] ~= class then
    problem(("global %s is annotated as %s, not as its module's class"):format(name, class.name))
  end
end
-- Every global the stock interpreter lacks is annotated.
local stock = {}
local interpreter = assert(io.popen([[lua5.4 -e "for k in pairs(_G) do print(k) end"]]))
for name in interpreter:lines() do stock[name] = true end
interpreter:close()
assert(stock.string and stock.print, "lua5.4 listed no globals")
for _, name in ipairs(sorted_keys(raw_names(_G))) do
  if not stock[name] then
    checked = checked + 1
    if not globals[name] then problem(("missing: the global %s has no annotation"):format(name)) end
  end
end

-- MARK: Objects

-- The methods behind an object's metatable: its __index table, or the table
-- a Swift class's index closure (methods, then properties) holds.
local function methods_of(object)
  local mt = getmetatable(object)
  local index = type(mt) == "table" and rawget(mt, "__index")
  if type(index) == "table" then return index end
  if type(index) == "function" then
    for i = 1, 4 do
      local name, value = debug.getupvalue(index, i)
      if name == nil then break end
      if type(value) == "table" then return value end
    end
  end
  return {}
end

local checked_classes = {}

-- An object's names: its methods and, for Swift objects, its properties; for
-- tables, their own fields too.
local function check_object(label, object, class, partial)
  local names = {}
  local mt = getmetatable(object)
  local index = methods_of(object)
  if index ~= object then
    for key, value in pairs(index) do
      if type(key) == "string" and not key:match("^__") and type(value) == "function" then names[key] = true end
    end
  end
  if type(object) == "table" then
    for key in pairs(raw_names(object)) do names[key] = true end
  end
  if type(object) == "userdata" then
    local swift_name = type(mt) == "table" and rawget(mt, "__name")
    assert(swift_name == class, label .. " is a " .. tostring(swift_name) .. ", not a " .. class)
    for _, property in ipairs((registry["lunar.properties"] or {})[swift_name] or {}) do names[property] = true end
    checked_classes[swift_name] = true
  end
  compare(label, names, class, partial)
end

local queue = require "lunar.queue"
local machine = require "lunar.machine"
local actions = require "lunar.actions"
local workflow = require "lunar.workflow"

local task = lunar.spawn(function() end)
check_object("task", task, "lunar.task")
task:await()

local q = queue.new("drift")
check_object("queue", q, "lunar.queue")

-- The default store (under the child's own XDG_STATE_HOME) keeps the job.
local durable = queue.new { name = "drift", durable = true }
check_object("durable queue", durable, "lunar.durable_queue")
local job = durable:submit("drift.never", 1)
check_object("durable job", job, "lunar.durable_job")
job:cancel()

local m = machine.new { name = "drift", initial = "idle", states = { idle = { on = { go = "idle" } } } }
check_object("machine", m, "lunar.machine")
check_object("machine test store", machine.test(m), "lunar.machine_test_store")

-- An action that declares every service: its context's fields are its own and
-- the services, each of the class its annotation names.
local services = actions.service_names()
local context
lunar.action("drift.context", { uses = services }, function(ctx) context = ctx end)
lunar.run("drift.context")
-- A context's names: its own fields, and the services and the methods of
-- class `name` (run, event, now) found through its metatable.
local function context_names(ctx, name)
  local names = raw_names(ctx)
  for _, service in ipairs(services) do names[service] = true end
  for member in pairs(classes[name] and members_of(classes[name]) or {}) do
    local found, value = pcall(function() return ctx[member] end)
    if not names[member] and found and type(value) == "function" then names[member] = true end
  end
  return names
end
compare("ctx", context_names(context, "lunar.action_context"), "lunar.action_context")
local context_class = classes["lunar.action_context"]
for _, service in ipairs(services) do
  local field = context_class and members_of(context_class)[service]
  if field and field.type then
    local object = context[service]
    if is_module[object] then
      if modules[is_module[object]] ~= classes[field.type] then
        problem(("ctx.%s is the module %s, annotated as %s"):format(service, is_module[object], field.type))
      end
    else
      check_object("ctx." .. service, object, field.type)
    end
  end
end

-- A workflow, its steps, and what its steps' functions receive.
local step_context, run_context
local wf = workflow "drift" {
  workflow.step "a" {
    with = function(ctx) step_context = ctx; return 1 end,
    run = function(ctx) run_context = ctx end,
  },
}
check_object("workflow", wf, "lunar.workflow")
check_object("step", wf.steps[1], "lunar.workflow.step", true)
workflow.execute(wf, { quiet = true })
check_object("step with() context", step_context, "lunar.workflow.context")
compare("step run() context", context_names(run_context, "lunar.workflow.run_context"), "lunar.workflow.run_context")

-- Every Swift class the walk met was checked.
for _, name in pairs(registry["lunar.classes"] or {}) do
  if not checked_classes[name] then problem(("missing: objects of class %s were not checked"):format(name)) end
end

-- MARK: The luacheck standard

local config = { stds = {}, files = {} }
assert(loadfile(luacheckrc, "t", config))()
local standard = config.stds.lunar and config.stds.lunar.read_globals and config.stds.lunar.read_globals.lunar
if not standard then
  problem(luacheckrc .. ": no stds.lunar.read_globals.lunar")
else
  -- The public (non-private) names of a module's class must be its fields in
  -- the standard; a field holding a module lists that module's; a field
  -- holding other data lets any subfield be read.
  local function compare_standard(label, value, class, definition)
    local fields = definition.fields or {}
    local public = {}
    for name, member in pairs(members_of(class)) do
      if not member.private then public[name] = true end
    end
    for _, name in ipairs(sorted_keys(public)) do
      checked = checked + 1
      local field = fields[name]
      local member = value[name]
      if not field then
        problem(("missing: luacheck's standard has no field %s.%s"):format(label, name))
      elseif is_module[member] and modules[is_module[member]] then
        compare_standard(label .. "." .. name, member, modules[is_module[member]], field)
      elseif type(member) == "table" and not field.other_fields then
        problem(("luacheck's standard: %s.%s holds a table: give it other_fields = true"):format(label, name))
      end
    end
    for _, name in ipairs(sorted_keys(fields)) do
      if not public[name] then
        problem(("stale: luacheck's standard lists %s.%s, not a public name in the annotations"):format(label, name))
      end
    end
  end
  if modules.lunar then compare_standard("lunar", lunar, modules.lunar, standard) end
end

for _, line in ipairs(problems) do print(line) end
print(("types: %d names checked, %d problems"):format(checked, #problems))
