-- hello.lua: the smallest Lunar script. Run it with
--   ./scripts/run examples/hello.lua [NAME]
local name = ... or "world"
print(("hello, %s, from %s"):format(name, _VERSION))
print(("arg[0] = %s, %d argument(s)"):format(arg[0], #arg))
