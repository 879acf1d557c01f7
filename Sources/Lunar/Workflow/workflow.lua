-- lunar.workflow: the declarative layer. A workflow is a set of named
-- steps; each runs as an action (spans, services, journal), after the steps
-- it needs, at most `jobs` at a time.
--
--   local workflow = require "lunar.workflow"
--   local step = workflow.step
--   return workflow "report" {
--     step "fetch" { uses = "launches.upcoming", with = { limit = 10 } },
--     step "next"  { needs = { "fetch" }, run = function(ctx) return ctx.steps.fetch.output[1] end },
--   }
local M = ...
-- Host functions (journal, fingerprints, wall time) arrive as M._host.
local host = M._host
M._host = nil
local lunar = require "lunar"
local actions = require "lunar.actions"
local queue = require "lunar.queue"
-- Kept when the module loads: a step's code is read with them (see
-- step_code). Under --sandbox `debug` is gone, and only a step's own
-- function and every module loaded from a file count.
local string_dump, getupvalue, getinfo = string.dump, debug and debug.getupvalue, debug and debug.getinfo

local WORKFLOW = { __name = "lunar.workflow" }
WORKFLOW.__index = WORKFLOW
local STEP = { __name = "lunar.workflow.step" }

local KNOWN = {
  uses = true, run = true, with = true, needs = true, queue = true, durable = true, retry = true, timeout = true,
  ["if"] = true, when = true, continue_on_error = true, services = true, description = true,
  cache = true, version = true, map = true, max_parallel = true,
}

-- caller(level): the short source (`x.lua`) and current line of the
-- function `level` frames up, as debug.getinfo(level, "Sl") reads them but
-- without its table (a workflow may define tens of thousands of steps).
local caller = host.caller

-- The needs of a step that needs nothing, shared (never changed).
local NO_NEEDS = setmetatable({}, { __newindex = function() error("a step's needs cannot be changed", 2) end })

-- A number as a message shows it: the value if it is one, else its type.
local function shown(value)
  return type(value) == "number" and tostring(value) or type(value)
end

-- Seconds: a number that is neither NaN nor infinite.
local function is_seconds(value)
  return type(value) == "number" and value == value and value > -math.huge and value < math.huge
end

-- True if `t` is a table whose keys are exactly 1..n.
local function is_list(t)
  if type(t) ~= "table" then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == #t and (count == 0 or rawget(t, count) ~= nil)
end

-- A key as a message shows it: 'name', or [1].
local function key_shown(key)
  return type(key) == "string" and ("'%s'"):format(key) or ("[%s]"):format(tostring(key))
end

-- A step's fields are given where it is defined: one added later would
-- bypass the checks, and the runner reads a usual step's fields only
-- (`extended` marks the others).
STEP.__newindex = function(s, key)
  error(("step \"%s\": field %s cannot be added to a defined step (give it in step \"%s\" { ... })")
    :format(rawget(s, "name"), key_shown(key), rawget(s, "name")), 2)
end

-- The fields most steps have: a step with no others is checked for these
-- alone (a workflow may define tens of thousands of steps).
local COMMON = { uses = true, run = true, with = true, needs = true }

