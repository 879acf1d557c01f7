-- Action definitions (`lunar.action`), specified from Lua.
local actions = require "lunar.actions"

describe("lunar.action", function()
  -- The error of defining an action with `options`, at the caller's line.
  local function refusal(options)
    local ok, err = pcall(function() lunar.action("n", options, function() end); return nil end)
    assert.is_false(ok)
    assert.matches("^[^:]*actions_spec%.lua:%d+: ", err)
    return (err:gsub("^[^:]*:%d+: ", ""))
  end

  it("refuses nonsense in its options at definition time", function()
    assert.are.equal("bad argument #2 to 'action' (field 'uses' must be a list of service names, got string)",
      refusal { uses = "store" })
    assert.are.equal("bad argument #2 to 'action' (uses[1] names an unknown service 'teleporter' (services are "
      .. table.concat(actions.service_names(), ", ") .. "))", refusal { uses = { "teleporter" } })
    assert.are.equal("bad argument #2 to 'action' (uses[2] must be a service name, got number)",
      refusal { uses = { "log", 2 } })
    assert.are.equal("bad argument #2 to 'action' (field 'uses' must be a list of service names, "
      .. "got a table with other keys)", refusal { uses = { store = true } })
    assert.are.equal("bad argument #2 to 'action' (unknown field 'use' (fields are uses))",
      refusal { use = { "store" } })
  end)

  it("knows the run's services, a plugin's too before its module is loaded", function()
    local names = actions.service_names()
    for _, name in ipairs { "clock", "http", "launches", "log", "store" } do
      assert.is_true(actions.is_service(name), name)
    end
    assert.is_false(actions.is_service("teleporter"))
    local sorted = table.move(names, 1, #names, 1, {})
    table.sort(sorted)
    assert.are.same(sorted, names)
    lunar.action("uses launches", { uses = { "launches" } }, function(ctx) return type(ctx.launches.upcoming) end)
    assert.are.equal("function", lunar.run("uses launches"))
  end)

  it("takes a service registered from Lua", function()
    actions.service("teleporter", { beam = function() return "beamed" end })
    lunar.action("beam", { uses = { "teleporter" } }, function(ctx) return ctx.teleporter.beam() end)
    assert.are.equal("beamed", lunar.run("beam"))
    assert.has_error(function() actions.service("", {}) end,
      "bad argument #1 to 'service' (service name expected, got an empty string)")
  end)
end)
