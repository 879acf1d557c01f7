-- lunar, its part in Lua: sub-modules load on first use: `lunar.queue`
-- requires lunar.queue, and `lunar.action`/`lunar.run` load the actions
-- module.
local lunar = ...
local owners = { action = "lunar.actions", run = "lunar.actions", run_stubbed = "lunar.actions" }
setmetatable(lunar, { __index = function(t, key)
  if type(key) ~= "string" then return nil end
  local module = owners[key] or ("lunar." .. key)
  if package.preload[module] == nil and package.loaded[module] == nil then return nil end
  local value = require(module)
  if owners[key] then return rawget(t, key) end
  return value
end })
