-- lunar.machine, its part in Lua: `machine.test(m)`, an exhaustive test
-- store in the spirit of TCA's `TestStore`. Every message interpreters
-- send back (to the initial state's `enter` too) must be claimed with
-- `receive` before the next `send`, and `finish` fails on leftovers.
local machine = ...
-- Required by machine.test only: requiring lunar.trace starts recording.
local trace = setmetatable({}, { __index = function(_, key) return require("lunar.trace")[key] end })
local Store = {}
Store.__index = Store

local function received_since(store)
  local names = {}
  for _, e in ipairs(trace.events("machine.received")) do
    if e.machine == store.machine.name and e.sequence > store.mark then names[#names + 1] = e end
  end
  return names
end

-- The sequence number of the last message received so far.
local function last_received()
  local events = trace.events("machine.received")
  return #events > 0 and events[#events].sequence or 0
end

function machine.test(m)
  local mt = type(m) == "userdata" and getmetatable(m)
  if not (type(mt) == "table" and rawget(mt, "__name") == "lunar.machine") then
    error(("bad argument #1 to 'test' (lunar.machine expected, got %s)"):format(type(m)), 2)
  end
  trace.start()
  local store = setmetatable({ machine = m, mark = last_received(), pending = {} }, Store)
  -- A machine starts by entering its initial state: what interpreters
  -- send back to that is claimed like the feedback to any message.
  m:settle()
  store.pending = received_since(store)
  return store
end

local function check_claimed(store, action)
  if #store.pending > 0 then
    local names = {}
    for _, e in ipairs(store.pending) do names[#names + 1] = e.message end
    error(("machine '%s': %s, but these messages were received and not asserted: %s")
      :format(store.machine.name, action, table.concat(names, ", ")), 3)
  end
end

--- Sends a message, settles, and collects the feedback it caused.
function Store:send(msg)
  check_claimed(self, "sending " .. (type(msg) == "table" and tostring(msg[1]) or tostring(msg)))
  self.mark = last_received()
  self.machine:send(msg)
  self.machine:settle()
  local feedback = received_since(self)
  table.remove(feedback, 1)  -- the message sent here
  self.pending = feedback
  return self.machine.state
end

--- Claims the next feedback message, which must be called `name`.
function Store:receive(name)
  local next = table.remove(self.pending, 1)
  if not next then
    error(("machine '%s': expected to receive '%s', but nothing more was received")
      :format(self.machine.name, name), 2)
  end
  if next.message ~= name then
    error(("machine '%s': expected to receive '%s', but received '%s'")
      :format(self.machine.name, name, next.message), 2)
  end
end

--- Fails if any feedback was not claimed.
function Store:finish()
  check_claimed(self, "the test finished")
end
