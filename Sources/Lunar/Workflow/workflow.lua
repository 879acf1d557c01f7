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
local trace_emit = actions.emit

local WORKFLOW = { __name = "lunar.workflow" }
WORKFLOW.__index = WORKFLOW
local STEP = { __name = "lunar.workflow.step" }

local KNOWN = { uses = true, run = true, with = true, needs = true, queue = true, retry = true, timeout = true,
                ["if"] = true, when = true, continue_on_error = true, services = true, description = true }

local function fail(message) error(message, 3) end

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

-- Checks the fields of a step definition; returns a message for the first
-- bad one (its name in quotes), or nil.
local function check_step(s)
  for key in pairs(s.spec) do
    if not KNOWN[key] then return ("unknown field %s"):format(key_shown(key)) end
  end
  if (s.uses == nil) == (s.run == nil) then
    return "needs exactly one of 'uses' (an action name) or 'run' (a function)"
  end
  if s.uses ~= nil and (type(s.uses) ~= "string" or s.uses == "") then
    return ("'uses' must be an action name, got %s"):format(type(s.uses) == "string" and "an empty string" or type(s.uses))
  end
  if s.run ~= nil and type(s.run) ~= "function" then return ("'run' must be a function, got %s"):format(type(s.run)) end
  if s.with ~= nil and type(s.with) ~= "table" and type(s.with) ~= "function" then
    return ("'with' must be a table or a function, got %s"):format(type(s.with))
  end
  if s.needs ~= nil and type(s.needs) ~= "string" then
    if not is_list(s.needs) then
      return ("'needs' must be a list of step names, got %s"):format(type(s.needs) == "table" and "a table with other keys" or type(s.needs))
    end
    for i, need in ipairs(s.needs) do
      if type(need) ~= "string" then return ("needs[%d] must be a step name, got %s"):format(i, type(need)) end
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
  if s.spec["if"] ~= nil and s.spec.when ~= nil then return "give 'if' or 'when', not both" end
  local condition = s.spec["if"] ~= nil and "if" or "when"
  if s[condition] ~= nil and type(s[condition]) ~= "function" then
    return ("'%s' must be a function, got %s"):format(condition, type(s[condition]))
  end
  if s.queue ~= nil and (type(s.queue) ~= "string" or s.queue == "") then
    return ("'queue' must be a queue name, got %s"):format(type(s.queue) == "string" and "an empty string" or type(s.queue))
  end
  if s.continue_on_error ~= nil and type(s.continue_on_error) ~= "boolean" then
    return ("'continue_on_error' must be true or false, got %s"):format(type(s.continue_on_error))
  end
  if s.description ~= nil and type(s.description) ~= "string" then
    return ("'description' must be a string, got %s"):format(type(s.description))
  end
  if s.services ~= nil then
    if s.uses ~= nil then return "'services' is for 'run' steps (an action declares the services it uses)" end
    if not is_list(s.services) then
      return ("'services' must be a list of service names, got %s"):format(type(s.services) == "table" and "a table with other keys" or type(s.services))
    end
    for i, service in ipairs(s.services) do
      if type(service) ~= "string" then return ("services[%d] must be a service name, got %s"):format(i, type(service)) end
      if not actions.is_service(service) then
        return ("services[%d] names an unknown service '%s' (services are %s)"):format(i, service, table.concat(actions.service_names(), ", "))
      end
    end
  end
end

--- step "name" { ... }: a step definition; a bad field is an error at the
--- caller's line naming the step and the field.
function M.step(name)
  if type(name) ~= "string" or name == "" then
    error(("bad argument #1 to 'step' (step name expected, got %s)"):format(name == "" and "an empty string" or type(name)), 2)
  end
  return function(spec)
    if type(spec) ~= "table" then error(("step \"%s\": expected a table of fields, got %s"):format(name, type(spec)), 2) end
    local s = { name = name, position = debug and debug.getinfo(2, "Sl"), spec = spec }
    for key, value in pairs(spec) do
      if KNOWN[key] then s[key] = value end
    end
    local problem = check_step(s)
    if problem then error(("step \"%s\": %s"):format(name, problem), 2) end
    s.spec = nil
    s["if"] = s["if"] or s.when
    s.needs = s.needs or {}
    if type(s.needs) == "string" then s.needs = { s.needs } end
    return setmetatable(s, STEP)
  end
