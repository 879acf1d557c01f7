-- Lunar's busted-compatible spec DSL and runner core.
--
-- A spec file is loaded, its top-level calls register blocks, and then the
-- tree runs as busted runs it: a describe block's body runs when the block
-- executes (collecting its children), then its children run in order.
-- Every test body, hook and block body runs as a runtime task, so specs can
-- wait on tasks, queue jobs and machines like any script.
--
-- Called by the Swift runner with the luassert library table and its host
-- functions; returns the runner table (`run_file`, `export`, and `module`:
-- what `require "busted"` gives, the API busted exports).
--
-- With `options.details` (the json and junit reports), each result also
-- carries what busted's reports copy: the element (name, descriptor,
-- attributes, where it was declared, its start and end) and the frame the
-- failure was raised in.

local luassert, spawn_untraced, settle, take_unobserved, report, failure_frame, mark_test = ...
local lunar = require "lunar"
local trace = require "lunar.trace"

local busted = {}

-- MARK: Results

local options        -- filters and modes for this run
local current        -- the block whose body is running (collecting children)
local running_test   -- the test element running now, for finally/pending
local exit_test      -- the test whose body or finally runs now
local exit_called    -- the os.exit error raised in it, even if caught

local PENDING_MT = { __name = "busted.pending", __tostring = function(p) return p.message end }
local EXIT_MT = { __name = "busted.exit", __tostring = function(e) return e.message end }

-- busted's copy of an element for its reports: declared fields only, and
-- the end of a test only once it ended (busted copies a failing test as
-- the failure happens).
local function details_of(element, ended)
  if not options.details or not element.descriptor then return nil end
  return {
    name = element.busted_name,
    descriptor = element.descriptor,
    attributes = element.attributes,
    trace = element.trace,
    starttick = element.starttick,
    starttime = element.starttime,
    endtick = ended and element.endtick or nil,
    endtime = ended and element.endtime or nil,
    duration = ended and element.endtick and (element.endtick - element.starttick) or nil,
  }
end

