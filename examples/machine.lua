-- machine.lua: an actor state machine for a list screen.
--   ./scripts/run examples/machine.lua
--   lunar graph examples/machine.lua          (draw it)
-- Transitions are pure: a handler returns the next state and commands;
-- interpreters carry the commands out and send feedback to the mailbox.
local machine = require "lunar.machine"

local list = machine.new {
  name = "list", initial = "initial", context = { page = 20 },
  states = {
    initial = { on = { reload = { run = function(ctx) return "loading", { { "load", ctx.page } } end,
                                  targets = { "loading" } } } },
    loading = { on = { loaded = { run = function(_ctx, msg) return "presenting", { { "present", msg.items } } end,
                                  targets = { "presenting" } } } },
    presenting = { on = { reload = "refreshing", expire = "initial" },
                   enter = function() return { { "after", 0.05, { "expire" } } } end },
    refreshing = { on = { loaded = { run = function(_ctx, msg) return "presenting", { { "present", msg.items } } end,
                                     targets = { "presenting" } } } },
  },
}

machine.interpreter("load", function(cmd, send)
  lunar.sleep(0.01)                                   -- pretend to fetch
  local items = {}
  for i = 1, 3 do items[i] = ("item %d of %d"):format(i, cmd[2]) end
  send { "loaded", items = items }
end)
machine.interpreter("present", function(cmd)
  print("showing " .. table.concat(cmd[2], ", "))
end)

print(list:step("reload"))                            -- pure: nothing runs
list:send("reload")
list:settle()
print("state: " .. list.state)
lunar.sleep(0.1)                                      -- the expiry timer fires
print("state: " .. list.state)
