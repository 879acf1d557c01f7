-- lunar.actions: the action runner, in Lua: chains, spans, the
-- declared-services rule, stubs and the journal, on top of the host
-- functions ActionModulePlugin.swift gives it for Swift actions,
-- services, spans and the journal (fields of M).
local M = ...
local lunar = require "lunar"
local actions = {}     -- name -> { uses = { name = true }, list = {...}, fn = function }
local stubs = nil      -- services replaced for the current stubbed run
local history = nil    -- { {name =, input =}, ... } during a stubbed run

local function describe(value)
  if type(value) == "string" then return value end
  local ok, text = pcall(tostring, value)
  return ok and text or "?"
end

local function summary(value)
  local text = type(value) == "table" and "table" or tostring(value)
  return #text > 80 and text:sub(1, 77) .. "..." or text
end

local services = {}
--- Registers a service object actions can declare (`http`, `store`, ...).
function M.service(name, object)
  if type(name) ~= "string" or name == "" then
    error(("bad argument #1 to 'service' (service name expected, got %s)")
      :format(name == "" and "an empty string" or type(name)), 2)
  end
  if object == nil then error("bad argument #2 to 'service' (service object expected, got nil)", 2) end
  services[name] = object
end

--- True if `name` is a service an action may declare: one registered
--- from Lua so far, or one Swift registered for the run (a plugin's,
--- such as `launches`, even before its module is required).
function M.is_service(name)
  if services[name] ~= nil then return true end
  for _, swift in ipairs(M.swift_services()) do
    if swift == name then return true end
  end
  return false
end

