-- luassert.lua: a luassert-compatible assertion library for Lunar's test runner.
--
-- One self-contained chunk (no `require`), written for Lua 5.4. It returns
--   { assert, spy, stub, mock, match, say, is_failure, fail }
-- and follows the public behaviour of Olivine Labs' luassert 1.8 (names,
-- modifiers, argument orders, English message texts, spy/stub/mock API and
-- the register/formatter/parameter/snapshot API) so that busted specs run
-- unchanged.
--
-- Differences from luassert that are deliberate:
--   * A failed assertion raises a failure object (see FAILURES), not a string
--     with a "file:line:" prefix; the position is kept in its own field.
--   * Tables print as "(table) { ... }" without their address (messages stay
--     stable between runs), except in `equal`, where identity is the point.
--   * Floats print in their shortest round-tripping form (0.1, not
--     0.10000000000000000555); functions print as "(function) file:line".
--   * A failed `same` on tables ends with "Differs at: [key][key]" and the
--     differing path is printed even past the TableFormatLevel depth.
--   * Matchers also work inside tables compared by `same` and `called_with`.
--
-- Frames of this chunk are recognised by their source, so the chunk must be
-- loaded under one name of its own (Lunar and the self-test use "=luassert").

local LIBRARY_SOURCE = debug and debug.getinfo(1, "S").source or "=luassert"

local getinfo = debug and debug.getinfo
-- debug.getmetatable sees through __metatable protection; fall back to the
-- plain function when the debug library has been removed (sandboxed hosts).
local rawmeta = debug and debug.getmetatable or getmetatable
local unpack = table.unpack
local insert, remove, concat, sort = table.insert, table.remove, table.concat, table.sort

local function pack(...)
  return { n = select("#", ...), ... }
end

local function callable(v)
  if type(v) == "function" then return true end
  local mt = rawmeta(v)
  return type(mt) == "table" and type(rawget(mt, "__call")) == "function"
end

local function has_tostring(v)
  if type(v) == "string" then return true end
  local mt = rawmeta(v)
  return type(mt) == "table" and type(rawget(mt, "__tostring")) == "function"
end

--------------------------------------------------------------------------------
-- Stack positions
--------------------------------------------------------------------------------

-- True for frames that are not the user's: this library and C functions
-- (pcall, metamethod trampolines) between the user's code and ours.
local function is_library_frame(info)
  return info.source == LIBRARY_SOURCE or info.what == "C"
end

-- Level, as seen by the function calling this helper, of the first frame
-- outside the library. `extra` skips that many further user frames (for
-- assert:level()).
local function user_level(extra)
  if not getinfo then return 2 end
  local level = 3 -- 1 = this helper, 2 = our caller, 3 = its caller
  while true do
    local info = getinfo(level, "S")
    if not info then return 2 end
    if not is_library_frame(info) then break end
    level = level + 1
  end
  extra = extra or 0
  while extra > 0 do
    local info = getinfo(level + 1, "S")
    if not info then break end
    level = level + 1
    if info.what ~= "C" then extra = extra - 1 end
  end
  return level - 1
end

-- "short_src:line" of the first frame outside the library.
local function user_position(extra)
  if not getinfo then return "?" end
  local info = getinfo(user_level(extra), "Sl")
  if not info or is_library_frame(info) then return "?" end
  return info.short_src .. ":" .. tostring(info.currentline)
end

-- Misuse of the library (unknown assertion, spying on a number, ...) is a
-- programming error, not a test failure: raise a plain string error that
-- points at the user's line, exactly as `error(msg, level)` would.
local function usage_error(message)
  local position = user_position()
  if position ~= "?" then message = position .. ": " .. message end
  error(message, 0)
end

