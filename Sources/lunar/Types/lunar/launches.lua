---@meta lunar.launches
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---`require "lunar.launches"`: rocket launch schedules from RocketLaunch.Live and Launch
---Library 2, with a refresh policy and reminders. Also the `launches` service of actions.
---@class lunar.launcheslib
---@field sources string[] The sources' names: `rocketlaunch.live`, `launchlibrary2`.
local launches = {}

---A launch. A field the source leaves out (or gives as null) is nil: unknown.
---@class lunar.launch
---@field id string Prefixed by its source (`rll:4711`, `ll2:...`).
---@field name string
---@field missions lunar.launch_mission[] In the source's order.
---@field mission_description string? The first mission's description.
---@field estimated_date lunar.launch_estimated_date The parts the source gives (RocketLaunch.Live's `est_date`).
---@field provider string?
---@field vehicle string?
---@field pad string? The pad's name and its location's, or whichever is known.
---@field country string? The country's name.
---@field country_code string? The country's three-letter code (Launch Library 2 only).
---@field planned_time number? Seconds since the epoch, only when the time is known to the minute.
---@field sort_time number
---@field date_label string? `"Dec 07"`, `"Q2 2024"`.
---@field details_url string?

---A launch's mission.
---@class lunar.launch_mission
---@field name string
---@field description string?

---The known parts of an estimated launch date (none for Launch Library 2).
---@class lunar.launch_estimated_date
---@field month integer?
---@field day integer?
---@field year integer?

---A source's state.
---@class lunar.launch_snapshot
---@field phase "idle"|"loading"|"loaded"|"failed"
---@field fetched_at number? When the last successful fetch finished.
---@field requested_at number? When the last request that counts started: the cooldown runs from it.
---@field next_refresh_at number? Until when a refresh answers without a request.
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
