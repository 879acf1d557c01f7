---@meta lunar.trace
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---`require "lunar.trace"`: the run's own events, kept from the first require (or from
---the start of the run under `--trace`).
---@class lunar.tracelib
local trace = {}

---An event: its kind, place and time, and the event's own fields.
---@class lunar.trace_event
---@field kind string `task.done`, `job.started`, `machine.state`, `action.finished`, ...
---@field sequence integer
---@field time number Seconds on the runtime clock since the start of the run.
---@field summary string One line (`task.done id=3`).
---@field [string] any The event's fields.

---The events kept so far whose kind starts with `prefix`.
---@param prefix? string
---@return lunar.trace_event[]
function trace.events(prefix) end

---The same events as one line each (`"task.done id=3"`).
---@param prefix? string
---@return string[]
function trace.summaries(prefix) end

---Forgets the events kept so far.
function trace.clear() end

---Stops keeping events.
function trace.stop() end

---Starts keeping events again.
function trace.start() end

---Whether events are being kept.
---@return boolean
function trace.recording() end

return trace
