-- Where stock Lua cannot yield, a user's coroutine.yield fails the same way
-- under lunar (whose table.sort and require pass only its own host waits).
package.path = "./?.lua"

local function inside(f)
  return coroutine.wrap(function() return pcall(f) end)()
end

print("sort comparator", inside(function()
  table.sort({3, 1, 2}, function(a, b) coroutine.yield() return a < b end)
end))
print("sort with yield as comparator", coroutine.wrap(function()
  return pcall(table.sort, {3, 1, 2}, coroutine.yield)
end)())
print("yield deeper in a comparator", inside(function()
  local function deeper() coroutine.yield("deep") end
  table.sort({2, 1}, function(a, b) deeper() return a < b end)
end))
print("isyieldable in a comparator", coroutine.wrap(function()
  local seen
  table.sort({3, 1, 2}, function(a, b) seen = coroutine.isyieldable() return a < b end)
  return seen, coroutine.isyieldable()
end)())
print("module body", inside(function() return require("yielding_module") end))
print("isyieldable of a thread", coroutine.isyieldable(coroutine.create(print)))
print("bad thread", pcall(coroutine.isyieldable, 1))
print("main", coroutine.isyieldable(), pcall(coroutine.yield, 1))

-- Yields that stock Lua allows still pass.
local gen = coroutine.wrap(function()
  for i = 1, 3 do coroutine.yield(i) end
  local ok, v = pcall(function() coroutine.yield("in pcall") return "after" end)
  coroutine.yield(tostring(ok) .. " " .. v)
  table.sort({2, 1}, function(a, b) return a < b end)
  coroutine.yield("after sort")
end)
for _ = 1, 6 do print("generator", gen()) end
