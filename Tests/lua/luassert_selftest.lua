-- Self-test for luassert.lua, run by scripts/test (works under plain lua5.4 too):
-- lunar run Tests/lua/luassert_selftest.lua
--
-- Uses only Lua's own error/pcall so a broken library cannot hide its own
-- failures. Prints "N passed, N failed" and exits non-zero on any failure.

local dir = (arg and arg[0] or ""):match("^(.*[/\\])") or ""
local source = assert(io.open(dir .. "../../Sources/LunarTest/lua/luassert.lua")):read("a")
local L = assert(load(source, "=luassert"))()
local A, spy, stub, mock, match, say = L.assert, L.spy, L.stub, L.mock, L.match, L.say

local SELF = debug.getinfo(1, "S").short_src
local passed, failed = 0, 0

local function case(name, fn)
  local snapshot = A:snapshot()
  local ok, err = pcall(fn)
  snapshot:revert()
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write("FAIL ", name, "\n  ", tostring(err):gsub("\n", "\n  "), "\n")
  end
end

local function check(condition, message)
  if not condition then error(message or "check failed", 2) end
end

local function eq(actual, expected, what)
  if actual ~= expected then
    error(string.format("%s\n--- expected ---\n%s\n--- actual ---\n%s", what or "values differ",
      tostring(expected), tostring(actual)), 2)
  end
end

-- Runs fn, which must raise an assertion failure; returns the failure.
local function fails(fn)
  local ok, err = pcall(fn)
  if ok then error("expected an assertion failure, but it passed", 2) end
  if not L.is_failure(err) then error("expected a failure object, got: " .. tostring(err), 2) end
  return err
end

-- Runs fn, which must raise a plain (non-failure) error; returns it.
local function errors(fn)
  local ok, err = pcall(fn)
  if ok then error("expected an error, but it passed", 2) end
  if L.is_failure(err) then error("expected a plain error, got a failure: " .. tostring(err), 2) end
  return err
end

local function passes(fn)
  local ok, err = pcall(fn)
  if not ok then error("expected to pass, got: " .. tostring(err), 2) end
end

local function line() return debug.getinfo(2, "l").currentline end

--------------------------------------------------------------------------------
-- Module shape, failures and positions
--------------------------------------------------------------------------------

case("module shape", function()
  for _, key in ipairs({ "assert", "spy", "stub", "mock", "match", "say", "is_failure" }) do
    check(L[key] ~= nil, "missing " .. key)
  end
end)

case("failure objects", function()
  local e = fails(function() A.is_true(false) end)
  local mt = getmetatable(e)
  eq(mt.__name, "luassert.failure")
  eq(tostring(e), e.message)
  check(type(e.position) == "string")
  check(not L.is_failure("x"))
  check(not L.is_failure({ message = "x" }))
  check(not L.is_failure(nil))
end)

case("position points at the calling line", function()
  local e, here = fails(function() A.are.equal(1, 2) end), line()
  eq(e.position, SELF .. ":" .. here)
  -- through pcall directly (C frame between)
  local ok, e2 = pcall(A.is_true, false); local here2 = line()
  check(not ok and L.is_failure(e2))
  eq(e2.position, SELF .. ":" .. here2)
  -- from a helper: the helper's line
  local helper_line
  local function helper() helper_line = line(); A.is_nil(1) end
  local e3 = fails(helper)
  eq(e3.position, SELF .. ":" .. helper_line)
  -- spy assertions and internal argument checks too
  local s = spy.new()
  local e4, here4 = fails(function() A.spy(s).was.called() end), line()
  eq(e4.position, SELF .. ":" .. here4)
  local e5, here5 = fails(function() A.near(1, 2) end), line()
  eq(e5.position, SELF .. ":" .. here5)
end)