-- Lua's own argument error (`bad argument #1 to 'spy.on' (table expected,
-- got nil)`) at the user's line, for a public function called with a
-- value it cannot take; `given` is how many arguments came, so a missing
-- one is "no value" as in luaL_typeerror.
local function argument_error(position, name, expected, value, given)
  local got = (given ~= nil and given < position) and "no value" or type(value)
  usage_error(("bad argument #%d to '%s' (%s expected, got %s)"):format(position, name, expected, got))
end

-- Raises argument_error unless `value` is of type `expected` (or, for
-- "function", callable).
local function check_argument(position, name, expected, value, given)
  local fits
  if expected == "function" then fits = callable(value) else fits = type(value) == expected end
  if not fits then argument_error(position, name, expected, value, given) end
end

--------------------------------------------------------------------------------
-- Snapshots: formatters, parameters and spies, layered so a test runner can
-- undo everything a test registered (assert:snapshot() ... snap:revert()).
--------------------------------------------------------------------------------

local NIL_PARAMETER = {} -- a parameter explicitly set to nil still shadows older layers

local snapshot_mt = {}
snapshot_mt.__index = snapshot_mt

local function new_layer(previous)
  return setmetatable({
    previous = previous,
    formatters = {},
    parameters = {},
    spies = setmetatable({}, { __mode = "k" }),
  }, snapshot_mt)
end

local base_layer = new_layer(nil)
local current_layer = base_layer

local function take_snapshot()
  local layer = new_layer(current_layer)
  current_layer.next = layer
  current_layer = layer
  return layer
end

function snapshot_mt.revert(self)
  if self == nil then self = current_layer end
  -- The base layer holds the built-in formatters and defaults: never undone.
  if self == base_layer or getmetatable(self) ~= snapshot_mt or not self.previous then return end
  if self.next then self.next:revert() end
  for s in pairs(self.spies) do
    self.spies[s] = nil
    s:revert()
  end
  self.formatters, self.parameters = {}, {}
  current_layer = self.previous
  current_layer.next = nil
  self.previous = nil
end
snapshot_mt.__call = snapshot_mt.revert

local function set_parameter(name, value)
  if value == nil then value = NIL_PARAMETER end
  current_layer.parameters[name] = value
end

local function get_parameter(name)
  local layer = current_layer
  while layer do
    local value = layer.parameters[name]
    if value ~= nil then
      if value == NIL_PARAMETER then return nil end
      return value
    end
    layer = layer.previous
  end
  return nil
end

local function add_formatter(fn)
  insert(current_layer.formatters, 1, fn)
end

local function remove_formatter(fn)
  local layer = current_layer
  while layer do
    for i, f in ipairs(layer.formatters) do
      if f == fn then remove(layer.formatters, i) break end
    end
    layer = layer.previous
  end
end

local function register_spy(s)
  current_layer.spies[s] = true
end

--------------------------------------------------------------------------------
-- Values and formatting
--------------------------------------------------------------------------------

-- Argument lists keep their count so trailing nils survive (`n`); the
-- metatable marks them so the formatter prints "(values list) (...)".
local arglist_mt = { __name = "luassert.arglist" }

local function make_arglist(...)
  return setmetatable({ n = select("#", ...), ... }, arglist_mt)
end

local function is_arglist(v)
  return type(v) == "table" and getmetatable(v) == arglist_mt
end

-- Matchers are defined further down but the formatter and deep comparison
-- need to recognise them; the metatable is created here.
local matcher_mt = { __name = "luassert.matcher" }

local function is_matcher(v)
  return type(v) == "table" and getmetatable(v) == matcher_mt
end

local spy_mt = { __name = "luassert.spy" }

local function is_spy(v)
  return type(v) == "table" and getmetatable(v) == spy_mt
end

-- Shortest text that reads back as the same number; floats that look like
-- integers get ".0" so 1 and 1.0 are told apart, as luassert does.
local function number_text(n)
  if n ~= n then return "NaN" end
  if n == math.huge then return "Inf" end
  if n == -math.huge then return "-Inf" end
  if math.type(n) == "integer" then return string.format("%d", n) end
  local text
  for digits = 14, 17 do
    text = string.format("%." .. digits .. "g", n)
    if tonumber(text) == n then break end
  end
  if not text:find("[%.,]") then text = text:gsub("%d+", "%0.0", 1) end
  return text
end

local function plain_text(v)
  if type(v) == "number" then return number_text(v) end
  return tostring(v)
end

-- Table keys sort as luassert's formatter sorts them: the array part first,
-- then numbers, booleans, strings, tables, functions, userdata, threads.
local TYPE_ORDER = { number = 1, boolean = 2, string = 3, table = 4, ["function"] = 5, userdata = 6, thread = 7 }

local function sorted_keys(t)
  local keys = {}
  for k in next, t do keys[#keys + 1] = k end
  local length = rawlen(t)
  local function rank(k)
    if math.type(k) ~= nil and k >= 1 and k <= length and k == math.floor(k) then return 0 end
    return TYPE_ORDER[type(k)] or 8
  end
  sort(keys, function(a, b)
    local ra, rb = rank(a), rank(b)
    if ra ~= rb then return ra < rb end
    local ta = type(a)
    if ta ~= type(b) then return ta < type(b) end
    if ta == "number" or ta == "string" then return a < b end
    if ta == "boolean" then return a and not b end
    return tostring(a) < tostring(b)
  end)
  return keys
end

local function key_path_text(path)
  local parts = {}
  for i, k in ipairs(path) do parts[i] = "[" .. plain_text(k) .. "]" end
  return concat(parts)
end

local format_value -- forward: the composite formatters recurse through it

local function format_table(t, fmtargs)
  if type(t) ~= "table" then return nil end
  local max_depth = get_parameter("TableFormatLevel") or 3
  local mark_char = get_parameter("TableErrorHighlightCharacter") or ""
  local crumbs = fmtargs and fmtargs.crumbs or {}
  local open = {} -- tables being printed, to stop at cycles

  local function body(tbl, depth, on_path, forced)
    if open[tbl] then return "{ ... recursive }" end
    if next(tbl) == nil then return "{ }" end
    -- The path to a difference is always expanded, whatever the depth limit.
    if not forced and max_depth >= 0 and depth > max_depth then return "{ ... more }" end
    open[tbl] = true
    local crumb = on_path and crumbs[depth]
    local out = { "{" }
    for _, k in ipairs(sorted_keys(tbl)) do
      local v = rawget(tbl, k)
      local marked = on_path and crumb ~= nil and k == crumb
      if type(v) == "table" then
        v = body(v, depth + 1, marked and depth < #crumbs, marked)
      elseif type(v) == "string" then
        v = "'" .. v .. "'"
      else
        v = plain_text(v)
      end
      local mark = marked and mark_char or ""
      out[#out + 1] = string.format("\n%s%s[%s] = %s", string.rep(" ", depth * 2 - #mark), mark, plain_text(k), v)
    end
    open[tbl] = nil
    return concat(out) .. " }"
  end

  local label = "(table) "
  if fmtargs and fmtargs.show_id then label = string.format("(table: %p) ", t) end
  return label .. body(t, 1, #crumbs > 0, false)
end

local builtin_formatters = {
  function(v) -- argument lists, as recorded by spies
    if not is_arglist(v) then return nil end
    local parts = {}
    for i = 1, v.n or #v do parts[i] = format_value(v[i]) end
    return "(values list) (" .. concat(parts, ", ") .. ")"
  end,
  function(v)
    if not is_matcher(v) then return nil end
    if v.name == "_" then return "(matcher) _" end
    local parts = {}
    local arguments = v.arguments or { n = 0 }
    for i = 1, arguments.n or #arguments do parts[i] = format_value(arguments[i]) end
    return string.format("(matcher) %s%s(%s)", v.mod and "is." or "no.", tostring(v.name), concat(parts, ", "))
  end,
  function(v)
    if type(v) == "thread" then return string.format("(thread) '%s'", tostring(v)) end
  end,
  function(v)
    if type(v) == "userdata" then return string.format("(userdata) '%s'", tostring(v)) end
  end,
  function(v)
    if type(v) ~= "function" then return nil end
    local info = getinfo and getinfo(v, "S")
    if not info or info.what == "C" then return "(function) [C]" end
    return string.format("(function) %s:%d", info.short_src, info.linedefined)
  end,
  format_table,
  function(v)
    if v == nil then return "(nil)" end
  end,
  function(v)
    if type(v) == "boolean" then return "(boolean) " .. tostring(v) end
  end,
  function(v)
    if type(v) == "number" then return "(number) " .. number_text(v) end
  end,
  function(v)
    if type(v) == "string" then return "(string) '" .. v .. "'" end
  end,
}
for _, fn in ipairs(builtin_formatters) do insert(base_layer.formatters, fn) end

-- Newest formatter first, newest snapshot first; the first non-nil answer wins.
local function format_argument(v, fmtargs)
  local layer = current_layer
  while layer do
    for _, fn in ipairs(layer.formatters) do
      local text = fn(v, fmtargs)
      if text ~= nil then return text end
    end
    layer = layer.previous
  end
  return nil
end

function format_value(v, fmtargs)
  local text = format_argument(v, fmtargs)
  if text == nil then text = tostring(v) end
  return text
end

-- Formats an assertion's argument list in place, as luassert's assert:format:
-- `nofmt[i]` leaves an entry as plain text, `fmtargs[i]` goes to formatters.
local function format_arguments(args)
  local nofmt = args.nofmt or {}
  local fmtargs = args.fmtargs or {}
  for i = 1, args.n or #args do
    if not nofmt[i] then args[i] = format_value(args[i], fmtargs[i]) end
  end
  return args
end

-- Deep comparison in luassert's sense. Returns true, or false and the path
-- (outermost key first) to the first difference found in sorted key order,
-- so messages do not depend on hash order. A matcher on either side is
-- applied to the other value. `ignore_mt` only affects the top level, as in
-- luassert: nested tables sharing an __eq metamethod are compared with it.
local function deep_equal(a, b, ignore_mt, seen)
  local am, bm = is_matcher(a), is_matcher(b)
  if am and not bm then return a(b) end
  if bm and not am then return b(a) end
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  local mta, mtb = rawmeta(a), rawmeta(b)
  if mta and mta == mtb and type(mta) == "table" and rawget(mta, "__eq") then
    if not ignore_mt then return a == b end
  elseif rawequal(a, b) then
    return true
  end
  -- A pair already under comparison is assumed equal; any real difference
  -- is found on the path that is still being walked.
  seen = seen or {}
  seen[a] = seen[a] or {}
  if seen[a][b] then return true end
  seen[a][b] = true

  for _, k in ipairs(sorted_keys(a)) do
    local va, vb = rawget(a, k), b[k]
    if vb == nil and not (is_matcher(va) and va(nil)) then return false, { k } end
    if vb ~= nil then
      local same, path = deep_equal(va, vb, nil, seen)
      if not same then
        path = path or {}
        insert(path, 1, k)
        return false, path
      end
    end
  end
  for _, k in ipairs(sorted_keys(b)) do
    if a[k] == nil then
      local vb = rawget(b, k)
      if not (is_matcher(vb) and vb(nil)) then return false, { k } end
    end
  end
  return true
end

local function shallow_copy(t)
  if type(t) ~= "table" then return t end
  local copy = {}
  for k, v in next, t do copy[k] = v end
  return setmetatable(copy, getmetatable(t))
end

-- Spies keep a deep copy of each call's arguments so later mutation by the
-- code under test does not rewrite history; spies and matchers stay shared.
local function deep_copy(v, cache)
  if type(v) ~= "table" or is_spy(v) or is_matcher(v) then return v end
  cache = cache or {}
  if cache[v] then return cache[v] end
  local copy = {}
  cache[v] = copy
  for k, x in next, v do copy[k] = deep_copy(x, cache) end
  return setmetatable(copy, rawmeta(v))
end

-- `vals` is the deep copy compared by value; `refs` keeps the originals for
-- match.is_ref().
local function copy_args(args)
  local vals = setmetatable({}, getmetatable(args))
  for k, v in next, args do vals[k] = deep_copy(v) end
  return { vals = vals, refs = shallow_copy(args) }
end

-- Does a recorded argument (or return value) list satisfy the expected one?
-- Counts must agree (trailing nils included), as in luassert.
local function args_match(vals, refs, specs)
  local n = vals.n or #vals
  if n ~= (specs.n or #specs) then return false end
  for i = 1, n do
    local spec = specs[i]
    if is_matcher(spec) then
      local value = spec.name == "ref" and refs[i] or vals[i]
      if not spec(value) then return false end
    elseif not deep_equal(vals[i], spec) then
      return false
    end
  end
  return true
end

-- Last matching entry, so a failure shows the most recent call.
local function find_matching(list, specs)
  for i = #list, 1, -1 do
    local entry = list[i]
    if args_match(entry.vals, entry.refs, specs) then return entry end
  end
  return nil
end

--------------------------------------------------------------------------------
-- say: namespaced message texts with "%s" placeholders
--------------------------------------------------------------------------------

local say_registry = { en = {} }
local say_namespace, say_fallback = "en", "en"

local say = { _registry = say_registry }

function say:set_namespace(namespace)
  say_namespace = namespace
  say_registry[namespace] = say_registry[namespace] or {}
end

function say:set_fallback(namespace)
  say_fallback = namespace
  say_registry[namespace] = say_registry[namespace] or {}
end

function say:set(key, value)
  say_registry[say_namespace][key] = value
end

-- Placeholders are filled one by one rather than through string.format so
-- a stray "%d" in a user's text cannot raise an error while reporting one.
setmetatable(say, {
  __call = function(_, key, vars)
    if vars ~= nil and type(vars) ~= "table" then
      error(("expected parameter table to be a table, got '%s'"):format(type(vars)), 2)
    end
    local text = (say_registry[say_namespace] or {})[key]
    if text == nil then text = (say_registry[say_fallback] or {})[key] end
    if text == nil then return nil end
    text = tostring(text)
    vars = vars or {}
    local count = math.max(vars.n or 0, #vars)
    if count == 0 then return text end
    local i = 0
    return (text:gsub("%%([%%s])", function(c)
      if c == "%" then return "%" end
      i = i + 1
      if i > count then return "%s" end
      return tostring(vars[i])
    end))
  end,
  __index = function(_, namespace)
    return say_registry[namespace]
  end,
})

local ENGLISH = {
  ["assertion.same.positive"] = "Expected objects to be the same.\nPassed in:\n%s\nExpected:\n%s",
  ["assertion.same.negative"] = "Expected objects to not be the same.\nPassed in:\n%s\nDid not expect:\n%s",
  ["assertion.equals.positive"] = "Expected objects to be equal.\nPassed in:\n%s\nExpected:\n%s",
  ["assertion.equals.negative"] = "Expected objects to not be equal.\nPassed in:\n%s\nDid not expect:\n%s",
  ["assertion.near.positive"] = "Expected values to be near.\nPassed in:\n%s\nExpected:\n%s +/- %s",
  ["assertion.near.negative"] = "Expected values to not be near.\nPassed in:\n%s\nDid not expect:\n%s +/- %s",
  ["assertion.matches.positive"] = "Expected strings to match.\nPassed in:\n%s\nExpected:\n%s",
  ["assertion.matches.negative"] = "Expected strings not to match.\nPassed in:\n%s\nDid not expect:\n%s",
  ["assertion.unique.positive"] = "Expected object to be unique:\n%s",
  ["assertion.unique.negative"] = "Expected object to not be unique:\n%s",
  ["assertion.error.positive"] = "Expected a different error.\nCaught:\n%s\nExpected:\n%s",
  ["assertion.error.negative"] = "Expected no error, but caught:\n%s",
  ["assertion.truthy.positive"] = "Expected to be truthy, but value was:\n%s",
  ["assertion.truthy.negative"] = "Expected to not be truthy, but value was:\n%s",
  ["assertion.falsy.positive"] = "Expected to be falsy, but value was:\n%s",
  ["assertion.falsy.negative"] = "Expected to not be falsy, but value was:\n%s",
  ["assertion.called.positive"] = "Expected to be called %s time(s), but was called %s time(s)",
  ["assertion.called.negative"] = "Expected not to be called exactly %s time(s), but it was.",
  ["assertion.called_at_least.positive"] = "Expected to be called at least %s time(s), but was called %s time(s)",
  ["assertion.called_at_most.positive"] = "Expected to be called at most %s time(s), but was called %s time(s)",
  ["assertion.called_more_than.positive"] = "Expected to be called more than %s time(s), but was called %s time(s)",
  ["assertion.called_less_than.positive"] = "Expected to be called less than %s time(s), but was called %s time(s)",
  ["assertion.called_with.positive"] = "Function was never called with matching arguments.\n"
    .. "Called with (last call if any):\n%s\nExpected:\n%s",
  ["assertion.called_with.negative"] = "Function was called with matching arguments at least once.\n"
    .. "Called with (last matching call):\n%s\nDid not expect:\n%s",
  ["assertion.returned_with.positive"] = "Function never returned matching arguments.\n"
    .. "Returned (last call if any):\n%s\nExpected:\n%s",
  ["assertion.returned_with.negative"] = "Function returned matching arguments at least once.\n"
    .. "Returned (last matching call):\n%s\nDid not expect:\n%s",
  ["assertion.returned_arguments.positive"] = "Expected to be called with %s argument(s), but was called with %s",
  ["assertion.returned_arguments.negative"] = "Expected not to be called with %s argument(s), but was called with %s",
  ["assertion.array_holes.positive"] = "Expected array to have holes, but none was found.\n",
  ["assertion.array_holes.negative"] = "Expected array to not have holes, hole found at position: %s\n",
  ["assertion.internal.argtolittle"] = "the '%s' function requires a minimum of %s arguments, got: %s",
  ["assertion.internal.badargtype"] = "bad argument #%s to '%s' (%s expected, got %s)",
}
for key, text in pairs(ENGLISH) do say:set(key, text) end

--------------------------------------------------------------------------------
-- Failures
--------------------------------------------------------------------------------

-- A failure is a table so the runner can tell it from an error raised by the
-- code under test; __tostring keeps it printable wherever a string is expected.
local FAILURE_MT = {
  __name = "luassert.failure",
  __tostring = function(e) return e.message end,
}

local function is_failure(v)
  return type(v) == "table" and getmetatable(v) == FAILURE_MT
end

local function raise_failure(message, extra_levels)
  error(setmetatable({ message = message, position = user_position(extra_levels) }, FAILURE_MT), 0)
end

-- Messages given by users may be any value; strings and values with
-- __tostring print as themselves, anything else through the formatters.
local function message_text(v)
  if v == nil then return nil end
  if has_tostring(v) then return tostring(v) end
  return format_value(v)
end

-- Internal argument checks fail the test (busted reports them as failures too).
local function check(condition, key, vars)
  if not condition then raise_failure(say(key, vars)) end
end

local function need_args(args, count, name)
  check(args.n >= count, "assertion.internal.argtolittle", { name, count, tostring(args.n) })
end

--------------------------------------------------------------------------------
-- Registration
--------------------------------------------------------------------------------

local namespaces = { assertion = {}, modifier = {}, matcher = {} }

local function register(kind, name, callback, positive_message, negative_message)
  local key = name:lower()
  namespaces[kind] = namespaces[kind] or {}
  namespaces[kind][key] = {
    name = key,
    callback = callback,
    positive_message = positive_message,
    negative_message = negative_message,
  }
end

local function unregister(kind, name)
  if namespaces[kind] then namespaces[kind][name:lower()] = nil end
end

--------------------------------------------------------------------------------
-- Assertions
--
-- Each takes (state, arguments, level) and returns whether it holds, plus
-- optionally a list of values to return. Before returning it rearranges
-- `arguments` into the order its message expects (actual value first),
-- marks entries already text in `arguments.nofmt`, and takes its optional
-- custom message from its own trailing position.
--------------------------------------------------------------------------------

local function set_failure_message(state, message)
  if message ~= nil then rawset(state, "failure_message", message) end
end

-- Moves the actual value (argument 2) in front of the expected one.
local function actual_first(args)
  args[1], args[2] = args[2], args[1]
end

local function ensure_nofmt(args)
  args.nofmt = args.nofmt or {}
  return args.nofmt
end

local function assert_same(state, args)
  need_args(args, 2, "same")
  local expected, actual = args[1], args[2]
  local ok, path
  if is_matcher(expected) and not is_matcher(actual) then
    ok = expected(actual)
  elseif type(expected) == "table" and type(actual) == "table" then
    ok, path = deep_equal(expected, actual, true)
  else
    ok = expected == actual
  end
  actual_first(args)
  if path then
    args.fmtargs = { { crumbs = path }, { crumbs = path } }
    args.detail = "Differs at: " .. key_path_text(path)
  end
  set_failure_message(state, args[3])
  return ok
end

local function assert_equals(state, args)
  need_args(args, 2, "equals")
  local ok = args[1] == args[2]
  actual_first(args)
  -- Two distinct tables with the same contents would print identically;
  -- their addresses show why they are not equal.
  if type(args[1]) == "table" and type(args[2]) == "table" then
    args.fmtargs = { { show_id = true }, { show_id = true } }
  end
  set_failure_message(state, args[3])
  return ok
end

local function assert_near(state, args)
  need_args(args, 3, "near")
  local expected, actual, tolerance = tonumber(args[1]), tonumber(args[2]), tonumber(args[3])
  local numbertype = "number or object convertible to a number"
  check(expected, "assertion.internal.badargtype", { 1, "near", numbertype, format_value(args[1]) })
  check(actual, "assertion.internal.badargtype", { 2, "near", numbertype, format_value(args[2]) })
  check(tolerance, "assertion.internal.badargtype", { 3, "near", numbertype, format_value(args[3]) })
  actual_first(args)
  args[3] = plain_text(tolerance)
  ensure_nofmt(args)[3] = true
  set_failure_message(state, args[4])
  return actual >= expected - tolerance and actual <= expected + tolerance
end

-- `matches` and `error_matches` accept (..., init, plain, message) where
-- the message may come at any position from 3 on: the first argument that
-- is neither a boolean nor a number is the message.
local function take_message_from(args, first)
  for i = first, args.n do
    local v = args[i]
    if v and type(v) ~= "boolean" and not tonumber(v) then
      local message = args[i]
      for j = i, args.n - 1 do args[j] = args[j + 1] end
      args[args.n] = nil
      args.n = args.n - 1
      return message, i == first
    end
  end
  return nil, false
end

local function assert_matches(state, args)
  need_args(args, 2, "matches")
  local pattern = args[1]
  local actual
  if has_tostring(args[2]) or type(args[2]) == "number" then actual = tostring(args[2]) end
  local message, shifted = take_message_from(args, 3)
  local init, plain = args[3], args[4]
  check(type(pattern) == "string", "assertion.internal.badargtype", { 1, "matches", "string", type(pattern) })
  check(actual, "assertion.internal.badargtype",
    { 2, "matches", "string or object convertible to a string", format_value(args[2]) })
  check(init == nil or tonumber(init), "assertion.internal.badargtype",
    { shifted and 4 or 3, "matches", "number", type(init) })
  actual_first(args)
  set_failure_message(state, message)
  if plain then
    local ok = actual:find(pattern, init, true) ~= nil
    return ok, ok and { pattern } or {}
  end
  local captures = pack(actual:match(pattern, init))
  return captures[1] ~= nil, captures
end

local function assert_truthy(state, args)
  need_args(args, 1, "truthy")
  set_failure_message(state, args[2])
  return args[1] ~= false and args[1] ~= nil
end

local function assert_falsy(state, args)
  need_args(args, 1, "falsy")
  set_failure_message(state, args[2])
  return args[1] == false or args[1] == nil
end

-- is_true / is_false show their expectation as the "Expected" value.
local function value_assertion(expected)
  return function(state, args)
    local message = args[2]
    args[2], args[3] = expected, nil
    args.n = 2
    set_failure_message(state, message)
    return args[1] == expected
  end
end

local function type_assertion(expected_type)
  return function(state, args)
    local message = args[2]
    args[2] = "type " .. expected_type
    args.n = 2
    ensure_nofmt(args)[2] = true
    set_failure_message(state, message)
    return type(args[1]) == expected_type
  end
end

local function assert_unique(state, args)
  local list = args[1]
  local deep
  -- unique(list, deep, message) and unique(list, message, deep) both occur.
  if type(args[2]) == "boolean" or (args[2] == nil and args.n > 2) then
    deep = args[2]
    set_failure_message(state, args[3])
  else
    if type(args[3]) == "boolean" then deep = args[3] end
    set_failure_message(state, args[2])
  end
  check(type(list) == "table", "assertion.internal.badargtype", { 1, "unique", "table", type(list) })
  for k, v in pairs(list) do
    for k2, v2 in pairs(list) do
      if k ~= k2 then
        if deep and deep_equal(v, v2, true) then return false end
        if v == v2 then return false end
      end
    end
  end
  return true
end

-- Errors raised as strings carry "file:line: "; expectations are written
-- without it, so it is dropped before comparing (first occurrence only).
local function strip_position(err)
  if type(err) == "string" then return (err:gsub("^.-:%d+: ", "", 1)) end
  return err
end

local function assert_error(state, args)
  local fn, expected, message = args[1], args[2], args[3]
  check(callable(fn), "assertion.internal.badargtype", { 1, "error", "function or callable object", type(fn) })
  local returned = shallow_copy(args)
  local ok, actual = pcall(fn)
  actual = strip_position(actual)
  returned[1] = actual
  args.n = 2
  args[1] = ok and "(no error)" or actual
  args[2] = expected == nil and "(error)" or expected
  args[3] = nil
  args.nofmt = { [1] = ok, [2] = expected == nil }
  set_failure_message(state, message)

  if ok or expected == nil then return not ok, returned end
  if type(expected) == "string" then
    if has_tostring(actual) then
      actual = tostring(actual)
      returned[1] = actual
    end
    if type(actual) == "string" then return expected == actual, returned end
  elseif type(expected) == "number" and type(actual) == "string" then
    return tostring(expected) == tostring(tonumber(actual)), returned
  end
  if type(expected) == "table" and type(actual) == "table" then
    return (deep_equal(expected, actual, true)), returned
  end
  return expected == actual, returned
end

local function assert_error_matches(state, args)
  need_args(args, 2, "error_matches")
  local fn, pattern = args[1], args[2]
  check(callable(fn), "assertion.internal.badargtype", { 1, "error_matches", "function or callable object", type(fn) })
  check(pattern == nil or type(pattern) == "string", "assertion.internal.badargtype",
    { 2, "error", "string", type(pattern) })
  local returned = shallow_copy(args)
  local message, shifted = take_message_from(args, 3)
  local init, plain = args[3], args[4]
  check(init == nil or tonumber(init), "assertion.internal.badargtype",
    { shifted and 4 or 3, "matches", "number", type(init) })

  local ok, actual = pcall(fn)
  actual = strip_position(actual)
  returned[1] = actual
  args.n = 2
  args[1] = ok and "(no error)" or actual
  args[2] = pattern
  args[3], args[4] = nil, nil
  args.nofmt = { [1] = ok }
  set_failure_message(state, message)

  if ok then return false, returned end
  if actual == nil and pattern == nil then return true, {} end
  if has_tostring(actual) or type(actual) == "number" or type(actual) == "boolean" then
    actual = tostring(actual)
    returned[1] = actual
  end
  if type(actual) ~= "string" or pattern == nil then return false, returned end
  if plain then
    if actual:find(pattern, init, true) then return true, { pattern } end
    return false, returned
  end
  local captures = pack(actual:match(pattern, init))
  if captures[1] ~= nil then return true, captures end
  return false, returned
end

local function assert_returned_arguments(_state, args)
  local expected = args[1]
  args[1] = tostring(expected)
  args[2] = tostring(args.n - 1)
  args.nofmt = { true, true }
  if args.n < 2 then args.n = 2 end
  return args[1] == args[2]
end

--------------------------------------------------------------------------------
-- Spy assertions (chained after the `spy` / `stub` modifiers)
--------------------------------------------------------------------------------

local function spy_payload(state, name)
  local payload = rawget(state, "payload")
  if type(payload) == "table" and payload[name] ~= nil then return payload end
  if type(payload) == "function" then
    usage_error("When calling 'spy(aspy)', 'aspy' must not be the original function,"
      .. " but the spy function replacing the original")
  end
  usage_error("'" .. name .. "' must be chained after 'spy(aspy)'")
end

local function count_assertion(name, compare)
  return function(state, args)
    local times = args[1]
    if compare then
      check(type(times) == "number", "assertion.internal.badargtype", { 1, name, "number", type(times) })
    end
    -- luassert takes no message here; a string after the count is accepted
    -- as one because every other assertion allows it.
    if type(args[2]) == "string" then set_failure_message(state, args[2]) end
    -- `was_not.called()` reads as "called 0 times", and is reported that way.
    if times == nil and not state.mod then
      rawset(state, "mod", true)
      times = 0
    end
    local payload = spy_payload(state, "called")
    local ok, count = payload:called(times, compare)
    args[1] = tostring(times or ">0")
    args[2] = tostring(count)
    args.n = 2
    args.nofmt = { true, true }
    return ok
  end
end

local function list_assertion(method)
  return function(state, args)
    local payload = spy_payload(state, method)
    local ok, shown = payload[method](payload, args)
    local expected = shallow_copy(args)
    for i = 1, args.n do args[i] = nil end
    args[1], args[2], args.n = shown, expected, 2
    return ok
  end
end

--------------------------------------------------------------------------------
-- Modifiers
--------------------------------------------------------------------------------

local function no_op(state) return state end

local function negate(state)
  rawset(state, "mod", not state.mod)
  return state
end

local function set_payload(state, args)
  rawset(state, "payload", args[1])
  set_failure_message(state, args[2])
end

local function set_message(state, args)
  rawset(state, "failure_message", args[1])
end

-- assert.array(t).has.no.holes([length])
local ARRAY_KEY = "__array_state"

local function set_array(state, args)
  if args.n == 0 then usage_error("No array provided to the array-modifier") end
  if rawget(state, ARRAY_KEY) ~= nil then usage_error("Array already set") end
  rawset(state, ARRAY_KEY, args[1])
  return state
end

local function assert_holes(state, args)
  local length = args[1]
  local array = rawget(state, ARRAY_KEY)
  if array == nil then usage_error("No array set, please use the array modifier to set the array to validate") end
  check_argument(1, "array", "table", array)
  if length == nil then
    length = 0
    for i in pairs(array) do
      if math.type(i) and i > length and i == math.floor(i) then length = i end
    end
  end
  if type(length) ~= "number" then
    usage_error("expected array length to be of type 'number', got: " .. tostring(length))
  end
  local missing
  for i = 1, length do
    if array[i] == nil then missing = i break end
  end
  args[1] = missing
  args.n = missing and 1 or 0
  return missing ~= nil, { missing }
end

--------------------------------------------------------------------------------
-- Spies
--------------------------------------------------------------------------------

local spy_methods = {}

function spy_methods.revert(self)
  if not self.reverted then
    if self.target_table ~= nil and self.target_key ~= nil then
      self.target_table[self.target_key] = self.original
    end
    self.reverted = true
  end
  return self.callback
end

function spy_methods.clear(self)
  self.calls = {}
  self.returnvals = {}
  return self
end

function spy_methods.called(self, times, compare)
  local count = #self.calls
  if times or compare then
    compare = compare or function(actual, expected) return actual == expected end
    return compare(count, times), count
  end
  return count > 0, count
end

-- Accept both luassert's form (one argument list) and plain values.
local function as_arglist(...)
  local first = ...
  if select("#", ...) == 1 and is_arglist(first) then return first end
  return make_arglist(...)
end

function spy_methods.called_with(self, ...)
  local specs = as_arglist(...)
  local found = find_matching(self.calls, specs)
  if found then return true, found.vals end
  local last = self.calls[#self.calls]
  return false, last and last.vals
end

function spy_methods.returned_with(self, ...)
  local specs = as_arglist(...)
  local found = find_matching(self.returnvals, specs)
  if found then return true, found.vals end
  local last = self.returnvals[#self.returnvals]
  return false, last and last.vals
end

local function record_return(self, call, ...)
  local returned = copy_args(make_arglist(...))
  insert(self.returnvals, returned)
  call.returnvals = returned.vals
  return ...
end

-- A call is recorded before the callback runs, so calls that raise still
-- count; only calls that return get a `returnvals` entry.
spy_mt.__call = function(self, ...)
  local call = copy_args(make_arglist(...))
  insert(self.calls, call)
  return record_return(self, call, self.callback(...))
end

local spy = {}

function spy.new(callback)
  if callback == nil then callback = function() end end
  if not callable(callback) then
    usage_error("Cannot spy on type '" .. type(callback) .. "', only on functions or callable elements")
  end
  local s = setmetatable({ calls = {}, returnvals = {}, callback = callback }, spy_mt)
  -- Methods live in the spy itself (as in luassert) so stubs can wrap them.
  for name, fn in pairs(spy_methods) do s[name] = fn end
  register_spy(s)
  return s
end

function spy.on(...)
  local target_table, target_key = ...
  check_argument(1, "spy.on", "table", target_table, select("#", ...))
  if target_key == nil then argument_error(2, "spy.on", "key", target_key, select("#", ...)) end
  local original = target_table[target_key]
  local s = spy.new(original)
  target_table[target_key] = s
  s.target_table, s.target_key, s.original = target_table, target_key, original
  return s
end

spy.is_spy = is_spy

setmetatable(spy, { __call = function(_, ...) return spy.new(...) end })

--------------------------------------------------------------------------------
-- Stubs
--------------------------------------------------------------------------------

local stub = {}

-- Stub helpers are documented both as s.returns(...) and s:returns(...);
-- a leading self argument is dropped so both spellings work.
local function without_self(self, ...)
  if rawequal((...), self) and select("#", ...) > 0 then return select(2, ...) end
  return ...
end

function stub.new(object, key, ...)
  if object == nil and key == nil then
    object, key = {}, ""
  end
  if type(object) ~= "table" or key == nil then
    usage_error("stub.new(): Can only create stub on a table key, call with 2 params; table, key")
  end
  local original = object[key]
  if original ~= nil and not callable(original) then
    usage_error("stub.new(): The element for which to create a stub must either be callable, or be nil")
  end

  local values = pack(...)
  local default
  if values.n == 1 and callable(values[1]) then
    default = values[1]
  else
    default = function() return unpack(values, 1, values.n) end
  end
  local oncalls = {}

  object[key] = function(...)
    local args = make_arglist(...)
    for _, oncall in ipairs(oncalls) do
      if args_match(args, args, oncall.specs) then return oncall.run(...) end
    end
    return default(...)
  end

  local s = spy.on(object, key)

  s.revert = function(self)
    if not self.reverted then
      object[key] = original
      self.reverted = true
    end
    return original
  end

  s.returns = function(...)
    local results = pack(without_self(s, ...))
    default = function() return unpack(results, 1, results.n) end
    return s
  end

  s.invokes = function(...)
    local fn = without_self(s, ...)
    check_argument(1, "invokes", "function", fn)
    default = function(...) return fn(...) end
    return s
  end

  s.by_default = {}
  s.by_default.returns = function(...) return s.returns(without_self(s.by_default, ...)) end
  s.by_default.invokes = function(...) return s.invokes(without_self(s.by_default, ...)) end

  s.on_call_with = function(...)
    local specs = copy_args(make_arglist(without_self(s, ...))).vals
    local chain = {}
    chain.returns = function(...)
      local results = pack(without_self(chain, ...))
      insert(oncalls, { specs = specs, run = function() return unpack(results, 1, results.n) end })
      return s
    end
    chain.invokes = function(...)
      local fn = without_self(chain, ...)
      check_argument(1, "invokes", "function", fn)
      insert(oncalls, { specs = specs, run = function(...) return fn(...) end })
      return s
    end
    return chain
  end

  return s
end

setmetatable(stub, { __call = function(_, ...) return stub.new(...) end })

--------------------------------------------------------------------------------
-- Mocks
--------------------------------------------------------------------------------

local mock = {}

function mock.new(object, dostub, func, parent, key)
  local visited = {}
  local function walk(value, owner, name)
    if type(value) == "table" then
      if is_spy(value) or visited[value] then return value end
      visited[value] = true
      for k, v in pairs(value) do value[k] = walk(v, value, k) end
      return value
    elseif type(value) == "function" then
      if dostub then return stub(owner, name, func) end
      if owner == nil then return spy.new(value) end
      return spy.on(owner, name)
    end
    return value
  end
  return walk(object, parent, key)
end

local function mock_apply(object, action, visited)
  if type(object) ~= "table" then return nil end
  if is_spy(object) then return object[action](object) end
  visited = visited or {}
  if visited[object] then return object end
  visited[object] = true
  for _, v in pairs(object) do mock_apply(v, action, visited) end
  return object
end

function mock.clear(object) return mock_apply(object, "clear") end
function mock.revert(object) return mock_apply(object, "revert") end

setmetatable(mock, { __call = function(_, ...) return mock.new(...) end })

--------------------------------------------------------------------------------
-- Matchers
--------------------------------------------------------------------------------

matcher_mt.__call = function(self, value)
  return (not not self.callback(value)) == self.mod
end

local function type_matcher(expected_type)
  return function()
    return function(value) return type(value) == expected_type end
  end
end

local function value_matcher(expected)
  return function()
    return function(value) return value == expected end
  end
end

local function match_truthy()
  return function(value) return value ~= nil and value ~= false end
end

local function match_falsy()
  return function(value) return value == nil or value == false end
end

local function match_equals(_, args)
  need_args(args, 1, "equals")
  local expected = args[1]
  return function(value) return value == expected end
end

local function match_same(_, args)
  need_args(args, 1, "same")
  local expected = args[1]
  return function(value)
    if type(value) == "table" and type(expected) == "table" then
      return (deep_equal(value, expected, true))
    end
    return value == expected
  end
end

local function match_ref(_, args)
  need_args(args, 1, "ref")
  local t = type(args[1])
  check(t == "table" or t == "function" or t == "thread" or t == "userdata",
    "assertion.internal.badargtype", { 1, "ref", "object", t })
  local expected = args[1]
  return function(value) return rawequal(value, expected) end
end

local function match_matches(_, args)
  need_args(args, 1, "matches")
  local pattern, init, plain = args[1], args[2], args[3]
  check(type(pattern) == "string", "assertion.internal.badargtype", { 1, "matches", "string", type(pattern) })
  check(init == nil or tonumber(init), "assertion.internal.badargtype", { 2, "matches", "number", type(init) })
  return function(value)
    if not (type(value) == "number" or has_tostring(value)) then return false end
    return tostring(value):find(pattern, init, plain) ~= nil
  end
end

local function match_near(_, args)
  need_args(args, 2, "near")
  local expected, tolerance = tonumber(args[1]), tonumber(args[2])
  local numbertype = "number or object convertible to a number"
  check(expected, "assertion.internal.badargtype", { 1, "near", numbertype, format_value(args[1]) })
  check(tolerance, "assertion.internal.badargtype", { 2, "near", numbertype, format_value(args[2]) })
  return function(value)
    local actual = tonumber(value)
    return actual ~= nil and actual >= expected - tolerance and actual <= expected + tolerance
  end
end

local function match_unique(_, args)
  local deep = args[1]
  return function(list)
    if type(list) ~= "table" then return false end
    for k, v in pairs(list) do
      for k2, v2 in pairs(list) do
        if k ~= k2 and (v == v2 or (deep and deep_equal(v, v2, true))) then return false end
      end
    end
    return true
  end
end

local function composite(name, decide)
  return function(_, args)
    need_args(args, 1, name)
    for i = 1, args.n do
      check(is_matcher(args[i]), "assertion.internal.badargtype", { i, name, "matcher", type(args[i]) })
    end
    return function(value)
      local hits = 0
      for i = 1, args.n do
        if args[i](value) then hits = hits + 1 end
      end
      return decide(hits, args.n)
    end
  end
end

local match = {
  _ = setmetatable(
    { name = "_", mod = true, arguments = { n = 0 }, callback = function() return true end }, matcher_mt),
  is_matcher = is_matcher,
  is_ref_matcher = function(v) return is_matcher(v) and v.name == "ref" end,
}

--------------------------------------------------------------------------------
-- Assert proxy: chains of names (assert.is_not.same, match.no.string) collect
-- tokens on a state object; calling it resolves them into modifiers and at
-- most one assertion or matcher.
--------------------------------------------------------------------------------

-- Resolve tokens right to left, taking at each step the longest run of
-- tokens that names something, so "called_at_least" beats "least".
local function resolve(kind, tokens)
  local keys = {}
  local i = #tokens
  while i >= 1 do
    local found
    for j = 1, i do
      local key = concat(tokens, "_", j, i)
      if namespaces[kind][key] or namespaces.modifier[key] then
        insert(keys, 1, key)
        found = j
        break
      end
    end
    if not found then
      usage_error("luassert: unknown modifier/" .. kind .. ": '" .. concat(tokens, "_", 1, i) .. "'")
    end
    i = found - 1
  end
  return keys
end

local function apply_modifiers(state, keys, args, level)
  for _, key in ipairs(keys) do
    local modifier = namespaces.modifier[key]
    if modifier then modifier.callback(state, args, level) end
  end
end

local function compose_message(state, key, args)
  local custom = message_text(rawget(state, "failure_message"))
  local text = key and say(key, format_arguments(args))
  if text and custom then
    text = custom .. "\n" .. text
  else
    text = text or custom or "assertion failed!"
  end
  if args.detail then text = text .. "\n" .. args.detail end
  return text
end

local function take_tokens(state)
  local tokens = rawget(state, "tokens")
  rawset(state, "tokens", {})
  return tokens
end

-- A chain that ends in an assertion keeps its tokens and its polarity, so
-- `local is_true = assert.is_true` can be called again and again.
local function keep_tokens(state, tokens, mod)
  rawset(state, "tokens", tokens)
  rawset(state, "mod", mod)
end

local function index_tokens(state, key)
  local tokens = rawget(state, "tokens")
  for token in tostring(key):lower():gmatch("[^_%.]+") do insert(tokens, token) end
  return state
end

local assertion_state_mt = { __index = index_tokens }

assertion_state_mt.__call = function(state, ...)
  local tokens, mod = take_tokens(state), state.mod
  local keys = resolve("assertion", tokens)
  -- A level for user callbacks that raise with error(msg, level): the user's
  -- frame as seen from the callback, one frame below this one.
  local level = user_level() + 1
  local assertion
  for _, key in ipairs(keys) do
    assertion = namespaces.assertion[key] or assertion
  end
  local args = make_arglist(...)
  if not assertion then
    apply_modifiers(state, keys, args, level)
    return state
  end
  apply_modifiers(state, keys, nil, level)
  local ok, returned = assertion.callback(state, args, level)
  local failed, positive = (not ok) == state.mod, state.mod
  keep_tokens(state, tokens, mod)
  if failed then
    local key = positive and assertion.positive_message or assertion.negative_message
    raise_failure(compose_message(state, key, args))
  end
  if returned then return unpack(returned, 1, returned.n or #returned) end
  return ...
end

local function new_assertion_state()
  return setmetatable({ mod = true, tokens = {} }, assertion_state_mt)
end

local matcher_state_mt = { __index = index_tokens }

matcher_state_mt.__call = function(state, ...)
  local keys = resolve("matcher", take_tokens(state))
  local level = user_level() + 1
  local matcher
  for _, key in ipairs(keys) do
    matcher = namespaces.matcher[key] or matcher
  end
  local args = make_arglist(...)
  if not matcher then
    apply_modifiers(state, keys, args, level)
    return state
  end
  apply_modifiers(state, keys, nil, level)
  return setmetatable({
    name = matcher.name,
    mod = state.mod,
    callback = matcher.callback(state, args, level),
    arguments = args,
  }, matcher_mt)
end

local function new_matcher_state()
  return setmetatable({ mod = true, tokens = {} }, matcher_state_mt)
end

match.state = new_matcher_state
setmetatable(match, {
  __index = function(_, key) return new_matcher_state()[key] end,
})

local level_mt = {}

local assert = {
  _VERSION = "Luassert 1.8.0 (Lunar)",
  state = new_assertion_state,
}

-- Argument positions are counted as Lua counts them for a method call:
-- `assert:register(5)` is a bad argument #1.
function assert:register(...)
  local kind, name, callback, positive_message, negative_message = ...
  local given = select("#", ...)
  check_argument(1, "assert:register", "string", kind, given)
  check_argument(2, "assert:register", "string", name, given)
  check_argument(3, "assert:register", "function", callback, given)
  register(kind, name, callback, positive_message, negative_message)
end

function assert:unregister(...)
  local kind, name = ...
  check_argument(1, "assert:unregister", "string", kind, select("#", ...))
  check_argument(2, "assert:unregister", "string", name, select("#", ...))
  unregister(kind, name)
end
function assert:add_formatter(...)
  check_argument(1, "assert:add_formatter", "function", (...), select("#", ...))
  add_formatter((...))
end
function assert:remove_formatter(fn) remove_formatter(fn) end
function assert:format(...)
  check_argument(1, "assert:format", "table", (...), select("#", ...))
  return format_arguments((...))
end
function assert:set_parameter(...)
  local name, value = ...
  check_argument(1, "assert:set_parameter", "string", name, select("#", ...))
  set_parameter(name, value)
end
function assert:get_parameter(name) return get_parameter(name) end
function assert:add_spy(...)
  local s = ...
  if not is_spy(s) then argument_error(1, "assert:add_spy", "spy", s, select("#", ...)) end
  register_spy(s)
end
function assert:snapshot() return take_snapshot() end
function assert:level(level) return setmetatable({ level = level }, level_mt) end

function assert:get_level(level)
  if getmetatable(level) ~= level_mt then return nil end
  return level.level
end

-- assert(v, message, level, ...) behaves as Lua's assert but fails with a
-- failure object; assert:level(n) moves the reported position n-1 callers up.
setmetatable(assert, {
  __call = function(self, value, message, level, ...)
    if not value then
      local extra = (self:get_level(level) or 1) - 1
      if message == nil then message = "assertion failed!" end
      -- Numbers read as Lua's own assert would print them.
      if type(message) == "number" then message = tostring(message) end
      raise_failure(message_text(message), extra)
    end
    return value, message, level, ...
  end,
  __index = function(_, key)
    return new_assertion_state()[key]
  end,
})

--------------------------------------------------------------------------------
-- Registrations of everything above
--------------------------------------------------------------------------------

for _, name in ipairs({ "is", "are", "was", "has", "does", "the", "a", "an", "be" }) do
  register("modifier", name, no_op)
end
register("modifier", "not", negate)
register("modifier", "no", negate)
register("modifier", "message", set_message)
register("modifier", "spy", set_payload)
register("modifier", "stub", set_payload)
register("modifier", "array", set_array)

local SAME = { "assertion.same.positive", "assertion.same.negative" }
local function register_assertion(names, callback, messages)
  for _, name in ipairs(names) do
    register("assertion", name, callback, messages[1], messages[2])
  end
end

register_assertion({ "true" }, value_assertion(true), SAME)
register_assertion({ "false" }, value_assertion(false), SAME)
for _, t in ipairs({ "boolean", "number", "string", "table", "nil", "userdata", "function", "thread" }) do
  register_assertion({ t }, type_assertion(t), SAME)
end
register_assertion({ "same" }, assert_same, SAME)
register_assertion({ "equals", "equal" }, assert_equals, { "assertion.equals.positive", "assertion.equals.negative" })
register_assertion({ "near" }, assert_near, { "assertion.near.positive", "assertion.near.negative" })
register_assertion({ "matches", "match" }, assert_matches,
  { "assertion.matches.positive", "assertion.matches.negative" })
register_assertion({ "unique" }, assert_unique, { "assertion.unique.positive", "assertion.unique.negative" })
register_assertion({ "error", "errors" }, assert_error, { "assertion.error.positive", "assertion.error.negative" })
register_assertion({ "error_matches", "error_match", "matches_error", "match_error" }, assert_error_matches,
  { "assertion.error.positive", "assertion.error.negative" })
register_assertion({ "truthy" }, assert_truthy, { "assertion.truthy.positive", "assertion.truthy.negative" })
register_assertion({ "falsy" }, assert_falsy, { "assertion.falsy.positive", "assertion.falsy.negative" })
register_assertion({ "returned_arguments" }, assert_returned_arguments,
  { "assertion.returned_arguments.positive", "assertion.returned_arguments.negative" })
register_assertion({ "holes" }, assert_holes, { "assertion.array_holes.positive", "assertion.array_holes.negative" })

register_assertion({ "called" }, count_assertion("called", nil),
  { "assertion.called.positive", "assertion.called.negative" })
-- The negation of "at least n" is "less than n", and so on; the negative
-- message of each is the positive message of its opposite.
register_assertion({ "called_at_least" }, count_assertion("called_at_least", function(c, n) return c >= n end),
  { "assertion.called_at_least.positive", "assertion.called_less_than.positive" })
register_assertion({ "called_at_most" }, count_assertion("called_at_most", function(c, n) return c <= n end),
  { "assertion.called_at_most.positive", "assertion.called_more_than.positive" })
register_assertion({ "called_more_than" }, count_assertion("called_more_than", function(c, n) return c > n end),
  { "assertion.called_more_than.positive", "assertion.called_at_most.positive" })
register_assertion({ "called_less_than" }, count_assertion("called_less_than", function(c, n) return c < n end),
  { "assertion.called_less_than.positive", "assertion.called_at_least.positive" })
register_assertion({ "called_with" }, list_assertion("called_with"),
  { "assertion.called_with.positive", "assertion.called_with.negative" })
register_assertion({ "returned_with" }, list_assertion("returned_with"),
  { "assertion.returned_with.positive", "assertion.returned_with.negative" })

register("matcher", "true", value_matcher(true))
register("matcher", "false", value_matcher(false))
for _, t in ipairs({ "nil", "boolean", "number", "string", "table", "function", "userdata", "thread" }) do
  register("matcher", t, type_matcher(t))
end
register("matcher", "truthy", match_truthy)
register("matcher", "falsy", match_falsy)
register("matcher", "equals", match_equals)
register("matcher", "equal", match_equals)
register("matcher", "same", match_same)
register("matcher", "ref", match_ref)
register("matcher", "matches", match_matches)
register("matcher", "match", match_matches)
register("matcher", "near", match_near)
register("matcher", "unique", match_unique)
register("matcher", "none_of", composite("none_of", function(hits) return hits == 0 end))
register("matcher", "any_of", composite("any_of", function(hits) return hits > 0 end))
register("matcher", "all_of", composite("all_of", function(hits, n) return hits == n end))

set_parameter("TableFormatLevel", 3)
set_parameter("TableFormatShowRecursion", false)
set_parameter("TableErrorHighlightCharacter", "*")
set_parameter("TableErrorHighlightColor", "none")

return {
  assert = assert,
  spy = spy,
  stub = stub,
  mock = mock,
  match = match,
  say = say,
  is_failure = is_failure,
  -- busted's `fail(message)`: fails the running test with that message.
  fail = function(message) raise_failure(message_text(message) or "assertion failed!") end,
}
