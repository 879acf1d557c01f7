-- blink.lua: a blinking light that stops after a few blinks.
--   ./scripts/run examples/blink.lua
--   lunar run --clock virtual examples/blink.lua    (no waiting: time jumps to each timer)
--   lunar graph examples/blink.lua                  (draw it)
-- A machine starts by entering its initial state: "off" schedules "on"
-- after `delay`, "on" schedules "off", and nothing has to be sent to get
-- it going. The `after` timer of a state dies when the light leaves it.
local machine = require "lunar.machine"

local light = machine.new {
  name = "light", initial = "off", context = { delay = 0.25, blinks = 3 },
  states = {
    off = { enter = function(ctx) return { { "show", "off" }, { "after", ctx.delay, { "switch" } } } end,
            on = { switch = "on",
                   -- Feedback from `show`: how many times the light has been on.
                   shown = { run = function(ctx, msg) if msg.blinks == ctx.blinks then return "stopped" end end,
                             targets = { "stopped" } } } },
    on = { enter = function(ctx) return { { "show", "on" }, { "after", ctx.delay, { "switch" } } } end,
           on = { switch = "off" } },
    stopped = { enter = function() return { { "show", "stopped" } } end },
  },
}

-- Timers do not keep a run going: the main chunk waits for this task,
-- which sleeps until the light has stopped.
local running = lunar.spawn(lunar.sleep, math.huge)

local started, blinks = lunar.now(), 0
machine.interpreter("show", function(cmd, send)
  if cmd[2] == "on" then blinks = blinks + 1 end
  print(("%.2fs  %s"):format(lunar.now() - started, cmd[2]))
  if cmd[2] == "stopped" then running:cancel() end
  send { "shown", blinks = blinks }
end)

running:result()
light:settle()                                        -- raises if a command failed