case("user errors stay errors", function()
  local err = errors(function() error("x") end)
  check(err:find("x$"))
  -- an error inside a spied function passes through untouched
  local s = spy.new(function() error({ code = 7 }) end)
  local ok, e = pcall(s)
  check(not ok and type(e) == "table" and e.code == 7 and not L.is_failure(e))
  eq(#s.calls, 1)
  eq(#s.returnvals, 0)
end)

case("unknown assertion is a plain error naming it", function()
  local err, here = errors(function() A.is_frobbed(1) end), line()
  eq(err, SELF .. ":" .. here .. ": luassert: unknown modifier/assertion: 'is_frobbed'")
  local err2 = errors(function() match.is_wibble() end)
  check(err2:find("unknown modifier/matcher: 'is_wibble'", 1, true), err2)
end)

--------------------------------------------------------------------------------
-- Plain assert
--------------------------------------------------------------------------------

case("callable assert", function()
  local a, b, c, d = A(1, "m", nil, 4)
  eq(a, 1); eq(b, "m"); eq(c, nil); eq(d, 4)
  eq(fails(function() A(false) end).message, "assertion failed!")
  eq(fails(function() A(nil, "hello") end).message, "hello")
  eq(fails(function() A(false, 42) end).message, "42")
  -- assert:level(2) reports the caller of the function that asserts
  local function check_positive(n) A(n > 0, "must be positive", A:level(2)) end
  local e, here = fails(function() check_positive(-1) end), line()
  eq(e.position, SELF .. ":" .. here)
end)

--------------------------------------------------------------------------------
-- Assertions: pass, fail, negation and messages
--------------------------------------------------------------------------------

case("same: pass and fail", function()
  passes(function() A.same({ 1, { 2 }, x = "y" }, { 1, { 2 }, x = "y" }) end)
  passes(function() A.are.same("a", "a") end)
  passes(function() A.are_not.same({ 1 }, { 2 }) end)
  fails(function() A.same({ 1 }, { 1, 2 }) end)
  fails(function() A.is_not.same({ 1 }, { 1 }) end)
  -- cycles compare structurally
  local a, b = { 1 }, { 1 }
  a.self, b.self = a, b
  passes(function() A.same(a, b) end)
end)

case("same: nested diff message", function()
  local e = fails(function() A.are.same({ x = 1, y = { 1, 2 } }, { x = 1, y = { 3, 2 } }) end)
  eq(e.message, [==[
Expected objects to be the same.
Passed in:
(table) {
  [x] = 1
 *[y] = {
   *[1] = 3
    [2] = 2 } }
Expected:
(table) {
  [x] = 1
 *[y] = {
   *[1] = 1
    [2] = 2 } }
Differs at: [y][1]]==])
end)

case("same: diff path is expanded past the depth limit", function()
  local e = fails(function() A.same({ a = { b = { c = { d = 1 } } } }, { a = { b = { c = { d = 2 } } } }) end)
  check(e.message:find("*[d] = 2", 1, true), e.message)
  check(e.message:find("Differs at: [a][b][c][d]", 1, true), e.message)
  local e2 = fails(function()
    A.same({ k = { l = { m = { n = 1 } } }, z = 1 }, { k = { l = { m = { n = 1 } } }, z = 2 })
  end)
  check(e2.message:find("[m] = { ... more }", 1, true), e2.message)
end)

case("same: missing key and negated message", function()
  local e = fails(function() A.same({ a = 1, b = 2 }, { a = 1 }) end)
  check(e.message:find("Differs at: [b]", 1, true), e.message)
  local e2 = fails(function() A.are_not.same({ 1 }, { 1 }) end)
  eq(e2.message,
    "Expected objects to not be the same.\nPassed in:\n(table) {\n  [1] = 1 }\nDid not expect:\n(table) {\n  [1] = 1 }")
end)

case("same: custom message is prepended (as luassert)", function()
  local e = fails(function() A.same(1, 2, "custom msg") end)
  eq(e.message, "custom msg\nExpected objects to be the same.\nPassed in:\n(number) 2\nExpected:\n(number) 1")
end)

case("equal", function()
  passes(function() A.equal(1, 1) end)
  passes(function() A.equals("a", "a") end)
  passes(function() A.is_not.equal(1, 2) end)
  local t = {}
  passes(function() A.equal(t, t) end)
  local e = fails(function() A.are.equal(1, 2) end)
  eq(e.message, "Expected objects to be equal.\nPassed in:\n(number) 2\nExpected:\n(number) 1")
  local e2 = fails(function() A.are_not.equal("a", "a") end)
  eq(e2.message, "Expected objects to not be equal.\nPassed in:\n(string) 'a'\nDid not expect:\n(string) 'a'")
  local e3 = fails(function() A.equal(1.0, 2) end)
  eq(e3.message, "Expected objects to be equal.\nPassed in:\n(number) 2\nExpected:\n(number) 1.0")
  -- distinct tables show their identity
  local e4 = fails(function() A.equal({}, {}) end)
  check(e4.message:find("(table: 0x", 1, true), e4.message)
  local e5 = fails(function() A.equal(1, 2, "why") end)
  check(e5.message:find("^why\nExpected objects to be equal") ~= nil, e5.message)
end)

case("near", function()
  passes(function() A.near(1, 1.05, 0.1) end)
  passes(function() A.is_not.near(1, 2, 0.5) end)
  local e = fails(function() A.near(1, 2, 0.5) end)
  eq(e.message, "Expected values to be near.\nPassed in:\n(number) 2\nExpected:\n(number) 1 +/- 0.5")
  eq(fails(function() A.near(1, 2) end).message, "the 'near' function requires a minimum of 3 arguments, got: 2")
  eq(fails(function() A.near("a", 1, 1) end).message,
    "bad argument #1 to 'near' (number or object convertible to a number expected, got (string) 'a')")
end)

case("matches", function()
  passes(function() A.matches("^a", "abc") end)
  passes(function() A.match("%d", 5) end)
  passes(function() A.matches(".", "a.b", 1, true) end)
  passes(function() A.does_not.match(".", "ab", nil, true) end)
  local c1, c2 = A.matches("(%d+)-(%d+)", "10-20")
  eq(c1, "10"); eq(c2, "20")
  local e = fails(function() A.matches("^a", "bcd") end)
  eq(e.message, "Expected strings to match.\nPassed in:\n(string) 'bcd'\nExpected:\n(string) '^a'")
  local e2 = fails(function() A.matches("x", "y", "my msg") end)
  check(e2.message:find("^my msg\nExpected strings to match") ~= nil, e2.message)
  local e3 = fails(function() A.is_not.match("b", "abc") end)
  check(e3.message:find("^Expected strings not to match") ~= nil)
end)

case("truthy, falsy, true, false, nil", function()
  passes(function() A.truthy(0); A.is_truthy(""); A.falsy(nil); A.is_falsy(false) end)
  passes(function() A.is_true(true); A.is_false(false); A.is_nil(nil); A.is_not_nil(0); A.not_nil(false) end)
  passes(function() A.is_not.truthy(nil); A.is_not_true(1); A.is_not.False(nil) end)
  eq(fails(function() A.truthy(nil) end).message, "Expected to be truthy, but value was:\n(nil)")
  eq(fails(function() A.is_not.falsy(nil) end).message, "Expected to not be falsy, but value was:\n(nil)")
  eq(fails(function() A.is_true(1) end).message,
    "Expected objects to be the same.\nPassed in:\n(number) 1\nExpected:\n(boolean) true")
  eq(fails(function() A.is_nil(3) end).message,
    "Expected objects to be the same.\nPassed in:\n(number) 3\nExpected:\ntype nil")
  eq(fails(function() A.not_nil(nil) end).message,
    "Expected objects to not be the same.\nPassed in:\n(nil)\nDid not expect:\ntype nil")
  eq(fails(function() A.truthy(false, "why") end).message,
    "why\nExpected to be truthy, but value was:\n(boolean) false")
  local v, m = A.is_true(true, "m")
  eq(v, true); eq(m, "m")
end)

case("type assertions", function()
  passes(function()
    A.is_number(1); A.is_string("s"); A.is_table({}); A.is_function(print); A.is_boolean(false)
    A.is_userdata(io.stdout); A.is_thread(coroutine.create(print)); A.is_not_string(1)
  end)
  eq(fails(function() A.is_number("x") end).message,
    "Expected objects to be the same.\nPassed in:\n(string) 'x'\nExpected:\ntype number")
  fails(function() A.is_table(nil) end)
  fails(function() A.is_not.string("x") end)
  fails(function() A.is_thread(print) end)
end)

case("has_error", function()
  passes(function() A.has_error(function() error("boom") end) end)
  passes(function() A.has_error(function() error("boom") end, "boom") end)
  passes(function() A.has_error(function() error("plain", 0) end, "plain") end)
  passes(function() A.has_error(function() error({ code = 1 }) end, { code = 1 }) end)
  passes(function() A.has_error(function() error("42") end, 42) end)
  passes(function() A.error(function() error("x") end) end)
  passes(function() A.has_no.errors(function() end) end)
  passes(function() A.has_no_error(function() end) end)
  -- a nested failure counts as an error, compared through its message
  passes(function() A.has_error(function() A(false, "inner") end, "inner") end)
  eq(A.has_error(function() error("boom") end), "boom")
  local e = fails(function() A.has_error(function() error("boom") end, "bang") end)
  eq(e.message, "Expected a different error.\nCaught:\n(string) 'boom'\nExpected:\n(string) 'bang'")
  eq(fails(function() A.has_error(function() end, "bang") end).message,
    "Expected a different error.\nCaught:\n(no error)\nExpected:\n(string) 'bang'")
  eq(fails(function() A.has_error(function() end) end).message,
    "Expected a different error.\nCaught:\n(no error)\nExpected:\n(error)")
  eq(fails(function() A.has_no.errors(function() error("boom") end) end).message,
    "Expected no error, but caught:\n(string) 'boom'")
  eq(fails(function() A.has_error(function() end, nil, "cm") end).message,
    "cm\nExpected a different error.\nCaught:\n(no error)\nExpected:\n(error)")
  eq(fails(function() A.has_error(5) end).message,
    "bad argument #1 to 'error' (function or callable object expected, got number)")
  fails(function() A.has_error(function() error({ code = 1 }) end, { code = 2 }) end)
end)

case("error_matches", function()
  passes(function() A.error_matches(function() error("code 42") end, "code %d+") end)
  passes(function() A.has_error_match(function() error("a.b") end, ".", 1, true) end)
  passes(function() A.matches_error(function() error("xyz") end, "y") end)
  eq(A.error_matches(function() error("code 42") end, "code (%d+)"), "42")
  local e = fails(function() A.error_matches(function() error("boom") end, "^bang") end)
  eq(e.message, "Expected a different error.\nCaught:\n(string) 'boom'\nExpected:\n(string) '^bang'")
  fails(function() A.error_matches(function() end, "x") end)
  fails(function() A.has_no.error_matches(function() error("xyz") end, "y") end)
end)

case("unique", function()
  passes(function() A.unique({ 1, 2, 3 }) end)
  passes(function() A.unique({ { 1 }, { 1 } }) end)
  passes(function() A.is_not.unique({ 1, 1 }) end)
  fails(function() A.unique({ { 1 }, { 1 } }, true) end)
  local e = fails(function() A.unique({ 1, 2, 1 }) end)
  eq(e.message, "Expected object to be unique:\n(table) {\n  [1] = 1\n  [2] = 2\n  [3] = 1 }")
  check(fails(function() A.unique({ 1, 1 }, "u msg") end).message:find("^u msg\n") ~= nil)
end)

case("returned_arguments", function()
  passes(function() A.returned_arguments(2, 1, 2) end)
  eq(fails(function() A.returned_arguments(2, 1) end).message,
    "Expected to be called with 2 argument(s), but was called with 1")
end)

case("message modifier and array holes", function()
  eq(fails(function() A.message("hello").is_true(false) end).message,
    "hello\nExpected objects to be the same.\nPassed in:\n(boolean) false\nExpected:\n(boolean) true")
  passes(function() A.array({ 1, 2, 3 }).has.no.holes() end)
  eq(A.array({ 1, nil, 3 }).has.holes(), 2)
  eq(fails(function() A.array({ 1, nil, 3 }).has.no.holes() end).message,
    "Expected array to not have holes, hole found at position: (number) 2\n")
end)

case("a stored assertion can be called again", function()
  local is_true, is_not_nil = A.is_true, A.is_not_nil
  passes(function() is_true(true); is_true(true); is_not_nil(1); is_not_nil(2) end)
  fails(function() is_true(false) end)
  passes(function() is_true(true) end)
  fails(function() is_not_nil(nil) end)
  local s = spy.new()
  local was_not_called = A.spy(s).was_not.called
  passes(function() was_not_called(); was_not_called() end)
end)

case("modifier spellings", function()
  passes(function()
    A.is.Not.Nil(1); A.are.Equal(1, 1); A.was_not.falsy(1); A.does.match("a", "a")
    A.is_not.equal(1, 2); A.are_not.same(1, 2); A.has_no.errors(function() end)
    A.is.a.number(1); A.is.an.table({}); A.be.equal(1, 1); A.the.same(1, 1)
  end)
end)

--------------------------------------------------------------------------------
-- Formatting
--------------------------------------------------------------------------------

case("value formatting", function()
  local function shown(v)
    return fails(function() A.is_true(v) end).message:match("Passed in:\n(.-)\nExpected:")
  end
  eq(shown("abc"), "(string) 'abc'")
  eq(shown(3), "(number) 3")
  eq(shown(0.1), "(number) 0.1")
  eq(shown(1 / 0), "(number) Inf")
  eq(shown(nil), "(nil)")
  eq(shown({}), "(table) { }")
  eq(shown({ 1, x = { 2 } }), "(table) {\n  [1] = 1\n  [x] = {\n    [1] = 2 } }")
  eq(shown({ "s", [true] = 1, [2.5] = false }), "(table) {\n  [1] = 's'\n  [2.5] = false\n  [true] = 1 }")
  local rec = { 1 }
  rec.me = rec
  eq(shown(rec), "(table) {\n  [1] = 1\n  [me] = { ... recursive } }")
  check(shown(print) == "(function) [C]")
  check(shown(function() end):match("^%(function%) .+:%d+$"))
  check(shown(match.is_string()) == "(matcher) is.string()")
  check(shown(match.is_not.equal(1)) == "(matcher) no.equal((number) 1)")
end)

case("formatters and parameters", function()
  A:add_formatter(function(v) if v == "secret" then return "(redacted)" end end)
  eq(fails(function() A.equal(1, "secret") end).message,
    "Expected objects to be equal.\nPassed in:\n(redacted)\nExpected:\n(number) 1")
  A:set_parameter("TableFormatLevel", 1)
  eq(A:get_parameter("TableFormatLevel"), 1)
  check(fails(function() A.is_true({ a = { b = 1 } }) end).message:find("[a] = { ... more }", 1, true))
end)

case("snapshot reverts formatters, parameters and spies", function()
  local t = { f = function() return 1 end }
  local snap = A:snapshot()
  A:set_parameter("TableFormatLevel", 0)
  stub(t, "f", 2)
  eq(t.f(), 2)
  snap:revert()
  eq(t.f(), 1)
  eq(A:get_parameter("TableFormatLevel"), 3)
end)

--------------------------------------------------------------------------------
-- say and register
--------------------------------------------------------------------------------

case("say", function()
  eq(say("assertion.same.positive", { "A", "B" }), "Expected objects to be the same.\nPassed in:\nA\nExpected:\nB")
  say:set("selftest.greeting", "hi %s and %s")
  eq(say("selftest.greeting", { "a", "b" }), "hi a and b")
  eq(say("selftest.none"), nil)
end)

case("register a custom assertion", function()
  local function has_property(_state, arguments)
    local property, tbl = arguments[1], arguments[2]
    return type(tbl) == "table" and tbl[property] ~= nil
  end
  say:set("assertion.has_property.positive", "Expected property %s in:\n%s")
  say:set("assertion.has_property.negative", "Expected property %s to not be in:\n%s")
  A:register("assertion", "has_property", has_property,
    "assertion.has_property.positive", "assertion.has_property.negative")
  passes(function() A.has_property("name", { name = "jack" }) end)
  passes(function() A.does_not.has_property("surname", { name = "jack" }) end)
  -- as in luassert, "has_no.property" does not find "has_property"
  errors(function() A.has_no.property("surname", { name = "jack" }) end)
  eq(fails(function() A.has_property("surname", { name = "jack" }) end).message,
    "Expected property (string) 'surname' in:\n(table) {\n  [name] = 'jack' }")
  eq(fails(function() A.is_not.has_property("name", { name = "jack" }) end).message,
    "Expected property (string) 'name' to not be in:\n(table) {\n  [name] = 'jack' }")
  A:unregister("assertion", "has_property")
  errors(function() A.has_property("x", {}) end)
end)

case("custom assertion errors use the level given", function()
  A:register("assertion", "picky", function(_state, _args, level) error("picky says no", level) end)
  local err, here = errors(function() A.is.picky(1) end), line()
  eq(err, SELF .. ":" .. here .. ": picky says no")
end)

case("register a modifier and a matcher", function()
  A:register("modifier", "loudly", function(state) return state end)
  passes(function() A.loudly.equal(1, 1) end)
  A:register("matcher", "even", function() return function(v) return type(v) == "number" and v % 2 == 0 end end)
  check(match.is_even()(2))
  check(not match.is_even()(3))
  check(match.is_not.even()(3))
end)

--------------------------------------------------------------------------------
-- Spies
--------------------------------------------------------------------------------

case("spy.new records calls and returns", function()
  local s = spy.new(function(a, b) return a + b, "x" end)
  eq(s(1, 2), 3)
  s(3, 4)
  eq(#s.calls, 2)
  eq(s.calls[1].vals[1], 1)
  eq(s.calls[2].vals.n, 2)
  eq(s.calls[2].returnvals[1], 7)
  eq(s.returnvals[1].vals[2], "x")
  check(spy.is_spy(s))
  check(not spy.is_spy({}))
  passes(function() A.spy(s).was.called(2) end)
  passes(function() A.spy(s).was.called() end)
  passes(function() A.spy(s).was.called_with(3, 4) end)
  passes(function() A.spy(s).was_not.called_with(3) end)
  passes(function() A.spy(s).returned_with(7, "x") end)
  passes(function() A.spy(s).was.called_at_least(2); A.spy(s).was.called_at_most(2) end)
  passes(function() A.spy(s).was.called_more_than(1); A.spy(s).was.called_less_than(3) end)
  check(s:called(2)); check(s:called_with(1, 2))
  s:clear()
  eq(#s.calls, 0)
  passes(function() A.spy(s).was_not.called() end)
  -- spy() is spy.new()
  local s2 = spy()
  s2()
  passes(function() A.spy(s2).was.called(1) end)
end)

case("spy keeps copies of arguments and the references", function()
  local arg = { 1 }
  local s = spy.new()
  s(arg)
  arg[1] = 2
  passes(function() A.spy(s).was.called_with({ 1 }) end)
  passes(function() A.spy(s).was.called_with(match.is_ref(arg)) end)
  fails(function() A.spy(s).was.called_with({ 2 }) end)
end)

case("spy.on and revert", function()
  local obj = { greet = function(_self, name) return "hi " .. name end }
  local original = obj.greet
  local s = spy.on(obj, "greet")
  eq(obj:greet("bob"), "hi bob")
  passes(function() A.spy(obj.greet).was.called_with(obj, "bob") end)
  passes(function() A.spy(s).was.called_with(match._, "bob") end)
  s:revert()
  eq(obj.greet, original)
  local empty = {}
  local s2 = spy.on(empty, "missing")
  empty.missing()
  s2:revert()
  eq(empty.missing, nil)
end)

case("spy assertion messages", function()
  local s = spy.new(function() end)
  s(1, "a")
  s({ 2 })
  eq(fails(function() A.spy(s).was.called_with(1, "b") end).message, [[
Function was never called with matching arguments.
Called with (last call if any):
(values list) ((table) {
  [1] = 2 })
Expected:
(values list) ((number) 1, (string) 'b')]])
  eq(fails(function() A.spy(s).was.called(3) end).message, "Expected to be called 3 time(s), but was called 2 time(s)")
  eq(fails(function() A.spy(s).was_not.called() end).message,
    "Expected to be called 0 time(s), but was called 2 time(s)")
  eq(fails(function() A.spy(s).was_not.called(2) end).message,
    "Expected not to be called exactly 2 time(s), but it was.")
  eq(fails(function() A.spy(s).was.called_at_least(3) end).message,
    "Expected to be called at least 3 time(s), but was called 2 time(s)")
  eq(fails(function() A.spy(s).was_not.called_at_least(1) end).message,
    "Expected to be called less than 1 time(s), but was called 2 time(s)")
  eq(fails(function() A.spy(s).was_not.called_with(1, "a") end).message, [[
Function was called with matching arguments at least once.
Called with (last matching call):
(values list) ((number) 1, (string) 'a')
Did not expect:
(values list) ((number) 1, (string) 'a')]])
  local never = spy.new()
  eq(fails(function() A.spy(never).was.called() end).message,
    "Expected to be called >0 time(s), but was called 0 time(s)")
  eq(fails(function() A.spy(never, "my message").was.called() end).message,
    "my message\nExpected to be called >0 time(s), but was called 0 time(s)")
  eq(fails(function() A.spy(never).was.called_with(1) end).message,
    "Function was never called with matching arguments.\nCalled with (last call if any):\n(nil)\n"
      .. "Expected:\n(values list) ((number) 1)")
  local r = spy.new(function() return 5 end)
  r()
  eq(fails(function() A.spy(r).returned_with(6) end).message,
    "Function never returned matching arguments.\nReturned (last call if any):\n"
      .. "(values list) ((number) 5)\nExpected:\n(values list) ((number) 6)")
end)

case("argument counts must agree, trailing nils included", function()
  local s = spy.new()
  s(1, nil)
  passes(function() A.spy(s).was.called_with(1, nil) end)
  fails(function() A.spy(s).was.called_with(1) end)
end)

case("spy misuse is a plain error", function()
  check(errors(function() spy.new(5) end):find("Cannot spy on type 'number'", 1, true))
  check(errors(function() A.spy(print).was.called() end):find("must not be the original function", 1, true))
  check(errors(function() A.called(1) end):find("'called' must be chained after 'spy(aspy)'", 1, true))
end)

--------------------------------------------------------------------------------
-- Stubs
--------------------------------------------------------------------------------

case("stubs", function()
  local t = { f = function() return "orig" end }
  local s = stub(t, "f")
  eq(t.f(), nil)
  s.returns(1, 2)
  local a, b = t.f()
  eq(a, 1); eq(b, 2)
  s:returns(3)
  eq(t.f(), 3)
  s.invokes(function(x) return x * 2 end)
  eq(t.f(4), 8)
  s.on_call_with(5).returns("five")
  s.on_call_with(match.is_string()).invokes(function(x) return x .. "!" end)
  eq(t.f(5), "five")
  eq(t.f("hey"), "hey!")
  eq(t.f(6), 12)
  passes(function() A.stub(s).was.called(7) end)
  passes(function() A.stub(t.f).was.called_with(5) end)
  s:revert()
  eq(t.f(), "orig")
end)

case("stub with values and implementations", function()
  local t = {}
  stub(t, "v", 5, 6)
  local a, b = t.v()
  eq(a, 5); eq(b, 6)
  stub.new(t, "g", function(x) return x + 1 end)
  eq(t.g(1), 2)
  local blank = stub.new()
  blank(1)
  passes(function() A.stub(blank).was.called_with(1) end)
  check(errors(function() stub.new({ x = 1 }, "x") end):find("must either be callable, or be nil", 1, true))
  local s = stub(t, "d")
  s.by_default.returns("dflt")
  eq(t.d(), "dflt")
  s.by_default:returns("again")
  eq(t.d(), "again")
end)

--------------------------------------------------------------------------------
-- Mocks
--------------------------------------------------------------------------------

case("mock spies and reverts", function()
  local obj = { a = function() return 1 end, sub = { b = function() return 2 end }, v = 3 }
  local original_a = obj.a
  local m = mock(obj)
  check(m == obj)
  eq(m.a(), 1)
  eq(m.sub.b(), 2)
  eq(m.v, 3)
  passes(function() A.spy(m.a).was.called(); A.spy(m.sub.b).was.called() end)
  mock.clear(m)
  passes(function() A.spy(m.a).was_not.called() end)
  mock.revert(m)
  eq(obj.a, original_a)
  check(not spy.is_spy(obj.sub.b))
end)

case("mock with stubs", function()
  local obj = { a = function() return 1 end }
  local m = mock(obj, true)
  eq(m.a(), nil)
  passes(function() A.stub(m.a).was.called() end)
  mock.revert(m)
  eq(obj.a(), 1)
end)

--------------------------------------------------------------------------------
-- Matchers
--------------------------------------------------------------------------------

case("matchers", function()
  check(match._(nil))
  check(match.is_string()("x")); check(not match.is_string()(1))
  check(match.is_number()(1)); check(match.is_table()({})); check(match.is_function()(print))
  check(match.is_boolean()(false)); check(match.is_nil()(nil))
  check(match.is_truthy()(0)); check(match.is_falsy()(nil))
  check(match.is_true()(true)); check(match.is_false()(false)); check(not match.is_true()(1))
  check(match.equals(1)(1)); check(not match.equals({})({}))
  check(match.same({ 1 })({ 1 }))
  check(match.matches("^a")("abc")); check(not match.matches("^a")(5))
  check(match.near(1, 0.1)(1.05))
  local t = {}
  check(match.is_ref(t)(t)); check(not match.is_ref(t)({}))
  check(match.is_not.string()(1)); check(match.no.number()("x"))
  check(match.any_of(match.is_string(), match.is_number())(1))
  check(not match.all_of(match.is_string(), match.is_number())(1))
  check(match.none_of(match.is_string(), match.is_table())(1))
  check(match.is_matcher(match._)); check(not match.is_matcher({}))
  eq(fails(function() match.any_of(1) end).message, "bad argument #1 to 'any_of' (matcher expected, got number)")
end)

case("matchers in called_with, returned_with and same", function()
  local s = spy.new(function() return { a = 1 } end)
  s(1, "a", { 2 })
  passes(function() A.spy(s).was.called_with(match.is_number(), match.matches("^a"), match.is_table()) end)
  passes(function() A.spy(s).was.called_with(1, match._, { match.is_number() }) end)
  passes(function() A.spy(s).returned_with(match.is_table()) end)
  passes(function() A.spy(s).returned_with({ a = match.is_number() }) end)
  passes(function() A.same({ id = match.is_number(), name = "x" }, { id = 7, name = "x" }) end)
  passes(function() A.same(match.is_string(), "x") end)
  fails(function() A.same({ id = match.is_string() }, { id = 7 }) end)
  local e = fails(function() A.spy(s).was.called_with(match.is_string(), match._, match._) end)
  check(e.message:find("(values list) ((matcher) is.string(), (matcher) _, (matcher) _)", 1, true), e.message)
end)

print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