-- Checks the fields of a step definition `s`, made from the fields `spec`
-- the user gave; returns a message for the first bad one (its name in
-- quotes), or nil. `common`: it has no field but those in COMMON.
local function check_step(s, spec, common)
  if not common then
    for key in pairs(spec) do
      if not KNOWN[key] then return ("unknown field %s"):format(key_shown(key)) end
    end
  end
  if (s.uses == nil) == (s.run == nil) then
    return "needs exactly one of 'uses' (an action name) or 'run' (a function)"
  end
  if s.uses ~= nil and (type(s.uses) ~= "string" or s.uses == "") then
    return ("'uses' must be an action name, got %s")
      :format(type(s.uses) == "string" and "an empty string" or type(s.uses))
  end
  if s.run ~= nil and type(s.run) ~= "function" then return ("'run' must be a function, got %s"):format(type(s.run)) end
  if s.with ~= nil and type(s.with) ~= "table" and type(s.with) ~= "function" then
    return ("'with' must be a table or a function, got %s"):format(type(s.with))
  end
  local needs = spec.needs
  -- A list of one name, the usual case, is known without a walk: 1 is its
  -- first key and its last.
  local one_name = type(needs) == "table" and type(rawget(needs, 1)) == "string" and next(needs, 1) == nil
    and next(needs) == 1
  if needs ~= nil and type(needs) ~= "string" and not one_name then
    if not is_list(needs) then
      return ("'needs' must be a list of step names, got %s")
        :format(type(needs) == "table" and "a table with other keys" or type(needs))
    end
    for i, need in ipairs(needs) do
      if type(need) ~= "string" then return ("needs[%d] must be a step name, got %s"):format(i, type(need)) end
    end
  end
  if common then return nil end
  if s.map ~= nil and type(s.map) ~= "function" then
    return ("'map' must be a function returning the list of items, got %s"):format(type(s.map))
  end
  if s.map ~= nil and s.with ~= nil and type(s.with) ~= "function" then
    return ("'with' of a step with 'map' must be a function (ctx, item), got %s"):format(type(s.with))
  end
  if s.max_parallel ~= nil then
    if s.map == nil then return "'max_parallel' is for a step with 'map'" end
    if math.type(s.max_parallel) ~= "integer" or s.max_parallel < 1 then
      return ("'max_parallel' must be a positive integer, got %s"):format(shown(s.max_parallel))
    end
  end
  if s.retry ~= nil then
    if type(s.retry) ~= "table" or math.type(s.retry.attempts) ~= "integer" or s.retry.attempts < 1 then
      return "'retry' must be { attempts = N (≥ 1), backoff = seconds }"
    end
    for key in pairs(s.retry) do
      if key ~= "attempts" and key ~= "backoff" then
        return ("'retry' has an unknown field %s (fields are attempts, backoff)"):format(key_shown(key))
      end
    end
    if s.retry.backoff ~= nil and (not is_seconds(s.retry.backoff) or s.retry.backoff < 0) then
      return ("'retry.backoff' must be a non-negative number of seconds, got %s"):format(shown(s.retry.backoff))
    end
  end
  if s.timeout ~= nil and (not is_seconds(s.timeout) or s.timeout <= 0) then
    return ("'timeout' must be a positive number of seconds, got %s"):format(shown(s.timeout))
  end
  if spec["if"] ~= nil and spec.when ~= nil then return "give 'if' or 'when', not both" end
  local condition = spec["if"] ~= nil and "if" or "when"
  if s[condition] ~= nil and type(s[condition]) ~= "function" then
    return ("'%s' must be a function, got %s"):format(condition, type(s[condition]))
  end
  if s.queue ~= nil and (type(s.queue) ~= "string" or s.queue == "") then
    return ("'queue' must be a queue name, got %s")
      :format(type(s.queue) == "string" and "an empty string" or type(s.queue))
  end
  if s.durable ~= nil and type(s.durable) ~= "boolean" then
    return ("'durable' must be true or false, got %s"):format(type(s.durable))
  end
  if s.durable and (s.queue == nil or s.uses == nil) then
    return "'durable' needs 'queue' (the durable queue) and 'uses' (the action a worker runs)"
  end
  if s.continue_on_error ~= nil and type(s.continue_on_error) ~= "boolean" then
    return ("'continue_on_error' must be true or false, got %s"):format(type(s.continue_on_error))
  end
  if s.cache ~= nil and s.cache ~= "code" and s.cache ~= "inputs" then
    return ("'cache' must be \"code\" or \"inputs\", got %s")
      :format(type(s.cache) == "string" and ("\"" .. s.cache .. "\"") or type(s.cache))
  end
  if s.version ~= nil and (type(s.version) ~= "string" or s.version == "") then
    return ("'version' must be a non-empty string, got %s")
      :format(type(s.version) == "string" and "an empty string" or type(s.version))
  end
  if s.version ~= nil and s.cache == "inputs" then return "give 'version' or cache = \"inputs\", not both" end
  if s.description ~= nil and type(s.description) ~= "string" then
    return ("'description' must be a string, got %s"):format(type(s.description))
  end
  if s.services ~= nil then
    if s.uses ~= nil then return "'services' is for 'run' steps (an action declares the services it uses)" end
    if not is_list(s.services) then
      return ("'services' must be a list of service names, got %s")
        :format(type(s.services) == "table" and "a table with other keys" or type(s.services))
    end
    for i, service in ipairs(s.services) do
      if type(service) ~= "string" then
        return ("services[%d] must be a service name, got %s"):format(i, type(service))
      end
      if not actions.is_service(service) then
        return ("services[%d] names an unknown service '%s' (services are %s)")
          :format(i, service, table.concat(actions.service_names(), ", "))
      end
    end
  end
end

-- The step `name` from the fields `spec` (a table) the user gave at
-- `src`:`line`: for the definitions the C definer does not make itself (a
-- field other than `uses`, `run`, `with` and `needs`, or a bad one).
-- Returns the step, or nil and the message raised at the definition.
local function make_step(name, spec, src, line)
  local needs = spec.needs
  local s = {
    name = name, src = src, line = line, run = spec.run, uses = spec.uses, with = spec.with,
    needs = needs or NO_NEEDS, index = 0,
  }
  local common = true
  for key, value in pairs(spec) do
    if not COMMON[key] then
      common = false
      if KNOWN[key] then s[key] = value end
    end
  end
  local problem = check_step(s, spec, common)
  if problem then return nil, ("step \"%s\": %s"):format(name, problem) end
  if not common then
    s["if"] = s["if"] or s.when
    s.extended = true
  end
  if type(needs) == "string" then s.needs = { needs } end
  return setmetatable(s, STEP)
end

--- step "name" { ... }: a step definition; a bad field is an error at the
--- caller's line naming the step and the field. The usual definition is
--- made in C (host.step_definer), any other by `make_step`.
M.step = host.step_definer(STEP, NO_NEEDS, make_step)

-- Never called: the runner sleeps for a sleep step (see `sleep_step`).
local function sleeping() error("a sleep or wait step has no action", 2) end

-- A sleep or wait step (`kind`) from its step fields, defined at line
-- `line` of `src`; a bad field is an error at the user's line.
local function waiting_step(kind, name, fields, src, line)
  fields.run = sleeping
  local s = { name = name, src = src, line = line, index = 0 }
  for key, value in pairs(fields) do s[key] = value end
  local problem = check_step(s, fields)
  if problem then error(("%s \"%s\": %s"):format(kind, name, problem), 3) end
  s["if"] = s["if"] or s.when
  s.extended = true
  s.needs = s.needs or NO_NEEDS
  if type(s.needs) == "string" then s.needs = { s.needs } end
  return setmetatable(s, STEP)
end

-- The definer of a waiting step of `kind` (`workflow.sleep`,
-- `workflow.wait`): it takes the fields in `known` (`takes` lists them in
-- messages); `own(spec)` checks the kind's own fields and returns them as
-- a table, or nil and the problem.
local function waiting_definer(kind, known, takes, own)
  return function(name)
    if type(name) ~= "string" or name == "" then
      error(("bad argument #1 to '%s' (step name expected, got %s)")
        :format(kind, name == "" and "an empty string" or type(name)), 2)
    end
    return function(spec)
      if type(spec) ~= "table" then
        error(("%s \"%s\": expected a table of fields, got %s"):format(kind, name, type(spec)), 2)
      end
      local fields, problem, mine = {}, nil, nil
      for key, value in pairs(spec) do
        if not known[key] then
          problem = ("unknown field %s (a %s takes %s)"):format(key_shown(key), kind, takes)
          break
        end
        fields[key] = value
      end
      if not problem then mine, problem = own(spec) end
      if problem then error(("%s \"%s\": %s"):format(kind, name, problem), 2) end
      for key in pairs(mine) do fields[key] = nil end
      local s = waiting_step(kind, name, fields, caller(2))
      rawset(s, kind, mine)
      return s
    end
  end
