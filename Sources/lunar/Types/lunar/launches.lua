---@meta lunar.launches
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---`require "lunar.launches"`: rocket launch schedules from RocketLaunch.Live and Launch
---Library 2, with a refresh policy and reminders. Also the `launches` service of actions.
---@class lunar.launcheslib
---@field sources string[] The sources' names: `rocketlaunch.live`, `launchlibrary2`.
local launches = {}

---A launch.
---@class lunar.launch
---@field id string Prefixed by its source (`rll:4711`, `ll2:...`).
---@field name string
---@field missions string[]
---@field provider string
---@field vehicle string
---@field pad string
---@field country string? As the source gives it.
---@field planned_time number? Seconds since the epoch, only when the time is known to the minute.
---@field sort_time number
---@field date_label string `"Dec 07"`, `"Q2 2024"`.
---@field details_url string?

---A source's state.
---@class lunar.launch_snapshot
---@field phase "idle"|"loading"|"loaded"|"failed"
---@field fetched_at number?
---@field next_refresh_at number?
---@field count integer
---@field error string? Why the last fetch failed.

---A reminder. Delivered to a function, its `launch` is the launch table.
---@class lunar.launch_reminder
---@field id integer
---@field launch string|lunar.launch The launch's id (its table when delivered).
---@field minutes integer
---@field due_at number
---@field state "pending"|"delivered"|"failed"
---@field reason string? Why it failed.

---Refreshes (see the policy in the README) and returns launches, soonest first.
---@async
---@param options? { source?: string, limit?: integer } all sources without `source`; `limit` defaults to 10
---@return lunar.launch[]
function launches.upcoming(options) end

---The next launch now, without a fetch, or nil.
---@async
---@return lunar.launch?
function launches.next() end

---A source's state.
---@async
---@param source string
---@return lunar.launch_snapshot
function launches.snapshot(source) end

---A reminder 5, 15 or 60 minutes before the launch's exact time, delivered on the
---runtime clock by calling `target(reminder)` or sending `{ "reminder", launch =,
---minutes = }` to a machine. Returns the reminder's id.
---@async
---@param launch lunar.launch|string a launch or its id
---@param minutes 5|15|60
---@param target fun(reminder: lunar.launch_reminder)|lunar.machine
---@return integer id
function launches.remind(launch, minutes, target) end

---Every reminder with its state.
---@async
---@return lunar.launch_reminder[]
function launches.reminders() end

---Changes only what it is given: endpoints of the sources named (`http(s)://` or
---`file://` URLs), the sample feeds shipped inside Lunar (`samples = true`, offline) or
---back to the start's endpoints (`false`), or the cooldown in seconds.
---@async
---@param options? { endpoints?: table<string, string>, samples?: boolean, cooldown?: number }
function launches.configure(options) end

---@private
---@async
---@param launch lunar.launch|string
---@param minutes integer
---@return integer id
function launches.set_reminder(launch, minutes) end

---@private
---@param id integer
---@param target function|lunar.machine
function launches.deliver_to(id, target) end

return launches