end

--- workflow "name" { step ..., ... }: checks the graph and returns the workflow.
-- "file:line: " of a step's definition (the workflow call itself is often a
-- tail call, `return workflow "x" {...}`, which leaves no position).
local function at(s)
  local info = s and s.position
  if not info or not info.currentline or info.currentline < 0 then return "" end
  return info.short_src .. ":" .. info.currentline .. ": "
end

local function define(name, steps, where)
  if type(steps) ~= "table" then error(where .. ("workflow \"%s\": expected a list of steps, got %s"):format(name, type(steps)), 0) end
  for key in pairs(steps) do
    if math.type(key) ~= "integer" or key < 1 or key > #steps then
      error(where .. ("workflow \"%s\": %s is not a list position (give the steps as a list)"):format(name, key_shown(key)), 0)
    end
  end
  local wf = setmetatable({ name = name, steps = {}, by_name = {} }, WORKFLOW)
  for i = 1, #steps do
    local s = steps[i]
    if getmetatable(s) ~= STEP then error(where .. ("workflow \"%s\": item %d is not a step (use step \"name\" { ... })"):format(name, i), 0) end
    if wf.by_name[s.name] then error(at(s) .. ("workflow \"%s\": duplicate step \"%s\""):format(name, s.name), 0) end
    s.index = i
    wf.steps[i] = s
    wf.by_name[s.name] = s
  end
  for _, s in ipairs(wf.steps) do
    for _, need in ipairs(s.needs) do
      if not wf.by_name[need] then error(at(s) .. ("step \"%s\": needs unknown step \"%s\""):format(s.name, tostring(need)), 0) end
      if need == s.name then error(at(s) .. ("step \"%s\": needs itself"):format(s.name), 0) end
    end
  end
  -- Cycles: depth-first search with colours.
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
  return wf
end

setmetatable(M, { __call = function(_, name)
  if type(name) ~= "string" or name == "" then
    error(("bad argument #1 to 'workflow' (workflow name expected, got %s)"):format(name == "" and "an empty string" or type(name)), 2)
  end
  -- `workflow "name"` is never a tail call (its result is called): its
  -- line stands for the definition where no step has one.
  local info = debug and debug.getinfo(2, "Sl")
  local where = info and info.currentline and info.currentline > 0 and (info.short_src .. ":" .. info.currentline .. ": ") or ""
  return function(steps)
    local ok, result = pcall(define, name, steps, where)
    if not ok then error(result, 0) end
    return result
  end
end })

--- True if `value` is a workflow.
function M.is(value) return getmetatable(value) == WORKFLOW end

-- MARK: Planning

--- The steps selected by --only / --from, and the parallel groups (levels).
local function plan(wf, options)
  local selected = {}
  if options.only then
    local target = wf.by_name[options.only]
    if not target then error(("--only: no step \"%s\" in workflow \"%s\""):format(options.only, wf.name), 0) end
    local function include(s)
      if selected[s.name] then return end
      selected[s.name] = true
      for _, need in ipairs(s.needs) do include(wf.by_name[need]) end
    end
    include(target)
  elseif options.from then
    local target = wf.by_name[options.from]
    if not target then error(("--from: no step \"%s\" in workflow \"%s\""):format(options.from, wf.name), 0) end
    selected[target.name] = true
    local changed = true
    while changed do
      changed = false
      for _, s in ipairs(wf.steps) do
        if not selected[s.name] then
          for _, need in ipairs(s.needs) do
            if selected[need] then selected[s.name] = true; changed = true; break end
          end
        end
      end
    end
  else
    for _, s in ipairs(wf.steps) do selected[s.name] = true end
  end
  local level = {}
  local function depth(s)
    if level[s.name] then return level[s.name] end
    local d = 1
    for _, need in ipairs(s.needs) do d = math.max(d, depth(wf.by_name[need]) + 1) end
    level[s.name] = d
    return d
  end
  local groups = {}
  for _, s in ipairs(wf.steps) do
    if selected[s.name] then
      local d = depth(s)
      groups[d] = groups[d] or {}
      table.insert(groups[d], s.name)
    end
  end
  local compact = {}
  for d = 1, #wf.steps do if groups[d] then compact[#compact + 1] = groups[d] end end
  return selected, compact