end

--- workflow.sleep "name" { seconds = N } or { until = function(ctx) return
--- epoch_seconds end }: a step that waits, on the runtime clock, until its
--- deadline, recorded in the run's store when the wait starts.
M.sleep = waiting_definer("sleep",
  { seconds = true, ["until"] = true, needs = true, description = true, ["if"] = true, when = true },
  "seconds or until, needs, if, description",
  function(spec)
    local seconds, until_ = spec.seconds, spec["until"]
    if (seconds == nil) == (until_ == nil) then
      return nil, "needs exactly one of 'seconds' (a number) or 'until' (a function returning epoch seconds)"
    elseif seconds ~= nil and (not is_seconds(seconds) or seconds < 0) then
      return nil, ("'seconds' must be a non-negative number, got %s"):format(shown(seconds))
    elseif until_ ~= nil and type(until_) ~= "function" then
      return nil, ("'until' must be a function, got %s"):format(type(until_))
    end
    return { seconds = seconds, ["until"] = until_ }
  end)

--- workflow.wait "name" { signal = "approve", timeout = seconds }: a step
--- that waits for the signal (`lunar runs signal RUN approve VALUE`) and
--- outputs its value; with a timeout, it fails if none comes in time.
M.wait = waiting_definer("wait",
  { signal = true, timeout = true, needs = true, description = true, ["if"] = true, when = true },
  "signal, timeout, needs, if, description",
  function(spec)
    local signal, timeout = spec.signal, spec.timeout
    if type(signal) ~= "string" or signal == "" then
      return nil, ("'signal' must be a signal name, got %s"):format(signal == "" and "an empty string" or type(signal))
    elseif timeout ~= nil and (not is_seconds(timeout) or timeout <= 0) then
      return nil, ("'timeout' must be a positive number of seconds, got %s"):format(shown(timeout))
    end
    return { signal = signal, timeout = timeout }
  end)

--- workflow "name" { step ..., ... }: checks the graph and returns the workflow.
-- "file:line: " of a step's definition (the workflow call itself is often a
-- tail call, `return workflow "x" {...}`, which leaves no position).
local function at(s)
  if not s or not s.line or s.line < 0 then return "" end
  return s.src .. ":" .. s.line .. ": "
end

local byte, CLOSING_BRACKET = string.byte, string.byte("]")

