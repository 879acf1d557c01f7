-- table.sort's stock behaviour, printed: `lunar run` must print exactly
-- what `lua5.4` prints for this file. Every comparison is logged, so the
-- order of comparisons must match too.
math.randomseed(42)

local function digest(log)
  -- A short fingerprint of a long comparison log.
  local h = 0
  for i = 1, #log do h = (h * 31 + log:byte(i)) % 4294967296 end
  return ("%d comparisons, %08x"):format(select(2, log:gsub(";", "")), h)
end

local function sorted(t, less)
  local log = {}
  local ok, err = pcall(table.sort, t, less and function(a, b)
    local r = less(a, b)
    log[#log + 1] = tostring(a) .. "<" .. tostring(b) .. "=" .. tostring(r) .. ";"
    return r
  end)
  return ok, err, table.concat(t, ","), digest(table.concat(log))
end

local function randoms(n, range)
  local t = {}
  for i = 1, n do t[i] = math.random(range) end
  return t
end

-- Sizes around the special cases (2, 3 elements) and past RANLIMIT.
for _, n in ipairs { 0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 64, 99, 100, 101, 127, 128 } do
  print(n, "asc", sorted(randoms(n, 50), function(a, b) return a < b end))
  print(n, "desc", sorted(randoms(n, 1000), function(a, b) return a > b end))
  print(n, "default", select(3, sorted(randoms(n, 1000))))
end
print("large", select(3, sorted(randoms(5000, 100000))))
print("large comparator", select(3, sorted(randoms(5000, 100000), function(a, b) return a > b end)))
local presorted = {}
for i = 1, 3000 do presorted[i] = i end
print("presorted", select(3, sorted(presorted, function(a, b) return a > b end)) == nil)

-- Comparators that break the order: the same comparisons, then the same
-- result or the same error.
for n = 2, 40 do
  print(n, "random order", sorted(randoms(n, 10), function() return math.random(2) == 1 end))
end
print("always true", sorted(randoms(20, 10), function() return true end))
print("less or equal", sorted(randoms(30, 5), function(a, b) return a <= b end))

-- Errors.
print("not a table", pcall(table.sort, 1))
print("no table", pcall(table.sort))
print("bad comparator", pcall(table.sort, { 3, 2, 1 }, 42))
print("nil comparator", pcall(table.sort, { 3, 2, 1 }, nil))
print("mixed types", pcall(table.sort, { 3, "x", 1 }))
print("raises", pcall(table.sort, { 3, 2, 1 }, function() error("from the comparator") end))
print("raises table", select(2, pcall(table.sort, { 3, 2, 1 }, function() error({ code = 7 }) end)).code)
print("short is fine", pcall(table.sort, { 1 }, 42))
print("position", pcall(function() table.sort({ 5, 4, 3, 2, 1, 6, 7, 8 }, function() return true end) end))
print("too big", pcall(table.sort, setmetatable({}, { __len = function() return math.maxinteger end })))

-- Values with __lt, and an object that only behaves like a table.
local mt = { __lt = function(a, b) return a.v < b.v end }
local objects = {}
for i = 1, 20 do objects[i] = setmetatable({ v = (i * 7) % 20 }, mt) end
table.sort(objects)
local vs = {}
for i, o in ipairs(objects) do vs[i] = o.v end
print("__lt", table.concat(vs, ","))
local backing = { 5, 3, 9, 1 }
local proxy = setmetatable({}, {
  __index = function(_, k) return backing[k] end,
  __newindex = function(_, k, v) backing[k] = v end,
  __len = function() return #backing end,
})
table.sort(proxy)
print("proxy", table.concat(backing, ","))
print("no __newindex", pcall(table.sort, setmetatable({}, { __index = backing, __len = function() return 4 end })))
print("returns", select("#", table.sort({ 2, 1 })))
