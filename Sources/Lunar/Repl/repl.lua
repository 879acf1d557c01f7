-- lunar.repl: evaluates console entries. Unlike the stock console, a
-- `local` declared at the prompt stays visible in later entries: leading
-- `local` declarations are turned into variables of the session.
local R = ...
local host = R._host
R._host = nil

local locals, declared = {}, {}
local env = setmetatable({}, {
  __index = function(_, key)
    if declared[key] then return locals[key] end
    return _G[key]
  end,
  __newindex = function(_, key, value)
    if declared[key] then locals[key] = value else _G[key] = value end
  end,
  __pairs = function() return pairs(_G) end,
})

-- `local a, b <const> = ...` -> `a, b = ...` with a and b remembered.
local function rewrite(source)
  local indent, name = source:match("^(%s*)local%s+function%s+([%a_][%w_]*)")
  if name then
    declared[name] = true
    return (source:gsub("^%s*local%s+function", indent .. "function", 1))
  end
  local names, rest = source:match("^%s*local%s+([%a_][%w_%s,<>]-)%s*(=.*)$")
  if not names then
    names = source:match("^%s*local%s+([%a_][%w_%s,<>]-)%s*$")
    if names then rest = "= nil" end
  end
  if not names then return source end
  local list = {}
  for n in (names:gsub("<%a+>", "")):gmatch("[%a_][%w_]*") do
    declared[n] = true
    list[#list + 1] = n
  end
  return table.concat(list, ", ") .. " " .. rest
end

local function handler(message)
  if type(message) ~= "string" then
    local mt = getmetatable(message)
    message = (mt and mt.__tostring) and tostring(message) or ("(error object is a %s value)"):format(type(message))
  end
  local text = debug.traceback(message, 2)
  -- The console's own frames are not the user's business.
  local cut = text:find("\n\t%[C%]: in function 'xpcall'")
  return cut and text:sub(1, cut - 1) or text
end

--- Evaluates one entry. Returns "ok", "incomplete" (the entry needs more
--- lines) or "error" with the message and traceback.
function R.eval(source)
  if source:sub(1, 1) == "=" then source = "return " .. source:sub(2) end
  local chunk = load("return " .. source, "=stdin", "t", env)
  if not chunk then
    local err
    chunk, err = load(rewrite(source), "=stdin", "t", env)
    if not chunk then
      if err:match("<eof>$") then return "incomplete" end
      return "error", err
    end
  end
  local results = table.pack(xpcall(chunk, handler))
  if not results[1] then return "error", results[2] end
  if results.n > 1 then
    -- As print would, but a table shows its contents.
    local shown = {}
    for i = 2, results.n do
      local value = results[i]
      shown[i - 1] = type(value) == "table" and host.display(value) or tostring(value)
    end
    print(table.concat(shown, "\t", 1, results.n - 1))
  end
  return "ok"
end

--- Runs a file in the session's environment (`.load FILE`, `-i FILE`).
function R.load(path)
  local chunk, err = loadfile(path, "t", env)
  if not chunk then return "error", err end
  local ok, message = xpcall(chunk, handler)
  if not ok then return "error", message end
  return "ok"
end

local commands = {}

commands.help = function()
  print([[
.help                 this list
.tasks                running and waiting tasks, and where they wait
.queues               queues, their length and running job
.machines             machines, their state and mailbox length
.trace on|off         print the runtime's events as they happen
.load FILE            run a file in this session
.clock                the runtime clock; .clock advance N moves virtual time
Ctrl-C interrupts a running entry; Ctrl-D or os.exit() leaves.]])
end

-- Prints one line per item, or `none` when there are no items.
local function print_lines(items, none, line)
  if #items == 0 then print(none) return end
  for _, item in ipairs(items) do print(line(item)) end
end

commands.tasks = function()
  print_lines(host.tasks(), "no tasks", function(t)
    return ("%-10s %-8s %s")
      :format(t.label, t.status, t.waiting and ("waits for " .. t.waiting .. " at " .. t.where) or "")
  end)
end

commands.queues = function()
  print_lines(host.queues(), "no queues", function(q)
    return ("%-12s %d job%s%s")
      :format(q.name, q.length, q.length == 1 and "" or "s", q.running and (", running " .. q.running) or "")
  end)
end

commands.machines = function()
  print_lines(host.machines(), "no machines", function(m)
    return ("%-12s %-12s mailbox %d%s"):format(m.name, m.state, m.mailbox, m.stopped and " (stopped)" or "")
  end)
end

commands.trace = function(arg)
  if arg == "on" or arg == "off" then
    host.print_trace(arg == "on")
    print("trace " .. arg)
  else
    print("usage: .trace on|off")
  end
end

commands.load = function(arg)
  if not arg or arg == "" then print("usage: .load FILE") return end
  local status, message = R.load(arg)
  if status == "error" then return "error", message end
end

commands.clock = function(arg)
  local what, amount = (arg or ""):match("^(%a+)%s+([%d%.]+)$")
  if what == "advance" then
    local ok, err = host.advance(tonumber(amount))
    if not ok then print(err) return end
  elseif arg and arg ~= "" then
    print("usage: .clock [advance SECONDS]")
    return
  end
  local now = lunar.now()
  print(("%s clock: %s, %.3f s since start"):format(
    host.clock_kind(), os.date("!%Y-%m-%d %H:%M:%S UTC", math.floor(now)), now - host.clock_start()))
end

--- What leaving the console now stops, as one line: the tasks still
--- running or waiting and the machines still at work (a mailbox, a command
--- or a timer); nil when nothing is.
function R.leaving()
  local parts = {}
  for _, t in ipairs(host.tasks()) do
    parts[#parts + 1] = t.label .. (t.waiting and (" (waits for " .. t.waiting .. ")") or "")
  end
  local tasks = #parts
  for _, m in ipairs(host.machines()) do
    if m.active then parts[#parts + 1] = "machine " .. m.name end
  end
  if #parts == 0 then return nil end
  local function count(n, what) return n == 1 and ("1 " .. what) or (n .. " " .. what .. "s") end
  local what = {}
  if tasks > 0 then what[#what + 1] = count(tasks, "task") end
  if #parts > tasks then what[#what + 1] = count(#parts - tasks, "machine") end
  return ("leaving stops %s still running: %s"):format(table.concat(what, " and "), table.concat(parts, ", "))
end

--- Runs a dot-command (the entry without its dot).
function R.command(entry)
  local name, arg = entry:match("^(%a+)%s*(.-)%s*$")
  local command = name and commands[name]
  if not command then
    print(("unknown command .%s (try .help)"):format(name or entry))
    return "ok"
  end
  local status, message = command(arg)
  return status or "ok", message
end

-- The names of the methods `value:` may call: functions of its
-- metatable's __index (a table, or the methods table a Lunar class's
-- __index closure keeps), and a table's own functions.
local function methods_of(value)
  local names = {}
  local ok, mt = pcall(getmetatable, value)
  local index = ok and type(mt) == "table" and rawget(mt, "__index") or nil
  if type(index) == "function" and debug then
    for i = 1, 4 do
      local name, upvalue = debug.getupvalue(index, i)
      if name == nil then break end
      if type(upvalue) == "table" then index = upvalue break end
    end
  end
  for _, t in ipairs { type(index) == "table" and index or {}, type(value) == "table" and value or {} } do
    for key, field in pairs(t) do
      if type(key) == "string" and type(field) == "function" then names[#names + 1] = key end
    end
  end
  return names
end

--- Completions for `text` (the word before the cursor): globals, the
--- fields of a table reached by a dotted path (`lunar.qu` -> `lunar.queue`),
--- or after `:` the methods of the value before it (`q:su` -> `q:submit`).
function R.complete(text)
  local path, partial = text:match("^(.-)([%a_][%w_]*)$")
  if not path then path, partial = text, "" end
  local target = env
  local prefix = ""
  local methods
  if path ~= "" then
    local sep = path:sub(-1)
    if sep ~= "." and sep ~= ":" then return {} end
    local parts = {}
    for part in path:sub(1, -2):gmatch("[^.:]+") do parts[#parts + 1] = part end
    for i, part in ipairs(parts) do
      local ok, value = pcall(function() return target[part] end)
      if not ok or (type(value) ~= "table" and not (sep == ":" and i == #parts)) then return {} end
      target = value
    end
    if sep == ":" then methods = methods_of(target) end
    prefix = path
  end
  local seen, matches = {}, {}
  local function add(key)
    if type(key) == "string" and key:sub(1, #partial) == partial and not seen[key] then
      seen[key] = true
      matches[#matches + 1] = prefix .. key
    end
  end
  if methods then
    for _, name in ipairs(methods) do add(name) end
  elseif target == env then
    for key in pairs(declared) do add(key) end
    for key in pairs(_G) do add(key) end
  else
    for key in pairs(target) do add(key) end
    if rawequal(target, rawget(_G, "lunar")) then
      -- lunar's sub-modules load on first use: offer them before that too.
      for _, list in ipairs { package.preload, package.loaded } do
        for name in pairs(list) do
          if type(name) == "string" and name:sub(1, 6) == "lunar." then add(name:sub(7)) end
        end
      end
      add("action"); add("run"); add("run_stubbed")
    end
  end
  table.sort(matches)
  return matches
end