local function define(name, steps, where)
  if type(steps) ~= "table" then
    error(where .. ("workflow \"%s\": expected a list of steps, got %s"):format(name, type(steps)), 0)
  end
  local count = #steps
  -- The key that is not a list position, for a table that has one.
  local function not_a_list()
    for key in pairs(steps) do
      if math.type(key) ~= "integer" or key < 1 or key > count then
        error(where .. ("workflow \"%s\": %s is not a list position (give the steps as a list)")
          :format(name, key_shown(key)), 0)
      end
    end
  end
  local keys = 0
  for _ in pairs(steps) do keys = keys + 1 end
  -- As many keys as positions: a list, unless a position is missing.
  if keys ~= count then not_a_list() end
  local wf = setmetatable({ name = name, steps = {}, by_name = {} }, WORKFLOW)
  local declared, by_name = wf.steps, wf.by_name
  -- Whether a step fans out: only then can a name clash with a child's.
  local maps = false
  for i = 1, count do
    local s = steps[i]
    if s == nil then not_a_list() end
    if getmetatable(s) ~= STEP then
      error(where .. ("workflow \"%s\": item %d is not a step (use step \"name\" { ... })"):format(name, i), 0)
    end
    local step_name = s.name
    if by_name[step_name] then error(at(s) .. ("workflow \"%s\": duplicate step \"%s\""):format(name, step_name), 0) end
    s.index = i
    declared[i] = s
    by_name[step_name] = s
    if s.extended and s.map then maps = true end
  end
  -- Whether a step needs one declared at or after it: only then can the
  -- steps form a cycle (declaration order is an order of the rest).
  local needs_later = false
  for _, s in ipairs(declared) do
    -- `x[2]` is the name of a child of a mapped step `x`: no other step may have it.
    local parent = maps and byte(s.name, -1) == CLOSING_BRACKET and s.name:match("^(.*)%[%d+%]$")
    if parent and by_name[parent] and by_name[parent].map then
      error(at(s) .. ("workflow \"%s\": step \"%s\" has the name of a child of step \"%s\", which has 'map'")
        :format(name, s.name, parent), 0)
    end
    local needs = s.needs
    if needs ~= NO_NEEDS then
      for _, need in ipairs(needs) do
        local needed = by_name[need]
        if not needed then
          error(at(s) .. ("step \"%s\": needs unknown step \"%s\""):format(s.name, tostring(need)), 0)
        end
        if need == s.name then error(at(s) .. ("step \"%s\": needs itself"):format(s.name), 0) end
        if needed.index > s.index then needs_later = true end
      end
    end
  end
  -- Cycles: Kahn's algorithm, on positions, counts the steps it can order;
  -- only when some are left does a depth-first search find the cycle to
  -- name.
  local ordered = count
  if needs_later then
    local waiting, dependents, ready = {}, {}, {}
    local all = wf.steps
    for i = 1, count do
      local needs = all[i].needs
      waiting[i] = #needs
      if #needs == 0 then ready[#ready + 1] = i end
      for _, need in ipairs(needs) do
        local at_need = by_name[need].index
        local list = dependents[at_need]
        if not list then list = {}; dependents[at_need] = list end
        list[#list + 1] = i
      end
    end
    ordered = 0
    while #ready > 0 do
      local i = ready[#ready]
      ready[#ready] = nil
      ordered = ordered + 1
      for _, dependent in ipairs(dependents[i] or NO_NEEDS) do
        waiting[dependent] = waiting[dependent] - 1
        if waiting[dependent] == 0 then ready[#ready + 1] = dependent end
      end
    end
  end
  if ordered < count then
    local colour = {}
    local function visit(s, path)
      colour[s.name] = "grey"
      path[#path + 1] = s.name
      for _, need in ipairs(s.needs) do
        if colour[need] == "grey" then
          path[#path + 1] = need
          error(at(s) .. ("workflow \"%s\": steps form a cycle: %s"):format(name, table.concat(path, " → ")), 0)
        elseif colour[need] == nil then
          visit(wf.by_name[need], path)
        end
      end
      path[#path] = nil
      colour[s.name] = "black"
    end
    for _, s in ipairs(wf.steps) do
      if colour[s.name] == nil then
        local ok, err = pcall(visit, s, {})
        if not ok then error(err, 0) end
      end
    end
  end
  return wf
end

setmetatable(M, { __call = function(_, name)
  if type(name) ~= "string" or name == "" then
    error(("bad argument #1 to 'workflow' (workflow name expected, got %s)")
      :format(name == "" and "an empty string" or type(name)), 2)
  end
  -- `workflow "name"` is never a tail call (its result is called): its
  -- line stands for the definition where no step has one.
  local src, line = caller(2)
  local where = line and line > 0 and (src .. ":" .. line .. ": ") or ""
  return function(steps)
    local ok, result = pcall(define, name, steps, where)
    if not ok then error(result, 0) end
    return result
  end
end })

--- True if `value` is a workflow.
function M.is(value) return getmetatable(value) == WORKFLOW end

-- MARK: Planning


-- The steps as the runner reads them, made once per workflow.
local descriptions = setmetatable({}, { __mode = "k" })

local function describe(wf)
  local described = descriptions[wf]
  if described then return described end
  -- Columns, one list per field, rather than a table per step: a workflow
  -- may have tens of thousands of steps.
  local name, needs, queues, continues, attempts, backoff, timeout, uses, condition = {}, {}, {}, {}, {}, {}, {}, {}, {}
  local map, max_parallel = {}, {}
  for i, s in ipairs(wf.steps) do
    name[i] = s.name
    local step_needs = s.needs
    if step_needs ~= NO_NEEDS and #step_needs > 0 then
      local list = {}
      for j, need in ipairs(step_needs) do list[j] = wf.by_name[need].index end
      needs[i] = list
    end
    local action = s.uses
    if action ~= nil then uses[i] = action end
    -- Only a step defined with more than the usual fields has the others.
    if s.extended then
      queues[i], continues[i], timeout[i] = s.queue, s.continue_on_error, s.timeout
      if s.retry then attempts[i], backoff[i] = s.retry.attempts, s.retry.backoff end
      if s["if"] ~= nil then condition[i] = true end
      if s.map ~= nil then map[i], max_parallel[i] = true, s.max_parallel end
    end
  end
  described = {
    count = #wf.steps, name = name, needs = needs, queue = queues, continue_on_error = continues, attempts = attempts,
    backoff = backoff, timeout = timeout, uses = uses, condition = condition, map = map, max_parallel = max_parallel,
  }
  descriptions[wf] = described
  return described
end

-- The position of the step `name` that flag `flag` selects.
-- `name` as a message shows it: its text, each byte that is not part of
-- valid UTF-8 escaped as in a Lua literal (`b\255in`).
local function name_text(name)
  if type(name) ~= "string" then return tostring(name) end
  local parts, from = {}, 1
  while from <= #name do
    local _, bad = utf8.len(name, from)
    if not bad then
      parts[#parts + 1] = name:sub(from)
      break
    end
    parts[#parts + 1] = name:sub(from, bad - 1) .. "\\" .. name:byte(bad)
    from = bad + 1
  end
  return table.concat(parts)
end

local function selected_position(wf, flag, name)
  if name == nil then return nil end
  local target = wf.by_name[name]
  if not target then
    error(("%s: no step \"%s\" in workflow \"%s\""):format(flag, name_text(name), name_text(wf.name)), 0)
  end
  return target.index
end

--- The plan as text: the order and the parallel groups.
function M.plan(wf, options)
  if not M.is(wf) then error(("bad argument #1 to 'plan' (workflow expected, got %s)"):format(type(wf)), 2) end
  if options ~= nil and type(options) ~= "table" then
    error(("bad argument #2 to 'plan' (table expected, got %s)"):format(type(options)), 2)
  end
  options = options or {}
  local only = selected_position(wf, "--only", options.only)
  local from = not only and selected_position(wf, "--from", options.from) or nil
  local groups = host.plan(describe(wf), only, from)
  local lines = { ("workflow %s: %d group%s"):format(wf.name, #groups, #groups == 1 and "" or "s") }
  for i, group in ipairs(groups) do
    local names = {}
    for j, position in ipairs(group) do names[j] = wf.steps[position].name end
    lines[#lines + 1] = ("  %d. %s"):format(i, table.concat(names, ", "))
  end
  return table.concat(lines, "\n")
end

--- The step graph as Mermaid (flowchart) or DOT (drawn by the host, as
-- machines are).
function M.graph(wf, format)
  if not M.is(wf) then error(("bad argument #1 to 'graph' (workflow expected, got %s)"):format(type(wf)), 2) end
  if format ~= nil and format ~= "mermaid" and format ~= "dot" then
    local got = type(format) == "string" and ("'" .. format .. "'") or type(format)
    error(("bad argument #2 to 'graph' (format must be 'mermaid' or 'dot', got %s)"):format(got), 2)
  end
  local steps = {}
  for i, s in ipairs(wf.steps) do steps[i] = { name = s.name, uses = s.uses, needs = s.needs, map = s.map ~= nil } end
  return host.graph(wf.name, steps, format or "mermaid")
end

-- MARK: Code

-- What a step's code is, for a resume to tell whether it changed (the
-- rule is in docs/workflows.md, "What a resume reuses"). Modules loaded
-- from files count by their bytes: the SHA-256 of each, by the module's
-- value and by its functions' source ("@path").
local function loaded_modules()
  local modules = { by_value = {}, by_source = {}, all = {} }
  local searchpath, path = package.searchpath, package.path
  if type(searchpath) ~= "function" or type(path) ~= "string" then return modules end
  local names = {}
  for name, value in pairs(package.loaded) do
    if type(name) == "string" and package.preload[name] == nil
      and (type(value) == "table" or type(value) == "function") then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local ok, file = pcall(searchpath, name, path)
    local digest = ok and type(file) == "string" and host.file_digest(file)
    if digest then
      local text = "module " .. name .. "\0" .. digest
      modules.by_value[package.loaded[name]] = text
      modules.by_source["@" .. file] = text
      modules.all[#modules.all + 1] = text
    end
  end
  return modules
end

-- Appends to `parts` the code of `value` as a step's function reaches it:
-- a function's bytecode without debug information (lines and comments do
-- not count) and what its upvalues reach; a string, number or boolean
-- upvalue's value; a module loaded from a file, by its bytes. Other
-- tables are data, not code.
local function append_code(value, modules, parts, seen)
  local kind = type(value)
  if seen[value] then return end
  if kind == "function" then
    seen[value] = true
    local source = getinfo and getinfo(value, "S").source
    local module = source and modules.by_source[source]
    if module and not seen[module] then
      seen[module] = true
      parts[#parts + 1] = module
    end
    local ok, bytes = pcall(string_dump, value, true)
    parts[#parts + 1] = ok and host.bytecode(bytes) or "a C function"
    if getupvalue then
      for i = 1, 255 do
        local name, upvalue = getupvalue(value, i)
        if name == nil then break end
        append_code(upvalue, modules, parts, seen)
      end
    end
  elseif kind == "string" then
    parts[#parts + 1] = ("string %d:%s"):format(#value, value)
  elseif kind == "number" or kind == "boolean" then
    parts[#parts + 1] = ("%s %q"):format(kind, value)
  elseif kind == "table" then
    local module = modules.by_value[value]
    if module and not seen[module] then
      seen[module] = true
      parts[#parts + 1] = module
    end
  end
end

-- The code text of step `s` (hashed by the host): its pinned `version`;
-- nothing for `cache = "inputs"`; else its `run` function or the Lua
-- action it `uses` (`memo` keeps each function's text), or the name of
-- a Swift action and Lunar's version.
local function step_code(s, modules, memo)
  if s.version ~= nil then return "version\0" .. s.version end
  if s.cache == "inputs" then return "inputs" end
  local fn = s.run or actions.definition(s.uses)
  if fn == nil then return "swift action\0" .. s.uses .. "\0lunar " .. host.version() end
  local text = memo[fn]
  if text == nil then
    local parts = {}
    -- Without `debug`, a function's upvalues are out of reach: every
    -- module loaded from a file counts instead.
    if not getupvalue then
      for _, module in ipairs(modules.all) do parts[#parts + 1] = module end
    end
    append_code(fn, modules, parts, {})
    text = table.concat(parts, "\0")
    memo[fn] = text
  end
  return (s.run and "run\0" or ("uses\0" .. s.uses .. "\0")) .. text
end

-- The code texts of every step, by position.
local function step_codes(wf)
  local modules, memo, codes = loaded_modules(), {}, {}
  for i, s in ipairs(wf.steps) do codes[i] = step_code(s, modules, memo) end
  return codes
end

-- MARK: Data flow

-- `name` as a field of ctx.steps: `.build`, or `["a b"]`, `[1]`.
local function field_shown(name)
  if type(name) == "string" and name:match("^[%a_][%w_]*$") then return "." .. name end
  if type(name) == "string" then return ("[\"%s\"]"):format(name_text(name)) end
  return ("[%s]"):format(tostring(name))
end

-- True if step `s` needs the step `name`, directly or through its needs.
local function needs_step(wf, s, name)
  for _, need in ipairs(s.needs) do
    if need == name then return true end
  end
  local seen, pending = {}, {}
  for _, need in ipairs(s.needs) do pending[#pending + 1] = need end
  while #pending > 0 do
    local need = pending[#pending]
    pending[#pending] = nil
    if need == name then return true end
    if not seen[need] then
      seen[need] = true
      for _, further in ipairs(wf.by_name[need].needs) do pending[#pending + 1] = further end
    end
  end
  return false
end

-- The maker of a run's `ctx.steps` views: view(s) is the `ctx.steps` of
-- step `s`, the steps it needs, directly or not, from `results`; reading
-- any other is an error at the line that reads it. Every view is a table
-- holding only its step (at a key no name can be) and sharing one
-- metatable, so a step's view costs one small table.
local function step_views(wf, results)
  -- The key of a view's step; the names each step was found to need.
  local OWNER, allowed = {}, {}
  local function read(view, name)
    local s = rawget(view, OWNER)
    local known = allowed[s]
    if known and known[name] then return results[name] end
    local target = type(name) == "string" and wf.by_name[name] or nil
    if target == nil then
      error(("step \"%s\" reads ctx.steps%s, but workflow \"%s\" has no step %s")
        :format(name_text(s.name), field_shown(name), name_text(wf.name),
          type(name) == "string" and ('"' .. name_text(name) .. '"') or "by that key"), 2)
    end
    if not needs_step(wf, s, name) then
      local names = {}
      for i, need in ipairs(s.needs) do names[i] = ('"%s"'):format(name_text(need)) end
      names[#names + 1] = ('"%s"'):format(name_text(name))
      error(("step \"%s\" reads ctx.steps%s, but \"%s\" is not among its needs (add needs = { %s })")
        :format(name_text(s.name), field_shown(name), name_text(name), table.concat(names, ", ")), 2)
    end
    if known == nil then
      known = {}
      allowed[s] = known
    end
    known[name] = true
    return results[name]
  end
  local function each(view)
    local s = rawget(view, OWNER)
    local function step_after(_, name)
      local value
      repeat
        name, value = next(results, name)
        local known = allowed[s]
      until name == nil or (known and known[name]) or needs_step(wf, s, name)
      return name, value
    end
    return step_after, nil, nil
  end
  local meta = { __index = read, __pairs = each, __name = "ctx.steps" }
  return function(s) return setmetatable({ [OWNER] = s }, meta) end
end

-- MARK: Running

-- What a step's body returns first (WorkflowRun.BodyOutcome).
local RAN, REUSED, SKIPPED, FAILED = 1, 2, 3, 4

-- The arguments of workflow.execute and workflow.run (`fname`), checked;
-- errors point at the code that called it. Returns the options table.
-- The options `run` and `execute` take.
-- `_processes` is the command line's: the workflow a file returns runs its
-- steps in the `lunar run --processes` workers.
local OPTIONS = {
  only = true, from = true, dry_run = true, jobs = true, journal = true, quiet = true, progress = true,
  _processes = true,
}
local OPTION_LIST = "dry_run, from, jobs, journal, only, progress, quiet"

-- "unknown option 'x' (options are ...)" for the first key of `options`
-- that is not an option, in a stable order; nil if none.
local function unknown_option(options)
  local unknown
  for key in next, options do
    if not OPTIONS[key] then
      local text = type(key) == "string" and ("'" .. key .. "'") or ("[" .. shown(key) .. "]")
      if unknown == nil or text < unknown then unknown = text end
    end
  end
  return unknown and ("unknown option %s (options are %s)"):format(unknown, OPTION_LIST)
end

local function check_arguments(wf, options, fname)
  local problem, position
  if not M.is(wf) then
    problem, position = ("workflow expected, got %s"):format(type(wf)), 1
  elseif options ~= nil and type(options) ~= "table" then
    problem, position = ("table expected, got %s"):format(type(options)), 2
  elseif options ~= nil then
    position = 2
    problem = unknown_option(options)
    local jobs = options.jobs
    if not problem and jobs ~= nil and not (type(jobs) == "number" and math.tointeger(jobs) and jobs >= 1) then
      problem = ("option 'jobs' must be a positive integer, got %s"):format(shown(jobs))
    end
    for _, key in ipairs { "only", "from", "journal", "progress" } do
      if not problem and options[key] ~= nil and type(options[key]) ~= "string" then
        problem = ("option '%s' must be a string, got %s"):format(key, type(options[key]))
      end
    end
    if not problem and options.journal ~= nil and not host.may_write(options.journal) then
      problem = "option 'journal' is refused under --sandbox:"
        .. " only the command line (lunar run --journal) chooses the files Lunar writes"
    end
  end
  if problem then error(("bad argument #%d to '%s' (%s)"):format(position, fname, problem), 3) end
  return options or {}
end

local function now() return lunar.now() end

-- The start of the names of workflow `wf`'s step actions, and the name
-- of the action that runs `run` step `s` of it.
local function action_prefix_of(wf) return "workflow " .. wf.name .. "/" end
local function step_action_name(wf, s) return action_prefix_of(wf) .. s.name end
-- The context metatable of the actions of steps that declare no services.
local NO_SERVICES = actions.declare(nil)
-- `actions.run_declared` without its checks, below a chain it is given,
-- and the running task's chain (a script that took them first leaves this
-- module the checked function, whose chain is the step's task's).
local run_declared, current_chain = actions._take_declared_runner()
if not run_declared then run_declared, current_chain = actions.run_declared, function() return nil end end

--- Defines the action of each `run` step of `wf`, for a worker process of
--- `lunar run --processes` (`lunar worker --steps`): its job is `{ input =,
--- steps = }`, the outputs of the steps it needs directly.
function M._serve(wf)
  if not M.is(wf) then error(("bad argument #1 to '_serve' (workflow expected, got %s)"):format(type(wf)), 2) end
  for _, s in ipairs(wf.steps) do
    if s.run and not s.sleep and not s.wait then
      actions.define_checked(step_action_name(wf, s), s.services, function(ctx, job)
        if type(job) ~= "table" then job = {} end
        -- A mapped step's child names itself (`deploy[2]`).
        ctx.workflow, ctx.step, ctx.steps = wf.name, type(job.step) == "string" and job.step or s.name, job.steps or {}
        return s.run(ctx, job.input)
      end)
    end
  end
end

-- Runs the workflow; returns the results by step and whether all succeeded.
-- Errors about the options point `level` frames up. The runner (Swift)
-- decides what runs when; each attempt of a step runs `body` as a task.
local function execute(wf, options, level, keeps_results)
  local only = selected_position(wf, "--only", options.only)
  local from = not only and selected_position(wf, "--from", options.from) or nil
  if options.dry_run then
    print(M.plan(wf, options))
    return { ok = true, results = {} }
  end
  local run, earlier, recording, process_queues = host.begin(wf.name, describe(wf), {
    only = only, from = from, jobs = options.jobs and math.tointeger(options.jobs), progress = options.progress,
    quiet = options.quiet and true or nil, journal = options.journal, _processes = options._processes,
  })
  if not run then error(earlier, level + 1) end

  -- A step's action runs a level below the code that runs the workflow.
  local outer_chain = current_chain()
  -- The positions of the steps whose outcome `ctx_steps` keeps: all when
  -- the results are returned, else those another step needs.
  local kept = true
  if not keeps_results then
    kept = {}
    for _, list in pairs(describe(wf).needs) do
      for _, position in ipairs(list) do kept[position] = true end
    end
  end
  local ctx_steps = {}
  for name, earlier_step in pairs(earlier) do ctx_steps[name] = { status = "reused", output = earlier_step.output } end
  local inputs = {}
  local durable_queues = {}
  -- Each step's ctx.steps, by the step's position: made when first read.
  local views, new_view = {}, step_views(wf, ctx_steps)
  -- The children of the steps that fanned out (`map`), by position: each
  -- runs its parent's action on one item.
  local children = {}
  local declared = wf.steps
  local function step_at(i) return declared[i] or children[i] end
  -- The view of step `s` at position `i`: a child sees the steps its
  -- parent needs. Only an `extended` step can be a child.
  local function view_for(s, i, extended)
    local owner_at = extended and s.parent_at or i
    local view = views[owner_at]
    if view == nil then
      view = new_view(extended and s.parent or s)
      views[owner_at] = view
    end
    return view
  end

  local function context_for(s, i)
    return { workflow = wf.name, step = s.name, steps = view_for(s, i, s.extended), now = now }
  end

  -- Child `k` of step `s` at position `i`, which fans out, for `item`.
  local function child_of(s, i, k, item)
    return {
      name = s.name .. "[" .. k .. "]", parent = s, parent_at = i, item = item, uses = s.uses, run = s.run,
      with = s.with, needs = s.needs, queue = s.queue, durable = s.durable, src = s.src, line = s.line,
      extended = true,
    }
  end

  -- A `run` step's action: its context declares the step's services (one
  -- metatable shared by every step that declares none; only an `extended`
  -- step declares any).
  local metas = {}
  local action_prefix = action_prefix_of(wf)
  local function run_action(s, i, counted, extended)
    local owner, meta = s, NO_SERVICES
    if extended then
      owner = s.parent or s
      if owner.services then
        meta = metas[owner] or actions.declare(owner.services)
        metas[owner] = meta
      end
    end
    return run_declared(action_prefix .. owner.name, owner.run, meta, inputs[i], counted, wf.name, s.name,
      view_for(s, i, extended), outer_chain)
  end

  -- The end of an attempt whose action returned `output` (`accepted`: the
  -- runner has it already). The runner takes the output when it records
  -- it, or to check a value that might not be storable; a single nil,
  -- boolean, number or string always is.
  local function ran_one(s, i, output, accepted)
    local kind = type(output)
    if not accepted and (recording
      or kind == "table" or kind == "function" or kind == "userdata" or kind == "thread") then
      local _, problem = host.accept(run, i, output)
      if problem then error(at(s) .. ("step \"%s\": %s"):format(s.name, problem), 0) end
    end
    if s.parent then
      s.output = output
    elseif kept == true or kept[i] then
      ctx_steps[s.name] = { status = "succeeded", output = output }
    end
    return RAN
  end

  -- `ran_one` for an action that returned `...`: none or several values
  -- are taken (and checked) as they are.
  local function ran(s, i, ...)
    if select("#", ...) == 1 then return ran_one(s, i, ...) end
    local _, problem = host.accept(run, i, ...)
    if problem then error(at(s) .. ("step \"%s\": %s"):format(s.name, problem), 0) end
    return ran_one(s, i, (...), true)
  end

  -- Runs the children of step `s` (position `i`), one per item of its
  -- list: their outputs, in item order, are its output.
  local function fan_out(s, i, items)
    local first = host.fan_out(run, i, #items)
    local mine = {}
    for k = 1, #items do
      local c = child_of(s, i, k, items[k])
      children[first + k - 1], mine[k] = c, c
    end
    host.children(run, i)
    local outputs = {}
    for k = 1, #mine do outputs[k] = mine[k].output end
    return ran(s, i, outputs)
  end

  -- Waits until the deadline of sleep step `s` (position `i`): the one a
  -- resumed run recorded, else now + seconds or what `until` returns. The
  -- output says when it ended and how long this run waited.
  local function sleep_step(s, i)
    local deadline = s.sleep.seconds and now() + s.sleep.seconds
    if not deadline then
      local ok, result = pcall(s.sleep["until"], context_for(s, i))
      if not ok then error(result, 0) end
      if not is_seconds(result) then
        error(at(s) .. ("step \"%s\": 'until' must return a time in seconds since the epoch, got %s")
          :format(s.name, shown(result)), 0)
      end
      deadline = result
    end
    if recording then deadline = host.wait_deadline(run, i, deadline) end
    local waited = math.max(0, deadline - now())
    if waited > 0 then
      if recording then host.waiting(run, i, deadline) end
      lunar.sleep(waited)
      if recording then host.waiting(run, i, nil) end
    end
    return { deadline = deadline, waited = waited }
  end

  -- Waits for the signal of wait step `s` (position `i`) and returns its
  -- value: the store is read every quarter second (real time), or at the
  -- start and at the deadline under --clock virtual. A timeout's deadline
  -- is recorded, so a resumed run waits only what is left of it.
  local function wait_step(s, i)
    local signal, timeout = s.wait.signal, s.wait.timeout
    if not recording then
      error(at(s) .. ("step \"%s\": a wait for a signal needs a run store (it was run with --no-store)")
        :format(s.name), 0)
    end
    local deadline = timeout and host.wait_deadline(run, i, now() + timeout) or math.huge
    local virtual = host.virtual_clock()
    local told = false
    while true do
      local got, value = host.signal(run, i, signal)
      if got then
        host.waiting(run, i, nil)
        return value
      end
      if not told then
        host.waiting(run, i, deadline ~= math.huge and deadline)
        told = true
      end
      local left = deadline - now()
      if left <= 0 then
        error(at(s) .. ("step \"%s\": no signal '%s' came within its timeout of %s seconds")
          :format(s.name, name_text(signal), shown(timeout)), 0)
      end
      lunar.sleep(virtual and left or math.min(0.25, left))
    end
  end

  -- MARK: Steps in worker processes (--processes)

  -- The jobs each worker process's queue holds now, by queue.
  local loads = {}
  if process_queues then
    for _, q in ipairs(process_queues) do loads[q] = 0 end
  end

  -- The least busy worker's queue (the first, among equals).
  local function free_queue()
    local best
    for _, q in ipairs(process_queues) do
      if best == nil or loads[q] < loads[best] then best = q end
    end
    return best
  end

  -- Runs attempt `attempt` of step `s` (position `i`) as a job of a
  -- worker process: a `run` function as the action `_serve` defines for
  -- it, given its input and the outputs of the steps it needs directly;
  -- a `uses` step's action with its input.
  local function in_process(s, i, attempt, counted)
    local owner = s.parent or s
    local action, payload = s.uses, inputs[i]
    if not s.uses then
      local outputs = {}
      for _, need in ipairs(owner.needs) do outputs[need] = ctx_steps[need] end
      action = step_action_name(wf, owner)
      payload = { input = inputs[i], steps = outputs, step = s.parent and s.name or nil }
    end
    local q = free_queue()
    local job = host.submit_job(run, i, attempt, payload, counted, q, action)
    loads[q] = loads[q] + 1
    local ok, output = pcall(job.await, job)
    loads[q] = loads[q] - 1
    if not ok then error(output, 0) end
    return ran(s, i, output)
  end

  -- One attempt of step `i`: its condition and input (the first time),
  -- an earlier output to reuse, or its action. The runner says "started"
  -- itself for a step with no condition in a run it does not record;
  -- `prepare` says it for the others, once they are known to run.
  -- `counted` is the attempt as ctx.attempt numbers it (on from the
  -- attempts of a resumed run).
  local function body(i, attempt, counted)
    local s = declared[i] or children[i]
    -- Only a step defined with more than `uses` or `run`, `with` and
    -- `needs` can have a condition, a map, a sleep, a wait, a queue or a
    -- parent: the usual step reads none of them.
    local extended = s.extended
    if attempt == 1 then
      local condition, input = extended and s["if"], s.with
      local ctx = (condition or (input ~= nil and type(input) == "function") or (extended and s.map))
        and context_for(s, i) or nil
      if condition then
        local ok, go = pcall(condition, ctx)
        if not ok then return FAILED, tostring(go) end
        if not go then
          ctx_steps[s.name] = { status = "skipped" }
          return SKIPPED
        end
      end
      if extended and s.map then
        -- A step that fans out: its input is its list of items.
        local ok
        ok, input = pcall(s.map, ctx)
        if not ok then return FAILED, tostring(input) end
        if not is_list(input) then
          return FAILED, at(s) .. ("step \"%s\": 'map' must return a list of items, got %s")
            :format(name_text(s.name), type(input) == "table" and "a table with other keys" or type(input))
        end
      elseif extended and s.parent then
        input = s.item
        if type(s.with) == "function" then
          local ok
          ok, input = pcall(s.with, ctx, s.item)
          if not ok then return FAILED, tostring(input) end
        end
      elseif input ~= nil and type(input) == "function" then
        local ok
        ok, input = pcall(input, ctx)
        if not ok then return FAILED, tostring(input) end
      end
      if input ~= nil then inputs[i] = input end
      if recording or condition then
        local prepared, reused, output = pcall(host.prepare, run, i, input)
        if not prepared then return FAILED, at(s) .. ("step \"%s\": %s"):format(s.name, reused) end
        if reused then
          if s.parent then s.output = output else ctx_steps[s.name] = { status = "reused", output = output } end
          return REUSED
        end
      end
    end
    if extended then
      if s.map then return fan_out(s, i, inputs[i]) end
      if s.sleep then return ran(s, i, sleep_step(s, i)) end
      if s.wait then return ran(s, i, wait_step(s, i)) end
      if s.durable then
        -- A job of the durable queue: a `lunar worker` runs it, anywhere.
        -- A resumed run waits for the job its interrupted run left, if any.
        local job = recording and attempt == 1 and host.unfinished_job(run, i) or nil
        if not job and recording then
          job = host.submit_job(run, i, attempt, inputs[i], counted)
        elseif not job then
          durable_queues[s.queue] = durable_queues[s.queue] or queue.new { name = s.queue, durable = true }
          job = durable_queues[s.queue]:submit(s.uses, inputs[i])
        end
        return ran(s, i, job:await())
      end
    end
    if process_queues then return in_process(s, i, attempt, counted) end
    local uses = s.uses
    if uses then return ran(s, i, actions.run(uses, inputs[i], nil, counted)) end
    -- A `run` step's action returns one value: its output.
    return ran_one(s, i, run_action(s, i, counted, extended))
  end

  -- A step failed for good: its context says so.
  local function record(i, message)
    local s = step_at(i)
    if s.parent then s.error = message else ctx_steps[s.name] = { status = "failed", error = message } end
  end

  local codes = recording and step_codes(wf) or nil
  local ok, failed, statuses, attempts, reasons =
    host.run(run, body, record, coroutine.create(function() end), codes, keeps_results)
  if not keeps_results then return { ok = ok, failed = failed } end
  local results = {}
  for i, status in ipairs(statuses) do
    if status then
      local s = step_at(i)
      local name = s.name
      local c = s.parent and { output = s.output, error = s.error } or ctx_steps[name]
      results[name] = {
        status = status, attempts = attempts[i], output = c and c.output, error = c and c.error,
        reason = reasons[i] or nil,
      }
    end
  end
  return { ok = ok, failed = failed, results = results }
end

--- Runs the workflow; returns the results by step and whether all succeeded.
function M.execute(wf, options)
  options = check_arguments(wf, options, "execute")
  local outcome = execute(wf, options, 2, true)
  return outcome
end

-- What `run` raises for a run whose steps `outcome.failed` failed: one
-- line, as each step's error, with its place, was shown as it failed.
local function failure(wf, outcome)
  return ("workflow %s failed: step%s %s failed"):format(wf.name, #outcome.failed == 1 and "" or "s",
    table.concat(outcome.failed, ", "))
end

--- Runs a workflow the way `lunar run FILE` does: raises if a step failed.
function M.run(wf, options)
  options = check_arguments(wf, options, "run")
  local outcome = execute(wf, options, 2, true)
  if not outcome.ok then error(failure(wf, outcome), 2) end
  return outcome
end

--- Internal: runs the workflow a main chunk returned, as `run` does, and
--- returns nothing: the results of every step would be built for nobody.
function M._run(wf, options)
  options = check_arguments(wf, options, "run")
  local outcome = execute(wf, options, 2, false)
  if not outcome.ok then error(failure(wf, outcome), 2) end
end

return M