--- The names of the services `is_service` knows, sorted.
function M.service_names()
  local seen, names = {}, {}
  for name in pairs(services) do seen[name] = true end
  for _, name in ipairs(M.swift_services()) do seen[name] = true end
  for name in pairs(seen) do names[#names + 1] = name end
  table.sort(names)
  return names
end

-- True if `t` is a table whose keys are exactly 1..n.
local function is_list(t)
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == #t and (count == 0 or rawget(t, count) ~= nil)
end

--- lunar.action(name, { uses = { ... } }, function(ctx, input) ... end)
function M.define(name, options, fn)
  if type(name) ~= "string" or name == "" then
    error(("bad argument #1 to 'action' (action name expected, got %s)")
      :format(name == "" and "an empty string" or type(name)), 2)
  end
  if type(options) == "function" and fn == nil then options, fn = {}, options end
  if type(options) ~= "table" then
    error(("bad argument #2 to 'action' (table expected, got %s)"):format(type(options)), 2)
  end
  if type(fn) ~= "function" then
    error(("bad argument #3 to 'action' (function expected, got %s)"):format(type(fn)), 2)
  end
  for key in pairs(options) do
    if key ~= "uses" then
      local shown = type(key) == "string" and ("'" .. key .. "'") or ("[" .. tostring(key) .. "]")
      error(("bad argument #2 to 'action' (unknown field %s (fields are uses))"):format(shown), 2)
    end
  end
  local declared = options.uses or {}
  if type(declared) ~= "table" or not is_list(declared) then
    error(("bad argument #2 to 'action' (field 'uses' must be a list of service names, got %s)")
      :format(type(declared) == "table" and "a table with other keys" or type(declared)), 2)
  end
  local uses, list = {}, {}
  for i, service in ipairs(declared) do
    if type(service) ~= "string" then
      error(("bad argument #2 to 'action' (uses[%d] must be a service name, got %s)"):format(i, type(service)), 2)
    end
    if not M.is_service(service) then
      error(("bad argument #2 to 'action' (uses[%d] names an unknown service '%s' (services are %s))")
        :format(i, service, table.concat(M.service_names(), ", ")), 2)
    end
    uses[service] = true
    list[#list + 1] = service
  end
  actions[name] = { uses = uses, list = list, fn = fn, copied = true }
end


--- The function of the Lua action `name`, or nil (a Swift action, or
--- none): part of the code of a workflow step that uses it.
function M.definition(name)
  local action = actions[name]
  return action and action.fn
end

-- The services an action declared, checked: `uses` (name -> true) and
-- `list` (in declaration order), and the metatable of its contexts (made
-- with the record, see `context_metatable`).
local NO_SERVICES, NO_LIST = {}, {}
local context_metatable

--- The record of the services in `names` (a list of known service names,
--- or nil: none), for `define_checked` and `run_declared`; each name must
--- be a string (`fname` names the function in the error).
local function declared_services(names, fname)
  if names ~= nil and type(names) ~= "table" then
    error(("bad argument #2 to '%s' (table expected, got %s)"):format(fname, type(names)), 3)
  end
  local uses, list = NO_SERVICES, NO_LIST
  if names and #names > 0 then
    uses, list = {}, {}
    for i, service in ipairs(names) do
      if type(service) ~= "string" then
        error(("bad argument #2 to '%s' (services[%d] must be a service name, got %s)")
          :format(fname, i, type(service)), 3)
      end
      uses[service] = true
      list[i] = service
    end
  end
  return uses, list
end

--- Registers an action whose name and services its caller has already
--- checked (a worker process's workflow steps): `names` is a list of
--- known service names.
function M.define_checked(name, names, fn)
  -- Only the types are checked here: cheap, and enough that a wrong
  -- call is the caller's error, never one inside this module.
  if type(name) ~= "string" or name == "" then
    error(("bad argument #1 to 'define_checked' (action name expected, got %s)")
      :format(name == "" and "an empty string" or type(name)), 2)
  end
  local uses, list = declared_services(names, "define_checked")
  if type(fn) ~= "function" then
    error(("bad argument #3 to 'define_checked' (function expected, got %s)"):format(type(fn)), 2)
  end
  -- The workflow reads its steps' inputs and outputs as values itself,
  -- each error naming the step: no copy here.
  actions[name] = { uses = uses, list = list, fn = fn, copied = false }
end

--- The context metatable of an action, not registered, that declares
--- the services in `names` (checked as `define_checked` checks them): for
--- `run_declared`. Every action declaring none shares one.
function M.declare(names)
  local uses, list = declared_services(names, "declare")
  return context_metatable(uses, list)
end

-- What every action context shares; the context holds its action's
-- name and chain.
local function context_run(ctx, next_name, input) return M.run(next_name, input, ctx.chain, ctx.attempt) end
local function context_event(ctx, event, fields)
  local f = { action = ctx.action, event = event }
  for k, v in pairs(fields or {}) do f[k] = v end
  M.emit("action.event", f)
end
local function context_now() return lunar.now() end
-- Found through every context's metatable, not kept in each context: a
-- workflow makes a context per step, and three fields fewer halve its size.
local CONTEXT_METHODS = { run = context_run, event = context_event, now = context_now }

-- What `ctx[key]` is in the context of the action `name`, which declared
-- the services in `uses` (`list` in order): a declared service, nil for a
-- key that names no service, and an error for an undeclared one.
local function context_service(key, name, uses, list)
  -- A plugin's service (`launches`) gets its Lua face when its
  -- module loads: load it for an action that declared the service.
  if services[key] == nil and uses[key] and package.loaded["lunar." .. key] == nil
    and package.preload["lunar." .. key] ~= nil then
    require("lunar." .. key)
  end
  if services[key] == nil and (stubs == nil or stubs[key] == nil) then return nil end
  if not uses[key] then
    error(("action '%s' did not declare service '%s' (it uses: %s)")
      :format(name, key, #list > 0 and table.concat(list, ", ") or "nothing"), 3)
  end
  if stubs and stubs[key] ~= nil then return stubs[key] end
  return services[key]
end

-- The metatable of registered actions' contexts: it finds the services
-- the context's action declared (its name is the context's `action`).
local CONTEXT = {
  __index = function(ctx, key)
    local method = CONTEXT_METHODS[key]
    if method ~= nil then return method end
    local name = rawget(ctx, "action")
    local action = actions[name]
    if action == nil then return nil end
    return context_service(key, name, action.uses, action.list)
  end,
}

-- The metatables of unregistered actions' contexts, by their services.
-- Those `declare` made, for `run_declared` to know them.
local NO_SERVICES_CONTEXT
local declarations = setmetatable({}, { __mode = "k" })
function context_metatable(uses, list)
  if uses == NO_SERVICES and NO_SERVICES_CONTEXT then return NO_SERVICES_CONTEXT end
  local meta = {
    __index = function(ctx, key)
      local method = CONTEXT_METHODS[key]
      if method ~= nil then return method end
      return context_service(key, rawget(ctx, "action"), uses, list)
    end,
  }
  if uses == NO_SERVICES then NO_SERVICES_CONTEXT = meta end
  declarations[meta] = true
  return meta
end

local function make_context(name, chain, attempt)
  return setmetatable({ action = name, chain = chain, attempt = attempt or 1 }, CONTEXT)
end

-- Plugins asked for an action they might provide, each required once:
-- plugin name -> what "unknown action" adds if the action is still missing.
local providers = {}
local package, require = package, require

--- Loads the plugin that may provide the action `NAME.x` nobody has
--- defined yet: module `NAME` (or the Swift plugin's `lunar.NAME`), by
--- `require`, from `package.preload` or the plugin path. Returns nil
--- when there is nothing to try, else what to add to "unknown action".
local function load_provider(name)
  local plugin = name:match("^(.+)%.[^.]+$")
  if plugin == nil then return nil end
  if providers[plugin] == nil then
    local module = plugin
    if package.preload[plugin] == nil and package.loaded[plugin] == nil
      and package.preload["lunar." .. plugin] ~= nil then
      module = "lunar." .. plugin
    end
    providers[plugin] = (" (plugin '%s' is still loading)"):format(module)
    local ok, err = pcall(require, module)
    -- A task cancelled while the plugin loads stays cancelled.
    if not ok and rawequal(err, lunar.cancelled) then
      providers[plugin] = nil
      error(err, 0)
    end
    local not_found = ("module '%s' not found:"):format(module)
    if ok then
      providers[plugin] = (" (plugin '%s' does not define it)"):format(module)
    elseif type(err) == "string" and err:sub(1, #not_found) == not_found then
      providers[plugin] = (": no plugin '%s' provides it (%s)"):format(plugin, err)
    else
      providers[plugin] = (": plugin '%s' failed to load: %s"):format(module, describe(err))
    end
  end
  return providers[plugin]
end

-- The chain of the action running in a task is task-local, so that
-- `lunar.run` inside an action, or in a task it spawned, is a level
-- deeper.
local NO_CHAIN = {}
local copy, current_chain, set_chain = M.copy, M.chain, M.set_chain
-- Kept out of scripts' reach: a script must not reset its own depth.
M.copy, M.chain, M.set_chain = nil, nil, nil

-- An action's input and output cross as values do into Swift: a copy,
-- so neither side sees the other's later changes.
local function crossing(value, root)
  local kind = type(value)
  if kind == "table" or kind == "function" or kind == "userdata" or kind == "thread" then return copy(value, root) end
  return value
end

-- The chain of an action `name` run below `chain`; an error at the line
-- that runs it if that is deeper than the limit.
local function deeper(chain, name)
  -- The limit is at least 1.
  if chain[1] == nil then return { name } end
  local next_chain = {}
  for i, n in ipairs(chain) do next_chain[i] = n end
  next_chain[#next_chain + 1] = name
  if #chain >= M.limit then
    error(("action chain deeper than %d: %s"):format(M.limit, table.concat(next_chain, " → ")), 3)
  end
  return next_chain
end

-- Runs the Lua action `name` (function `fn`) with `input` in the context
-- `ctx`: the task's chain `next_chain` (`chain` a level deeper) while it
-- runs, and `outer`, its chain until then, after, unless `restores` is
-- false or nil (a workflow step's task ends with its action); the journal and
-- the trace events; `copied` inputs and outputs cross as values.
local function invoke(name, fn, copied, input, chain, next_chain, outer, restores, ctx)
  if copied then input = crossing(input, "input") end
  if history then history[#history + 1] = { name = name, input = input } end
  local journaling, tracing = M.journaling, M.tracing()
  if journaling then M.journal("action", { name = name, input = input }) end
  local started
  if tracing then
    started = lunar.now()
    M.emit("action.started", { action = name, depth = #chain, input = summary(input) })
  end
  set_chain(next_chain)
  local ok, output = pcall(fn, ctx, input)
  if restores then set_chain(outer) end
  -- An output that cannot cross fails the action, at the caller's line.
  local level = 0
  if ok and copied then
    ok, output = pcall(crossing, output, "output")
    if not ok then output, level = ("action '%s' returned %s"):format(name, describe(output)), 2 end
  end
  if not ok then
    if tracing then
      M.emit("action.failed", { action = name, duration = lunar.now() - started, error = describe(output) })
    end
    if journaling and M.replaying() then
      -- The action's own error is the one to raise; a divergence found
      -- here stays with the step and stops its next call.
      pcall(M.journal, "result", { name = name }, nil)
    elseif journaling then
      M.journal("result", { name = name }, { error = describe(output) })
    end
    error(output, level)
  end
  if tracing then M.emit("action.finished", { action = name, duration = lunar.now() - started }) end
  if journaling then M.journal("result", { name = name }, { output = output }) end
  return output
end

--- Runs the action `name` (Lua or Swift) with `input`, below `chain`
--- (by default the chain of the action running in this task, if any);
--- its context's `attempt` is `attempt` (a durable job's), else 1.
function M.run(name, input, chain, attempt)
  if type(name) ~= "string" then error(("bad argument #1 to 'run' (string expected, got %s)"):format(type(name)), 2) end
  local outer = current_chain()
  chain = chain or outer or NO_CHAIN
  local next_chain = deeper(chain, name)
  local action = actions[name]
  if action == nil and not M.has_swift(name) then
    local problem = load_provider(name)
    action = actions[name]
    if action == nil and not M.has_swift(name) then
      error(("unknown action '%s'%s"):format(name, problem or ""), 2)
    end
  end
  if action == nil then
    if history then history[#history + 1] = { name = name, input = input } end
    return M.swift_run(name, input, chain, attempt)
  end
  return invoke(name, action.fn, action.copied, input, chain, next_chain, outer, true,
    make_context(name, next_chain, attempt))
end

-- `run_declared`, its arguments known to be right, below the chain
-- `outer`; the task's chain is put back after only if `restores` is true.
-- The workflow runner calls it for every step without `restores`: the
-- step's task ends with its action. The context is made at its size at
-- once. A tail call of it keeps the caller of `run_declared` two levels up.
local function run_declared(name, fn, meta, input, attempt, workflow, step, steps, outer, restores)
  local chain = outer or NO_CHAIN
  local next_chain = deeper(chain, name)
  local ctx = setmetatable({ action = name, chain = next_chain, attempt = attempt or 1, workflow = workflow,
    step = step, steps = steps }, meta)
  if restores or history or M.journaling or M.tracing() then
    return invoke(name, fn, false, input, chain, next_chain, outer, restores, ctx)
  end
  -- What `invoke` does when nothing records the run and the chain is not
  -- put back (a workflow step's task ends with its action).
  set_chain(next_chain)
  local ok, output = pcall(fn, ctx, input)
  if not ok then error(output, 0) end
  return output
end
local declared_runner = run_declared

--- Runs `fn` as the Lua action `name` would run were it registered with
--- `fn` (chain, journal, trace events), without registering it: a
--- workflow step's action. Its context has the services `meta` (from
--- `declare`) declares, and the step's `workflow`, `step` and `steps`;
--- inputs and outputs are not copied (the workflow checks them itself).
function M.run_declared(name, fn, meta, input, attempt, workflow, step, steps)
  -- Only the types are checked, as `define_checked` does.
  local problem
  if type(name) ~= "string" then problem = ("#1 to 'run_declared' (string expected, got %s)"):format(type(name))
  elseif type(fn) ~= "function" then problem = ("#2 to 'run_declared' (function expected, got %s)"):format(type(fn))
  elseif not declarations[meta] then problem = "#3 to 'run_declared' (a declaration from 'declare' expected)"
  elseif attempt ~= nil and math.type(attempt) ~= "integer" then
    problem = ("#5 to 'run_declared' (integer expected, got %s)"):format(type(attempt))
  elseif type(workflow) ~= "string" then
    problem = ("#6 to 'run_declared' (string expected, got %s)"):format(type(workflow))
  elseif type(step) ~= "string" then problem = ("#7 to 'run_declared' (string expected, got %s)"):format(type(step))
  elseif type(steps) ~= "table" then problem = ("#8 to 'run_declared' (table expected, got %s)"):format(type(steps))
  end
  if problem then error("bad argument " .. problem, 2) end
  return run_declared(name, fn, meta, input, attempt, workflow, step, steps, current_chain(), true)
end

--- Internal: for the workflow runner, handed over once: `run_declared`
--- without its checks (every step passes what `declare` gave it), run
--- below a chain it is given, and the function that reads the running
--- task's chain.
function M._take_declared_runner()
  local runner = declared_runner
  declared_runner = nil
  return runner, runner and current_chain
end

--- Runs the action of a durable job a worker claimed (`attempt`: its
--- claims so far); an action this worker does not know is an error
--- that says so.
local function run_job(name, input, attempt)
  if actions[name] == nil and not M.has_swift(name) then
    local problem = load_provider(name)
    if actions[name] == nil and not M.has_swift(name) then
      error(("unknown action '%s'%s: the worker that ran this job does not define it"):format(name, problem or ""), 0)
    end
  end
  return (M.run(name, input, nil, attempt))
end
-- Kept by the host, out of scripts' reach.
M.keep_job_runner(run_job)
M.keep_job_runner = nil

--- Runs an action with some services replaced; returns its output and
--- the list of actions that ran with their inputs.
function M.run_stubbed(replaced, name, input)
  if type(replaced) ~= "table" then
    error(("bad argument #1 to 'run_stubbed' (table expected, got %s)"):format(type(replaced)), 2)
  end
  if type(name) ~= "string" then
    error(("bad argument #2 to 'run_stubbed' (string expected, got %s)"):format(type(name)), 2)
  end
  local saved_stubs, saved_history = stubs, history
  stubs, history = replaced, {}
  local runs = history
  local ok, output = pcall(M.run, name, input)
  stubs, history = saved_stubs, saved_history
  if not ok then error(output, 0) end
  return output, runs
end

--- The names of every action, Lua and Swift.
function M.list()
  local names = {}
  for name in pairs(actions) do names[#names + 1] = name end
  for _, name in ipairs(M.swift_names()) do names[#names + 1] = name end
  table.sort(names)
  return names
end

--- Changes the recursion limit.
function M.set_limit(n)
  if math.type(n) ~= "integer" or n < 1 then error("bad argument #1 to 'set_limit' (positive integer expected)", 2) end
  M.limit = n
end

lunar.action = M.define
-- Not a tail call: tracebacks name the function the script called.
lunar.run = function(name, input) return (M.run(name, input)) end
lunar.run_stubbed = M.run_stubbed
