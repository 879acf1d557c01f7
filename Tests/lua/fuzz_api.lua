-- Calls every public Lunar function and method with hostile arguments and
-- checks that each call ends in a value or a clear Lua error, never a signal,
-- a Swift trap or a hang. Run by Tests/LunarCLITests/FuzzTests.swift, one
-- process per target so a crash names the function that caused it:
--
--   lunar run --clock virtual Tests/lua/fuzz_api.lua TARGET
--
-- TARGET is a module (`lunar`, `lunar.queue`, ...), a class of objects
-- (`task`, `queue`, `machine`) or `services` (what actions see through ctx).
-- Functions are found by walking the tables, so new API is fuzzed without
-- being listed here. Every error message is checked for the names of Lunar's
-- own chunks (`lunar.workflow:12:`, `[string "..."]`): a user must see their
-- file and line and the public function they called, never Lunar's insides.
-- Each such message is printed on a line starting "internal chunk named";
-- the last line is "fuzz TARGET: N calls, N errors, N naming internal chunks".
local target = assert(arg[1], "usage: fuzz_api.lua TARGET")

-- MARK: The command line
--
-- TARGET `command line` (`fuzz_api.lua 'command line' LUNAR [SEED]`) runs
-- the program LUNAR with words of random bytes instead: every command,
-- with its own flags (read from `LUNAR help COMMAND`) given values of
-- random bytes, attached (`-j2`, `--jobs=2`) or not, and random operands.
-- Each run must end by itself with status 0, 1 or 2, and a failure must
-- say so in one clear message, in text: a first line from lunar, the
-- bytes that are not UTF-8 escaped, and for a usage error (2) the line and
-- its hint only. Each run that does not is printed on a line starting
-- "unclear run"; the last line is "fuzz command line: N runs, N unclear".
-- Words hold no `/`, so whatever a run writes stays in its own folder
-- under the current one.
if target == "command line" then
  local program = assert(arg[2], "usage: fuzz_api.lua 'command line' LUNAR [SEED]")
  math.randomseed(tonumber(arg[3]) or 26)

  local function quote(word) return "'" .. word:gsub("'", "'\\''") .. "'" end

  local function output_of(command)
    local pipe = assert(io.popen(command))
    local text = pipe:read("a")
    pipe:close()
    return text
  end

  local function read(path)
    local file = io.open(path, "rb")
    if not file then return "" end
    local text = file:read("a")
    file:close()
    return text
  end

  -- Every command and its flags: long name, short letter, whether it takes
  -- a value (and whether only as --name=VALUE).
  local commands = {}
  for name in output_of(quote(program) .. " help"):gmatch("\n  (%l+)  ") do
    local flags = {}
    for line in output_of(quote(program) .. " help " .. name):gmatch("[^\n]+") do
      local short = line:match("^  %-(%a), %-%-")
      local long, after = line:match("%-%-([%w%-]+)(.*)$")
      if long and line:match("^  [%- ]") then
        flags[#flags + 1] = {
          long = long, short = short,
          value = after:match("^ %S") ~= nil or after:match("^%[=") ~= nil,
          optional = after:match("^%[=") ~= nil,
        }
      end
    end
    commands[#commands + 1] = { name = name, flags = flags }
  end
  assert(#commands > 5, "no commands in lunar help")

  local tokens = { "", "-", "--", "-x", "0", "-1", "2", "1e400", "nan", "last", "a,b", ",", "=", "sqlite:x", "b\255in" }
  local function random_word()
    if math.random(4) == 1 then return tokens[math.random(#tokens)] end
    local bytes = {}
    for i = 1, math.random(0, 6) do
      local kind = math.random(3)
      local byte = kind == 1 and math.random(0x20, 0x7e) or kind == 2 and math.random(0x80, 0xff)
        or math.random(1, 0x1f)
      if byte == 0x2f then byte = 0x5f end  -- no `/`: writes stay here
      bytes[i] = string.char(byte)
    end
    return table.concat(bytes)
  end

  local function command_line(command)
    local words = { command.name }
    for _ = 1, math.random(0, 3) do
      local flag = command.flags[math.random(#command.flags)]
      local value = random_word()
      if not flag.value then
        words[#words + 1] = (flag.short and math.random(2) == 1) and ("-" .. flag.short) or ("--" .. flag.long)
      elseif flag.optional or math.random(3) == 1 then
        words[#words + 1] = "--" .. flag.long .. "=" .. value
      elseif flag.short and math.random(2) == 1 then
        words[#words + 1] = "-" .. flag.short .. value
      else
        words[#words + 1] = "--" .. flag.long
        words[#words + 1] = value
      end
    end
    if math.random(4) == 1 then words[#words + 1] = "--" end
    for _ = 1, math.random(0, 2) do words[#words + 1] = random_word() end
    return words
  end

  local runs, unclear = 0, {}
  local trials = tonumber(os.getenv("LUNAR_FUZZ_RUNS") or "") or 40
  for _, command in ipairs(commands) do
    if #command.flags > 0 then
      for _ = 1, trials do
        local words = command_line(command)
        local quoted = {}
        for i, word in ipairs(words) do quoted[i] = quote(word) end
        -- Each run in a folder of its own, so none finds what another
        -- wrote (a file a worker would serve forever). A hang is ended
        -- (status 137): a guard, not a time limit.
        runs = runs + 1
        local folder = "run" .. runs
        -- `lunar serve` runs until it is stopped: a command line it takes
        -- is stopped by SIGTERM after 1 s (timeout's status 124) and must
        -- then end cleanly too.
        local limit = command.name == "serve" and "-s TERM -k 10 1" or "-s KILL 120"
        local line = "mkdir %s && cd %s && timeout %s %s %s </dev/null >../out.txt 2>../err.txt"
        local _, how, status = os.execute(line:format(folder, folder, limit, quote(program), table.concat(quoted, " ")))
        if command.name == "serve" and how == "exit" and status == 124 then status = 0 end
        local err = read("err.txt")
        local problem
        if how ~= "exit" or (status ~= 0 and status ~= 1 and status ~= 2) then
          problem = ("ended by %s %s"):format(how, tostring(status))
        -- (A run of specs that fail says so in its report, on standard output.)
        elseif status ~= 0 and not err:match("^lunar") and not (status == 1 and err == "" and read("out.txt") ~= "")
        then
          problem = "a failure without a message from lunar"
        elseif not utf8.len(err) then
          problem = "a message that is not text (bytes not escaped)"
        elseif err:find("\239\191\189", 1, true) then
          problem = "a message with U+FFFD for bytes (not escaped)"
        elseif status == 2 and not err:match("^lunar: [^\n]*\nTry 'lunar help[^\n]*'%.\n$") then
          problem = "a usage error that is not one line and its hint"
        end
        if problem then
          local shown = {}
          for i, word in ipairs(words) do shown[i] = ("%q"):format(word):gsub("\\\n", "\\n") end
          unclear[#unclear + 1] = ("lunar %s: %s: %s"):format(table.concat(shown, " "), problem, err:sub(1, 300))
        end
      end
    end
  end
  for _, line in ipairs(unclear) do print("unclear run " .. line) end
  print(("fuzz command line: %d runs, %d unclear"):format(runs, #unclear))
  return
end

-- MARK: Hostile values

local function deep(depth)
  local root = {}
  local t = root
  for _ = 1, depth do
    t[1] = {}
    t = t[1]
  end
  return root
end

local cyclic = {}
cyclic.self = cyclic
cyclic[1] = cyclic

local booby = setmetatable({}, {
  __index = function() error("booby trap: __index") end,
  __newindex = function() error("booby trap: __newindex") end,
  __len = function() error("booby trap: __len") end,
  __tostring = function() error("booby trap: __tostring") end,
  __pairs = function() error("booby trap: __pairs") end,
  __eq = function() error("booby trap: __eq") end,
  __lt = function() error("booby trap: __lt") end,
  __concat = function() error("booby trap: __concat") end,
  __call = function() error("booby trap: __call") end,
  __name = "booby",
})

local values = {
  { "nil", nil },
  { "true", true },
  { "false", false },
  { "0", 0 },
  { "-1", -1 },
  { "0.5", 0.5 },
  { "-0.0", -0.0 },
  { "nan", 0 / 0 },
  { "inf", math.huge },
  { "-inf", -math.huge },
  { "maxinteger", math.maxinteger },
  { "mininteger", math.mininteger },
  { "2^63", 2.0 ^ 63 },
  { "-2^63", -(2.0 ^ 63) },
  { "1e300", 1e300 },
  { "empty string", "" },
  { "NUL", "\0" },
  { "a NUL b", "a\0b" },
  { "invalid UTF-8", "\xff\xfe\xc3" },
  { "combining", "e\xcc\x81" },
  { "numeric string", "42" },
  { "megabyte string", string.rep("x", 1 << 20) },
  { "empty table", {} },
  { "array with a hole", { 1, 2, nil, 4 } },
  { "keyed table", { name = "x", [true] = 1, [2.5] = "y" } },
  { "deep table", deep(10000) },
  { "cyclic table", cyclic },
  { "booby-trapped table", booby },
  { "function", function() end },
  { "erroring function", function() error("from a fuzz callback") end },
  { "coroutine", coroutine.create(function() end) },
  { "table of functions", { function() end, function() end } },
}

-- MARK: What to call

local function methods_of(object)
  local mt = getmetatable(object)
  local index = type(mt) == "table" and rawget(mt, "__index")
  if type(index) == "table" then return index end
  -- Classes with properties index through a C closure whose second upvalue
  -- is the methods table.
  if type(index) == "function" and debug then
    for i = 1, 4 do
      local name, value = debug.getupvalue(index, i)
      if name == nil then break end
      if type(value) == "table" then return value end
    end
  end
  return {}
end

-- Functions of `t` (and of its nested plain tables), as "prefix.name".
local function functions_of(t, prefix, out, seen)
  out, seen = out or {}, seen or {}
  if seen[t] then return out end
  seen[t] = true
  for key, value in pairs(t) do
    if type(key) == "string" then
      local name = prefix .. "." .. key
      if type(value) == "function" then
        out[#out + 1] = { name = name, fn = value }
      elseif type(value) == "table" and getmetatable(value) == nil and key ~= "_host" then
        functions_of(value, name, out, seen)
      end
    end
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

local function as_methods(object, label)
  local out = {}
  for name, fn in pairs(methods_of(object)) do
    if type(fn) == "function" then
      out[#out + 1] = { name = label .. ":" .. name, fn = fn, self = object }
    end
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

local machine_definition = {
  name = "fuzz", initial = "idle",
  states = { idle = { on = { go = "busy" } }, busy = { on = { stop = "idle" } } },
}

local targets = {
  task = function()
    return as_methods(lunar.spawn(function() end), "task")
  end,
  queue = function()
    return as_methods(require("lunar.queue").new("fuzz"), "queue")
  end,
  machine = function()
    return as_methods(require("lunar.machine").new(machine_definition), "machine")
  end,
  services = function()
    local out = {}
    lunar.action("fuzz.services", { uses = { "http", "store", "log", "clock", "launches" } }, function(ctx)
      for _, service in ipairs({ "http", "store", "log", "clock" }) do
        for name, fn in pairs(ctx[service]) do
          if type(fn) == "function" then
            out[#out + 1] = { name = service .. ":" .. name, fn = fn, self = ctx[service] }
          end
        end
      end
    end)
    lunar.run("fuzz.services")
    table.sort(out, function(a, b) return a.name < b.name end)
    return out
  end,
}

local function module_functions(name)
  local module = require(name)
  if name == "lunar.launches" then
    -- Never reach the network: the samples built into Lunar answer.
    module.configure { samples = true }
  end
  local out = functions_of(module, name)
  -- Callable modules (`workflow "name"`) are fuzzed through their __call too.
  local mt = getmetatable(module)
  if type(mt) == "table" and type(rawget(mt, "__call")) == "function" then
    out[#out + 1] = { name = name .. "()", fn = function(...) return module(...) end }
  end
  return out
end

-- Option tables: every option field any Lunar function reads, each set to a
-- hostile value in turn (`upcoming{ limit = -1 }`).
local option_fields = {
  "name", "policy", "source", "limit", "endpoints", "cooldown", "initial", "states", "context", "strict",
  "uses", "with", "needs", "queue", "retry", "timeout", "if", "continue_on_error", "services", "jobs",
  "journal", "only", "from", "dry_run", "progress", "attempts", "backoff", "durable", "on", "enter", "exit",
  "run", "targets", "minutes", "id", "description", "when", "quiet", "store", "resume",
}

-- DOT drawings Graphviz refused (or warned about), by the value that made
-- them: any is a failure of the run (see the end).
local refused_by_graphviz = {}

-- Machines whose names, states and messages are hostile strings; Graphviz
-- (installed by scripts/bootstrap) must read each one's DOT drawing.
targets["machine definitions"] = function()
  local machine = require "lunar.machine"
  local out = {}
  for _, value in ipairs(values) do
    local v = value[2]
    out[#out + 1] = { name = "machine.new with " .. value[1], once = true, fn = function()
      local other = type(v) == "string" and v .. "'" or "other"
      local m = machine.new {
        name = v, initial = v, context = { v },
        states = { [v] = { on = { [v] = other } }, [other] = { on = { [v] = v } } },
      }
      m:send(v)
      m:settle()
      local _, _ = m.state, m.name
      m:step(v, v)
      machine.graph(m, "mermaid")
      -- Through a file: a pipe that dot closes early would end this process.
      local drawing, errors = os.tmpname(), os.tmpname()
      local file = assert(io.open(drawing, "w"))
      assert(file:write(machine.graph(m, "dot")))
      file:close()
      local read = os.execute(("dot -Tsvg -o /dev/null %s 2>%s"):format(drawing, errors))
      file = assert(io.open(errors))
      local said = file:read("a")
      file:close()
      os.remove(drawing)
      os.remove(errors)
      -- Laying out a megabyte label makes dot warn about its splines: only
      -- what it says about reading the drawing counts here.
      if not read or said:find("Error") or said:find("syntax") then
        refused_by_graphviz[#refused_by_graphviz + 1] = value[1] .. ": " .. said
      end
      machine.interpreter(v, function() end)
      m:stop()
    end }
  end
  return out
end

-- Objects of one class given to the methods of another, even through
-- debug.setmetatable.
targets.confusion = function()
  local queue = require("lunar.queue").new("confused")
  local m = require("lunar.machine").new(machine_definition)
  local objects = { task = lunar.spawn(function() end), queue = queue, machine = m }
  local out = {}
  for class, object in pairs(objects) do
    for other, impostor in pairs(objects) do
      if other ~= class then
        for _, entry in ipairs(as_methods(object, class)) do
          out[#out + 1] = { name = entry.name .. " on a " .. other, fn = entry.fn, self = impostor }
        end
      end
    end
  end
  if debug then
    local swapped = lunar.spawn(function() end)
    debug.setmetatable(swapped, getmetatable(queue))
    for _, entry in ipairs(as_methods(queue, "queue")) do
      out[#out + 1] = { name = entry.name .. " on a task with a queue's metatable", fn = entry.fn, self = swapped }
    end
  end
  return out
end

-- The debug library turned on Lunar's own functions and objects: every
-- upvalue of every function replaced by each hostile value and the function
-- called; every object given every class's metatable and each metamethod
-- called on it, __gc and __close included; a host function's box released
-- by hand. Each ends in a value or an error, and everything is put back.
targets.debug = function()
  local out = {}
  local functions = {}
  local modules = { "lunar", "lunar.queue", "lunar.machine", "lunar.actions", "lunar.trace", "lunar.workflow" }
  for _, module in ipairs(modules) do
    for _, entry in ipairs(functions_of(require(module), module)) do functions[#functions + 1] = entry end
  end
  for _, name in ipairs { "resume", "wrap", "yield", "isyieldable", "status", "close" } do
    functions[#functions + 1] = { name = "coroutine." .. name, fn = coroutine[name] }
  end
  functions[#functions + 1] = { name = "table.sort", fn = table.sort }
  functions[#functions + 1] = { name = "require", fn = require }
  functions[#functions + 1] = { name = "setmetatable", fn = setmetatable }
  functions[#functions + 1] = { name = "debug.setmetatable", fn = debug.setmetatable }
  functions[#functions + 1] = { name = "error", fn = error }
  functions[#functions + 1] = { name = "a wrapped coroutine", fn = coroutine.wrap(function() end) }
  local objects = {
    task = lunar.spawn(function() end),
    queue = require("lunar.queue").new("debugged"),
    machine = require("lunar.machine").new(machine_definition),
  }
  for name, object in pairs(objects) do
    for _, entry in ipairs(as_methods(object, name)) do functions[#functions + 1] = entry end
    local mt = getmetatable(object)
    for key, fn in pairs(mt) do
      if type(fn) == "function" then functions[#functions + 1] = { name = name .. " " .. key, fn = fn } end
    end
  end
  for _, entry in ipairs(functions) do
    out[#out + 1] = { name = "debug.setupvalue on " .. entry.name, once = true, fn = function()
      for i = 1, 4 do
        local upname, original = debug.getupvalue(entry.fn, i)
        if upname == nil then break end
        for _, value in ipairs(values) do
          debug.setupvalue(entry.fn, i, value[2])
          pcall(entry.fn, entry.self, value[2])
          pcall(entry.fn)
        end
        debug.setupvalue(entry.fn, i, original)
      end
    end }
  end
  local metatables = {}
  for _, object in pairs(objects) do metatables[#metatables + 1] = getmetatable(object) end
  local _, box = debug.getupvalue(lunar.sleep, 1)
  if type(box) == "userdata" then metatables[#metatables + 1] = getmetatable(box) end
  local impostors = {
    task = lunar.spawn(function() end),
    queue = require("lunar.queue").new("impostor"),
    machine = require("lunar.machine").new(machine_definition),
    file = io.tmpfile(),
  }
  for name, impostor in pairs(impostors) do
    out[#out + 1] = { name = "every class's metatable on a " .. name, once = true, fn = function()
      local own = debug.getmetatable(impostor)
      for _, mt in ipairs(metatables) do
        debug.setmetatable(impostor, mt)
        pcall(tostring, impostor)
        pcall(function() return impostor.state, impostor.length end)
        for _, key in ipairs { "__gc", "__close", "__tostring", "__index", "__call", "__len" } do
          local fn = rawget(mt, key)
          if type(fn) == "function" then
            pcall(fn, impostor, "state")
            pcall(fn)
            pcall(fn, 42)
          end
        end
      end
      debug.setmetatable(impostor, own)
    end }
  end
  out[#out + 1] = { name = "a host function's box released by hand", once = true, fn = function()
    local machine = require "lunar.machine"
    local kept
    machine.interpreter("keep", function(_, send) kept = send end)
    local m = machine.new { name = "keeper", initial = "idle",
      states = { idle = { on = { go = function() return nil, { { "keep" } } end } } } }
    m:send("go")
    m:settle()
    local _, kept_box = debug.getupvalue(kept, 1)
    local gc = getmetatable(kept_box).__gc
    gc(kept_box)
    gc(kept_box)
    gc(io.tmpfile())
    assert(not pcall(kept, "go"), "a released function must refuse to run")
  end }
  return out
end

local calls = (targets[target] or function() return module_functions(target) end)()
assert(#calls > 0, "nothing to fuzz in " .. target)

-- MARK: Calling

local count, errors = 0, 0
local pending = {}

-- Messages that name a chunk of Lunar's instead of the caller's.
local INTERNAL = { "lunar.workflow:", "lunar.actions:", "lunar.launches:", "lunar.machine:", "=lunar", '[string "' }
local leaks, leaked = {}, {}

local function check_message(entry, err)
  if type(err) ~= "string" then return end
  for _, pattern in ipairs(INTERNAL) do
    if err:find(pattern, 1, true) then
      -- One line per function and place: the same leak repeats for
      -- every hostile value.
      local key = entry.name .. " " .. (err:match("[^%s:]+:%d+:") or pattern)
      if not leaked[key] then
        leaked[key] = true
        local line = err:gsub("\n.*", "")
        leaks[#leaks + 1] = entry.name .. ": " .. (#line > 200 and line:sub(1, 197) .. "..." or line)
      end
      return
    end
  end
end

-- Each call runs as a task, so one that waits forever (a sleep of 1e300
-- seconds) is cancelled at the end instead of hanging the run.
local function try(entry, args, n)
  count = count + 1
  local task = lunar.spawn(function()
    -- Curried results (workflow.step "x" returns a function) get the same
    -- hostile argument once more.
    local results = table.pack(pcall(entry.fn, table.unpack(args, 1, n)))
    if not results[1] then check_message(entry, results[2]) end
    if results[1] and type(results[2]) == "function" then
      local ok, err = pcall(results[2], args[n > 1 and n or 1])
      if not ok then check_message(entry, err) end
    end
    -- Tasks a fuzzed call started (spawn, submit) are observed here, so
    -- their failures are not reported as unobserved at the end.
    for i = 2, results.n do
      local handle = results[i]
      if type(handle) == "userdata" and tostring(handle):match("^.+ %((%a+)%)$") then
        local ok, err = pcall(function() handle:cancel() handle:result() end)
        if not ok then check_message(entry, err) end
      end
    end
    return results[1]
  end)
  pending[#pending + 1] = task
end

-- Every hostile value at each of the first three positions, in each option
-- field, and in all positions at once.
local function fuzz(entry)
  for position = 1, 3 do
    for _, value in ipairs(values) do
      local args, n = {}, position
      if entry.self ~= nil then args[1], n = entry.self, position + 1 end
      args[n] = value[2]
      try(entry, args, n)
    end
  end
  if entry.self == nil then
    for _, field in ipairs(option_fields) do
      for _, value in ipairs(values) do
        try(entry, { { [field] = value[2] } }, 1)
      end
    end
  end
  for _, value in ipairs(values) do
    local args = { value[2], value[2], value[2] }
    if entry.self ~= nil then table.insert(args, 1, entry.self) end
    try(entry, args, #args)
  end
end

for _, entry in ipairs(calls) do
  -- Entries that build their own hostile values take no arguments.
  if entry.once then try(entry, {}, 0) else fuzz(entry) end
  -- Let the calls run (virtual time: waits of up to a minute end), then
  -- cancel what still waits.
  lunar.sleep(60)
  for _, task in ipairs(pending) do
    task:cancel()
    local ok, succeeded = task:result()
    if not ok or not succeeded then errors = errors + 1 end
    if not ok then check_message(entry, succeeded) end
  end
  pending = {}
end

if #refused_by_graphviz > 0 then
  io.stderr:write("Graphviz refused the drawings of machines named by: ", table.concat(refused_by_graphviz, "; "), "\n")
  os.exit(1)
end
for _, line in ipairs(leaks) do print("internal chunk named by " .. line) end
print(("fuzz %s: %d calls, %d errors, %d naming internal chunks"):format(target, count, errors, #leaks))