-- Each result goes to the Swift runner as it happens, so a run stopped by
-- Ctrl-C still reports the tests that finished. `frame` is where a failure
-- was raised (debug.getinfo's fields), for the detailed reports.
local function record(element, status, message, position, traceback, duration, frame)
  local ended = status == "success" or status == "pending"
  report {
    name = element.full_name,
    status = status,
    message = message,
    position = position or element.position,
    traceback = traceback,
    duration = duration or 0,
    tags = element.tags,
    element = details_of(element, ended),
    frame = options.details and frame or nil,
  }
end

-- MARK: Tree

local function tags_of(name, inherited)
  local tags = {}
  for _, tag in ipairs(inherited or {}) do tags[#tags + 1] = tag end
  for tag in tostring(name):gmatch("#([%w_%-%.]+)") do tags[#tags + 1] = tag end
  return tags
end

local function position_of_caller(level)
  local info = debug.getinfo(level + 1, "Sl")
  if not info then return "?" end
  return info.short_src .. ":" .. (info.currentline or 0)
end

-- Lunar's own chunks, which busted's traces skip as busted skips its own
-- files (lunar_isinternalchunk's list).
local function is_lunars(source)
  return source == "=busted" or source == "=luassert" or source == "=sandbox" or source == "=lunar"
    or source:find("^=lunar[ .]") ~= nil
end

-- busted's trace of the code `level` levels up, past C functions and
-- Lunar's chunks: debug.getinfo's fields and a traceback cut before the
-- first C frame, as busted.getTrace gives them.
local function trace_of_caller(level)
  level = level + 1
  local info = debug.getinfo(level, "Sl")
  while info and (info.what == "C" or is_lunars(info.source)) do
    level = level + 1
    info = debug.getinfo(level, "Sl")
  end
  if not info then return nil end
  -- Cut before the first C frame, keeping the line's end: a task's stack
  -- ends with the user's frame where busted's ends in its own xpcall.
  local traceback = debug.traceback("", level)
  local cut = traceback:find("\n%s*%[C]")
  return {
    source = info.source, short_src = info.short_src, currentline = info.currentline,
    linedefined = info.linedefined, lastlinedefined = info.lastlinedefined, what = info.what,
    traceback = cut and traceback:sub(1, cut) or (traceback .. "\n"),
  }
end

local function new_element(kind, name, fn, parent, position)
  local full = name
  if parent and parent.full_name and parent.kind ~= "file" then full = parent.full_name .. " " .. name end
  return {
    kind = kind,
    name = name,
    fn = fn,
    parent = parent,
    full_name = full,
    position = position,
    tags = tags_of(name, parent and parent.tags),
    children = {},
    hooks = {
      before_each = {}, after_each = {}, strict_setup = {}, strict_teardown = {}, lazy_setup = {}, lazy_teardown = {},
    },
  }
end

-- What busted's reports call each kind of block, and the attributes busted
-- registers it with (a pending block's `default_fn`, a function, is left
-- out: no report can carry it).
local DESCRIPTORS = {
  describe = "describe", insulate = "describe", expose = "describe", it = "it", pending = "pending", file = "file",
}
local ATTRIBUTES = {
  insulate = { envmode = "insulate" }, expose = { envmode = "expose" }, file = { envmode = "insulate" },
}

-- As in busted, a block or test is `word(name, fn)`, `word(fn)` (named
-- after the word it was declared with) or `word(name)`, which returns a
-- function taking `fn`: the curried `it "name" (function() ... end)`. A
-- test whose function never comes is pending; a block whose function
-- never comes is empty. `word` is `kind` or an alias of it (`context`).
local function register(kind, word)
  word = word or kind
  return function(name, fn)
    if kind == "pending" and running_test then
      -- pending("reason") inside a test marks that test pending.
      error(setmetatable({ message = tostring(name), position = position_of_caller(2) }, PENDING_MT), 2)
    end
    if current == nil then error(("'%s' called outside a spec file"):format(word), 2) end
    if running_test and kind ~= "pending" then
      error(("'%s' cannot be nested inside a test"):format(word), 2)
    end
    -- busted names a block declared without a name after its alias, and
    -- leaves it unnamed (shown by its descriptor) otherwise.
    local given = name
    if type(name) == "function" and fn == nil then
      name, fn, given = word, name, (word ~= DESCRIPTORS[kind]) and word or nil
    end
    if kind == "pending" then fn = fn or function() end end
    if fn ~= nil and type(fn) ~= "function" then
      error(("bad argument #2 to '%s' (function expected, got %s)"):format(word, type(fn)), 2)
    end
    local element = new_element(kind, tostring(name), fn, current, position_of_caller(2))
    if options.details then
      element.descriptor = DESCRIPTORS[kind]
      element.busted_name = given ~= nil and tostring(given) or nil
      element.attributes = ATTRIBUTES[kind] or {}
      element.trace = trace_of_caller(2)
    end
    current.children[#current.children + 1] = element
    if fn == nil then
      return function(body)
        if type(body) ~= "function" then
          error(("bad argument #1 to '%s \"%s\"' (function expected, got %s)")
            :format(word, element.name, type(body)), 2)
        end
        element.fn = body
      end
    end
  end
end

-- A hook is `word(fn)`, `word(name, fn)` or the curried `word "name" (fn)`,
-- as in busted; `word` is `kind` or an alias of it (`setup`). As in busted,
-- a hook is known by its name, else its alias, else its kind.
local function hook(kind, word)
  word = word or kind
  -- The hook as declared `level` levels up, without its function yet.
  local function entry_for(name, level)
    local entry = { position = position_of_caller(level + 1), label = name or word }
    if options.details then
      entry.descriptor = kind
      entry.busted_name = name or (word ~= kind and word or nil)
      entry.attributes = { envmode = "unwrap" }
      entry.trace = trace_of_caller(level + 1)
    end
    return entry
  end
  local function add(block, entry, fn)
    local list = block.hooks[kind]
    entry.fn = fn
    list[#list + 1] = entry
  end
  return function(name, fn)
    if current == nil or running_test then error(("'%s' must be called in a describe block"):format(word), 2) end
    local argument = 2
    if fn == nil then
      if type(name) == "string" then
        local block, entry = current, entry_for(name, 2)
        return function(body)
          if type(body) ~= "function" then
            error(("bad argument #1 to '%s \"%s\"' (function expected, got %s)"):format(word, name, type(body)), 2)
          end
          add(block, entry, body)
        end
      end
      name, fn, argument = nil, name, 1
    end
    if type(fn) ~= "function" then
      error(("bad argument #%d to '%s' (function expected, got %s)"):format(argument, word, type(fn)), 2)
    end
    add(current, entry_for(type(name) == "string" and name or nil, 2), fn)
  end
end

busted.describe = register("describe")
busted.context = register("describe", "context")
busted.insulate = register("insulate")
busted.expose = register("expose")
busted.it = register("it")
busted.spec = register("it", "spec")
busted.test = register("it", "test")
busted.pending = register("pending")
busted.before_each = hook("before_each")
busted.after_each = hook("after_each")
busted.strict_setup = hook("strict_setup")
busted.setup = hook("strict_setup", "setup")
busted.strict_teardown = hook("strict_teardown")
busted.teardown = hook("strict_teardown", "teardown")
busted.lazy_setup = hook("lazy_setup")
busted.lazy_teardown = hook("lazy_teardown")

-- Lua's argument error for the public function `name`, raised at the
-- line that called it; `given` is how many arguments came.
local function argument_error(position, name, expected, value, given)
  local got = given < position and "no value" or type(value)
  error(("bad argument #%d to '%s' (%s expected, got %s)"):format(position, name, expected, got), 3)
end

function busted.finally(...)
  local fn = ...
  if not running_test then error("'finally' must be called inside a test", 2) end
  if type(fn) ~= "function" then argument_error(1, "finally", "function", fn, select("#", ...)) end
  running_test.finally = fn
end

busted.fail = luassert.fail

-- MARK: os.exit
--
-- os.exit would end the whole run and hide every other file's results. In a
-- spec it raises an error of the test (or block) that called it, and the
-- file goes on; a test that catches it still fails with it.

local function spec_exit(...)
  local info = debug.getinfo(2, "Sl")
  local where = (info and info.currentline > 0) and (info.short_src .. ":" .. info.currentline) or nil
  local code = select("#", ...) > 0 and tostring((...)) or ""
  local message = ("os.exit(%s) called in %s"):format(code, exit_test and "a test" or "a spec file")
  local err = setmetatable({
    message = where and (where .. ": " .. message) or message,
    position = where,
    frame = info and options.details and {
      source = info.source, short_src = info.short_src, currentline = info.currentline,
      linedefined = info.linedefined, lastlinedefined = info.lastlinedefined, what = info.what,
    } or nil,
    traceback = debug.traceback(nil, 2),   -- from the caller: no frame of ours
  }, EXIT_MT)
  if exit_test then exit_called = err end
  error(err, 2)
end

-- MARK: Environments
--
-- As in busted, every block and test runs with its own global environment
-- whose reads fall back to the enclosing block's: a global assigned in one
-- test is not seen by the next, one assigned in a describe body is seen by
-- its children.

local function set_env(fn, env)
  local i = 1
  while true do
    local name = debug.getupvalue(fn, i)
    if name == nil then return end
    if name == "_ENV" then
      -- A fresh upvalue cell, so closures sharing the file's _ENV keep it.
      debug.upvaluejoin(fn, i, function() return env end, 1)
      debug.setupvalue(fn, i, env)
      return
    end
    i = i + 1
  end
end

local function env_for(element)
  if not element.env then
    local parent = element.parent and env_for(element.parent) or _G
    element.env = setmetatable({}, { __index = parent })
  end
  return element.env
end

-- MARK: Running protected, as tasks

local function classify(err)
  if getmetatable(err) == PENDING_MT then return "pending", err.message, err.position end
  if luassert.is_failure(err) then return "failure", err.message, err.position end
  if getmetatable(err) == EXIT_MT then return "error", err.message, err.position end
  local message = err
  if type(err) ~= "string" then
    local mt = getmetatable(err)
    message = (mt and mt.__tostring) and tostring(err) or ("(error object is a %s value)"):format(type(err))
  end
  return "error", message, tostring(message):match("^([^:\n]+:%d+):")
end

-- Runs fn(...) as a task named `label`; returns ok, status, message,
-- position, traceback, frame (where the failure was raised). The task is
-- left out of the trace, so a spec's trace shows its own work. If it
-- deadlocks, its tasks are cancelled and the deadlock report is its error:
-- the file goes on.
local function protected(label, fn, ...)
  local task = spawn_untraced(label, fn, ...)
  local deadlock = settle(task)
  if deadlock then return false, "error", deadlock end
  local ok, err = task:result()
  if ok then return true end
  local status, message, position = classify(err)
  if getmetatable(err) == EXIT_MT then return false, status, message, position, err.traceback, err.frame end
  return false, status, message, position, task.traceback, options.details and failure_frame(task) or nil
end

-- MARK: Selection

local function any_tag(tags, wanted)
  for _, tag in ipairs(tags) do
    for _, w in ipairs(wanted) do if tag == w then return true end end
  end
  return false
end

local function selected(element)
  if #options.tags > 0 and not any_tag(element.tags, options.tags) then return false end
  if #options.exclude_tags > 0 and any_tag(element.tags, options.exclude_tags) then return false end
  if #options.filter > 0 then
    local hit = false
    for _, pattern in ipairs(options.filter) do
      if element.full_name:find(pattern) then hit = true break end
    end
    if not hit then return false end
  end
  for _, pattern in ipairs(options.filter_out) do
    if element.full_name:find(pattern) then return false end
  end
  return true
end

-- MARK: Insulation

local function snapshot()
  local globals, loaded = {}, {}
  for k, v in pairs(_G) do globals[k] = v end
  for k, v in pairs(package.loaded) do loaded[k] = v end
  return { globals = globals, loaded = loaded }
end

local function restore(saved)
  for k in pairs(_G) do if saved.globals[k] == nil then _G[k] = nil end end
  for k, v in pairs(saved.globals) do if _G[k] ~= v then _G[k] = v end end
  for k in pairs(package.loaded) do if saved.loaded[k] == nil then package.loaded[k] = nil end end
  for k, v in pairs(saved.loaded) do if package.loaded[k] ~= v then package.loaded[k] = v end end
end

-- MARK: Execution

local execute_block

local function label_of(block, kind)
  return block.full_name ~= "" and (block.full_name .. " " .. kind) or kind
end

-- A hook's failure is an error of the hook (busted's element is the hook).
local function hook_error(block, h, status, message, position, traceback, frame)
  local element = {
    full_name = label_of(block, h.label), position = position, tags = block.tags,
    descriptor = h.descriptor, busted_name = h.busted_name, attributes = h.attributes, trace = h.trace,
  }
  record(element, status == "failure" and "failure" or "error", message, position, traceback, nil, frame)
end

-- Runs the hooks `kind` of `block`; false if one failed (already recorded).
local function run_hooks(block, kind)
  for _, h in ipairs(block.hooks[kind]) do
    set_env(h.fn, env_for(block))
    local ok, status, message, position, traceback, frame = protected(label_of(block, h.label), h.fn)
    if not ok then
      hook_error(block, h, status, message, position or h.position, traceback, frame)
      return false
    end
  end
  return true
end

local function ensure_lazy_setup(block)
  if block == nil or block.lazy_done then return not (block and block.lazy_failed) end
  if not ensure_lazy_setup(block.parent) then return false end
  block.lazy_done = true
  if #block.hooks.lazy_setup > 0 then
    if not run_hooks(block, "lazy_setup") then
      block.lazy_failed = true
      return false
    end
  end
  return true
end

local function ancestors(element)
  local list = {}
  local block = element.parent
  while block do
    table.insert(list, 1, block)
    block = block.parent
  end
  return list
end

local function execute_test(test)
  if not selected(test) then return end
  if options.list then
    record(test, "listed")
    return
  end
  if not ensure_lazy_setup(test.parent) then return end
  trace.clear()
  -- A timeline (--trace-file) shows each test, its hooks included.
  local outcome = "error"
  if mark_test then mark_test(test.full_name) end
  -- Spies and stubs made during the test are reverted after it, as busted does.
  local snapshot_of_doubles = luassert.assert:snapshot()
  local chain = ancestors(test)
  local ran = 0
  local ok = true
  for _, block in ipairs(chain) do
    ran = ran + 1
    if not run_hooks(block, "before_each") then ok = false break end
  end
  if ok then
    running_test, exit_test, exit_called = test, test, nil
    local started = os.clock()
    if options.details then test.starttick, test.starttime = started, lunar.now() end
    set_env(test.fn, env_for(test))
    local passed, status, message, position, traceback, frame = protected(test.full_name, test.fn)
    running_test = nil
    if test.finally then
      set_env(test.finally, env_for(test))
      local fin_ok, fin_status, fin_message, fin_position, fin_traceback, fin_frame =
        protected(test.full_name .. " finally", test.finally)
      if passed and not fin_ok then
        passed, status, message, position, traceback, frame =
          false, fin_status, fin_message, fin_position, fin_traceback, fin_frame
      end
    end
    exit_test = nil
    if exit_called then
      passed, status, message, position, traceback, frame =
        false, "error", exit_called.message, exit_called.position, exit_called.traceback, exit_called.frame
    end
    local duration = os.clock() - started
    if options.details then test.endtick, test.endtime = started + duration, lunar.now() end
    -- Tasks the test started that failed with nobody looking fail the test.
    local unobserved = take_unobserved()
    if passed and unobserved then
      passed, status, message = false, "error", table.concat(unobserved, "\n")
    end
    if passed then
      record(test, "success", nil, nil, nil, duration)
    else
      record(test, status, message, position, traceback, duration, frame)
    end
    outcome = passed and "success" or status
  end
  for i = ran, 1, -1 do
    run_hooks(chain[i], "after_each")
  end
  if mark_test then mark_test(test.full_name, outcome) end
  snapshot_of_doubles:revert()
end

local function shuffle(list)
  for i = #list, 2, -1 do
    local j = math.random(i)
    list[i], list[j] = list[j], list[i]
  end
end

local function execute_pending(element)
  if not selected(element) then return end
  if options.details then
    element.starttick, element.starttime = os.clock(), lunar.now()
    element.endtick, element.endtime = element.starttick, element.starttime
  end
  record(element, options.list and "listed" or "pending", element.name)
end

local function has_selected_test(block)
  for _, child in ipairs(block.children) do
    if child.kind == "it" and selected(child) then return true end
  end
  return false
end

function execute_block(block)
  local saved = (block.kind == "insulate") and snapshot() or nil
  local previous = current
  current = block
  if block.fn then
    if block.kind ~= "file" then set_env(block.fn, env_for(block)) end
    if options.details then block.starttick, block.starttime = os.clock(), lunar.now() end
    local name = block.kind == "file" and block.name or block.full_name
    local ok, status, message, position, traceback, frame = protected(name, block.fn)
    if not ok then
      current = previous
      local element = setmetatable({ full_name = name, position = position or block.position }, { __index = block })
      record(element, status == "failure" and "failure" or "error", message, position or block.position, traceback, nil,
        frame)
      if saved then restore(saved) end
      return
    end
  end
  current = previous
  if options.shuffle then shuffle(block.children) end
  local setup_ok = options.list or run_hooks(block, "strict_setup")
  if setup_ok then
    for _, child in ipairs(block.children) do
      if child.kind == "it" and child.fn then
        execute_test(child)
      elseif child.kind == "pending" or child.kind == "it" then
        execute_pending(child)
      else
        execute_block(child)
      end
    end
  end
  if not options.list then
    if block.lazy_done and not block.lazy_failed then run_hooks(block, "lazy_teardown") end
    if setup_ok then run_hooks(block, "strict_teardown") end
  end
  if saved then restore(saved) end
  return has_selected_test(block)
end

-- MARK: Entry point

local function default_options(given)
  local o = given or {}
  o.tags = o.tags or {}
  o.exclude_tags = o.exclude_tags or {}
  o.filter = o.filter or {}
  o.filter_out = o.filter_out or {}
  return o
end

-- MARK: The busted module

-- The functions busted exports, each also a field of `require "busted"`.
local DSL = {
  "describe", "context", "insulate", "expose", "it", "spec", "test", "pending",
  "before_each", "after_each", "setup", "teardown", "strict_setup", "strict_teardown",
  "lazy_setup", "lazy_teardown",
}

-- busted's bindfenv: `callable` sees the global `var` as `value`, its other
-- globals unchanged.
local function bindfenv(...)
  local callable, var, value = ...
  local mt = debug.getmetatable(callable)
  local fn = (mt and mt.__call) or callable
  if type(fn) ~= "function" then argument_error(1, "bindfenv", "function", callable, select("#", ...)) end
  if var == nil then argument_error(2, "bindfenv", "string", var, select("#", ...)) end
  local env = _G
  for i = 1, math.huge do
    local name, upvalue = debug.getupvalue(fn, i)
    if name == nil then break end
    if name == "_ENV" then env = upvalue break end
  end
  set_env(fn, setmetatable({ [var] = value }, { __index = env }))
end

local api = {
  assert = luassert.assert,
  spy = luassert.spy,
  stub = luassert.stub,
  mock = luassert.mock,
  match = luassert.match,
  fail = busted.fail,
  bindfenv = bindfenv,
  -- Lunar reports through its own reporters; busted's event bus is inert.
  publish = function() end,
  subscribe = function() end,
  unsubscribe = function() end,
  -- The runtime's clock: virtual in a spec, so sleeping costs nothing.
  gettime = lunar.now,
  monotime = lunar.now,
  sleep = lunar.sleep,
  parent = function(element) return element and element.parent end,
  children = function(element) return element and element.children or {} end,
  version = "2.1.1 (lunar)",
}
for _, name in ipairs(DSL) do api[name] = busted[name] end

-- `require "busted.runner"()` at the top of a spec makes it runnable by
-- plain lua; under a runner, as here, busted makes that call do nothing.
package.loaded["busted.runner"] = function() return function() end end

local runner = {}

-- What `require "busted"` returns: busted's API, read-only as in busted.
runner.module = setmetatable({}, {
  __index = api,
  __newindex = function() error("Attempt to modify busted", 2) end,
})

-- Exposes the DSL and luassert as globals, as busted does, and puts the
-- spec's os.exit in place.
function runner.export(env)
  env = env or _G
  for _, name in ipairs(DSL) do env[name] = busted[name] end
  env.finally = busted.finally
  env.assert = luassert.assert
  env.spy = luassert.spy
  env.stub = luassert.stub
  env.mock = luassert.mock
  env.match = luassert.match
  if os then os.exit = spec_exit end
end

--- Runs one spec file; each result goes to the Swift runner as it happens.
function runner.run_file(path, given_options)
  options = default_options(given_options)
  if options.seed then math.randomseed(options.seed) end
  trace.start()
  local chunk, load_error = loadfile(path)
  local root = new_element("file", path, chunk, nil, path .. ":1")
  root.full_name = ""
  if options.details then
    root.descriptor, root.busted_name, root.attributes = "file", path, ATTRIBUTES.file
  end
  if not chunk then
    -- busted reports a file it cannot load with a bare element.
    local element = { full_name = path, position = path, tags = {}, descriptor = "file", busted_name = path }
    record(element, "error", load_error, (load_error:match("^([^:\n]+:%d+):")))
  else
    execute_block(root)
  end
  current, running_test = nil, nil
end

return runner