end

--- The plan as text: the order and the parallel groups.
function M.plan(wf, options)
  if not M.is(wf) then error(("bad argument #1 to 'plan' (workflow expected, got %s)"):format(type(wf)), 2) end
  if options ~= nil and type(options) ~= "table" then error(("bad argument #2 to 'plan' (table expected, got %s)"):format(type(options)), 2) end
  local _, groups = plan(wf, options or {})
  local lines = { ("workflow %s: %d group%s"):format(wf.name, #groups, #groups == 1 and "" or "s") }
  for i, group in ipairs(groups) do
    lines[#lines + 1] = ("  %d. %s"):format(i, table.concat(group, ", "))
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
  for i, s in ipairs(wf.steps) do steps[i] = { name = s.name, uses = s.uses, needs = s.needs } end
  return host.graph(wf.name, steps, format or "mermaid")
end

-- MARK: Running

local SPINNER = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }

local function fmt_duration(seconds)
  if seconds < 10 then return ("%.2fs"):format(seconds) end
  return ("%.1fs"):format(seconds)
end

-- The arguments of workflow.execute and workflow.run (`fname`), checked;
-- errors point at the code that called it. Returns the options table.
local function check_arguments(wf, options, fname)
  local problem, position
  if not M.is(wf) then
    problem, position = ("workflow expected, got %s"):format(type(wf)), 1
  elseif options ~= nil and type(options) ~= "table" then
    problem, position = ("table expected, got %s"):format(type(options)), 2
  elseif options ~= nil then
    position = 2
    local jobs = options.jobs
    if jobs ~= nil and not (type(jobs) == "number" and math.tointeger(jobs) and jobs >= 1) then
      problem = ("option 'jobs' must be a positive integer, got %s"):format(shown(jobs))
    end
    for _, key in ipairs { "only", "from", "journal", "progress" } do
      if not problem and options[key] ~= nil and type(options[key]) ~= "string" then
        problem = ("option '%s' must be a string, got %s"):format(key, type(options[key]))
      end
    end
    if not problem and options.journal ~= nil and not host.may_write(options.journal) then
      problem = "option 'journal' is refused under --sandbox: only the command line (lunar run --journal) chooses the files Lunar writes"
    end
  end
  if problem then error(("bad argument #%d to '%s' (%s)"):format(position, fname, problem), 3) end
  return options or {}
end

-- Runs the workflow; returns the results by step and whether all succeeded.
-- Errors about the options point `level` frames up.
local function execute(wf, options, level)
  local jobs = math.tointeger(options.jobs or 4)
  local selected, groups = plan(wf, options)
  if options.dry_run then
    print(M.plan(wf, options))
    return { ok = true, results = {} }
  end
  local journal
  if options.journal then
    local message
    journal, message = host.journal_open(options.journal)
    if not journal then error(message, level + 1) end
  end
  local results = {}          -- name -> { status, output, attempts, duration, error }
  local ctx_steps = {}
  local running, done = 0, 0
  local total = 0
  for _, s in ipairs(wf.steps) do if selected[s.name] then total = total + 1 end end
  local started_at = lunar.now()
  local wall = host.monotonic
  local wall_start = wall()
  local terminal = options.progress == "terminal"
  local queues = {}
  local order = {}
  local live = {}   -- name -> wall start, for the spinner

  local function emit(kind, fields) trace_emit(kind, fields) end

  local quiet = options.quiet
  local function line(text)
    if quiet then return end
    if terminal then io.write("\r\27[2K") end
    print(text)
  end

  local function finish(s, status, info)
    local r = results[s.name]
    r.status, r.error = status, info
    r.duration = r.started and (lunar.now() - r.started) or 0
    live[s.name] = nil
    done = done + 1
    emit("workflow.step." .. status, { step = s.name, error = info, attempts = r.attempts })
    local detail = status == "failed" and (": " .. tostring(info)) or (status == "skipped" and info and (" (" .. info .. ")") or "")
    if status == "succeeded" or status == "reused" then detail = " in " .. fmt_duration(r.duration) end
    line(("[%s] step %s %s%s"):format(wf.name, s.name, status, detail))
  end

  -- Resolves a step's input: `with` as a table, or as a function of the context.
  local function context_for(s)
    local ctx = { workflow = wf.name, step = s.name, steps = ctx_steps }
    function ctx.now() return lunar.now() end
    return ctx
  end

  local function input_of(s, ctx)
    if type(s.with) == "function" then return s.with(ctx) end
    return s.with
  end

  local function key_of(s, input)
    local needs = {}
    for _, need in ipairs(s.needs) do needs[need] = ctx_steps[need] and ctx_steps[need].output end
    return host.fingerprint(input, needs, s.uses)
  end

  local action_names = {}
  local function action_for(s)
    if s.uses then return s.uses end
    local name = "workflow " .. wf.name .. "/" .. s.name
    if not action_names[name] then
      lunar.action(name, { uses = s.services or {} }, function(actx, input)
        local ctx = context_for(s)
        setmetatable(ctx, { __index = actx })
        return s.run(ctx, input)
      end)
      action_names[name] = true
    end
    return name
  end

  local function attempt(s, input)
    local r = results[s.name]
    local tries = s.retry and s.retry.attempts or 1
    local backoff = s.retry and s.retry.backoff or 0
    local last
    for n = 1, tries do
      r.attempts = n
      local task = lunar.spawn(lunar.run, action_for(s), input)
      local ok, value
      if s.timeout then
        local timer = lunar.spawn(lunar.sleep, s.timeout)
        local first = lunar.await_any({ task, timer })
        if first == 2 then
          task:cancel()
          task:result()
          ok, value = false, ("timed out after %s s"):format(s.timeout)
        else
          timer:cancel()
          ok, value = task:result()
        end
      else
        ok, value = task:result()
      end
      if ok then return true, value end
      last = value
      emit("workflow.step.attempt_failed", { step = s.name, attempt = n, error = tostring(value) })
      if n < tries then
        line(("[%s] step %s attempt %d failed: %s; retrying"):format(wf.name, s.name, n, tostring(value)))
        lunar.sleep(backoff * 2 ^ (n - 1))
      end
    end
    return false, last
  end

  local function run_step(s)
    local r = results[s.name]
    r.started = lunar.now()
    live[s.name] = wall()
    emit("workflow.step.started", { step = s.name })
    if not terminal then line(("[%s] step %s started"):format(wf.name, s.name)) end
    local ctx = context_for(s)
    if s["if"] then
      local ok, go = pcall(s["if"], ctx)
      if not ok then return finish(s, "failed", go) end
      if not go then
        ctx_steps[s.name] = { status = "skipped" }
        return finish(s, "skipped", "condition false")
      end
    end
    local ok, input = pcall(input_of, s, ctx)
    if not ok then return finish(s, "failed", input) end
    local fingerprinted, key = pcall(key_of, s, input)
    if not fingerprinted then return finish(s, "failed", at(s) .. ("step \"%s\": %s"):format(s.name, key)) end
    if journal then
      local previous = host.journal_lookup(journal, s.name, key)
      if previous ~= nil then
        r.output = previous
        ctx_steps[s.name] = { status = "reused", output = previous }
        return finish(s, "reused")
      end
    end
    local success, value = attempt(s, input)
    if success then
      r.output = value
      ctx_steps[s.name] = { status = "succeeded", output = value }
      if journal then
        local stored, problem = pcall(host.journal_store, journal, s.name, key, value)
        if not stored then return finish(s, "failed", at(s) .. ("step \"%s\": %s"):format(s.name, problem)) end
      end
      return finish(s, "succeeded")
    end
    ctx_steps[s.name] = { status = "failed", error = tostring(value) }
    return finish(s, "failed", tostring(value))
  end

  for _, s in ipairs(wf.steps) do
    if selected[s.name] then
      results[s.name] = { status = "waiting", attempts = 0 }
      order[#order + 1] = s
    end
  end

  -- Before --from: reuse journal outputs if there are any.
  for _, s in ipairs(wf.steps) do
    if not selected[s.name] and options.from and journal then
      local previous = host.journal_last(journal, s.name)
      if previous ~= nil then ctx_steps[s.name] = { status = "reused", output = previous } end
    end
  end

  local function blocked_by(s)
    for _, need in ipairs(s.needs) do
      local r = results[need]
      if r then
        if r.status == "failed" and not wf.by_name[need].continue_on_error then return need end
        if r.status == "skipped" and not (ctx_steps[need] and ctx_steps[need].status == "skipped" and wf.by_name[need]["if"]) then
          return need
        end
      end
    end
  end

  local function ready(s)
    for _, need in ipairs(s.needs) do
      local r = results[need]
      if r and (r.status == "waiting" or r.status == "running") then return false end
    end
    return true
  end

  local spinner
  if terminal then
    spinner = lunar.spawn(function()
      local frame = 0
      while true do
        frame = frame % #SPINNER + 1
        local parts = {}
        for _, s in ipairs(order) do
          if live[s.name] then parts[#parts + 1] = ("%s %s %s"):format(SPINNER[frame], s.name, fmt_duration(wall() - live[s.name])) end
        end
        io.write("\r\27[2K" .. table.concat(parts, "  ") .. (" (%d/%d)"):format(done, total))
        io.stdout:flush()
        lunar.sleep(0.1)
      end
    end)
  end

  local tasks = {}
  while done < total do
    local progressed = false
    for _, s in ipairs(order) do
      local r = results[s.name]
      if r.status == "waiting" then
        local blocker = blocked_by(s)
        if blocker then
          r.status = "running"
          finish(s, "skipped", "needs " .. blocker)
          progressed = true
        elseif ready(s) and running < jobs then
          r.status = "running"
          running = running + 1
          progressed = true
          local body = function() run_step(s); running = running - 1 end
          if s.queue then
            queues[s.queue] = queues[s.queue] or queue.new("workflow " .. s.queue)
            tasks[#tasks + 1] = queues[s.queue]:submit(body)
          else
            tasks[#tasks + 1] = lunar.spawn(body)
          end
        end
      end
    end
    if done >= total then break end
    if not progressed then
      -- Wait for any running step to finish.
      local live_tasks = {}
      for _, t in ipairs(tasks) do if t:status() == "pending" or t:status() == "running" then live_tasks[#live_tasks + 1] = t end end
      if #live_tasks == 0 then break end
      lunar.await_any(live_tasks)
    end
  end
  for _, t in ipairs(tasks) do t:result() end
  if spinner then
    spinner:cancel()
    spinner:result()
    io.write("\r\27[2K")
  end

  -- The summary table.
  local print = quiet and function() end or print
  local width = 4
  for _, s in ipairs(order) do width = math.max(width, #s.name) end
  print(("\n%-" .. width .. "s  %-9s  %8s  %9s"):format("step", "status", "attempts", "duration"))
  local failed = {}
  for _, s in ipairs(order) do
    local r = results[s.name]
    print(("%-" .. width .. "s  %-9s  %8d  %9s"):format(s.name, r.status, r.attempts or 0, fmt_duration(r.duration or 0)))
    if r.status == "failed" and not s.continue_on_error then failed[#failed + 1] = s.name end
  end
  print(("workflow %s: %s in %s"):format(wf.name, #failed == 0 and "succeeded" or "failed", fmt_duration(wall() - wall_start)))
  local outputs = {}
  for name, r in pairs(results) do outputs[name] = { status = r.status, output = r.output, attempts = r.attempts } end
  return { ok = #failed == 0, failed = failed, results = outputs }
end

--- Runs the workflow; returns the results by step and whether all succeeded.
function M.execute(wf, options)
  options = check_arguments(wf, options, "execute")
  local outcome = execute(wf, options, 2)
  return outcome
end

--- Runs a workflow the way `lunar run FILE` does: raises if a step failed.
function M.run(wf, options)
  options = check_arguments(wf, options, "run")
  local outcome = execute(wf, options, 2)
  if not outcome.ok then
    -- One line: each step's error, with its place, was shown as it failed.
    error(("workflow %s failed: step%s %s failed"):format(wf.name, #outcome.failed == 1 and "" or "s",
      table.concat(outcome.failed, ", ")), 2)
  end
  return outcome
end

return M
