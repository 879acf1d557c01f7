---@meta lunar
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---The `lunar` global, also `require "lunar"`: tasks, time and waiting. Lunar's modules
---are its fields too (`lunar.queue` is `require "lunar.queue"`), loaded on first use.
---@class lunarlib
---@field version string Lunar's version.
---@field cancelled lunar.cancelled The error value a cancelled task fails with.
---@field queue lunar.queuelib Ordered actor queues (`require "lunar.queue"`).
---@field machine lunar.machinelib Actor state machines (`require "lunar.machine"`).
---@field actions lunar.actionslib Actions and services (`require "lunar.actions"`).
---@field workflow lunar.workflowlib Workflows of named steps (`require "lunar.workflow"`).
---@field trace lunar.tracelib The run's events (`require "lunar.trace"`).
---@field launches lunar.launcheslib Rocket launch schedules (`require "lunar.launches"`).
---@field private repl lunar.repllib The console's evaluator (used by `lunar repl`).
lunar = {}

---The error value of a cancelled task: a waiting task sees it raised at its waiting
---point, and `t:result()` gives it (`rawequal(err, lunar.cancelled)`). `tostring` gives
---`cancelled`.
---@class lunar.cancelled

---A task's status.
---@alias lunar.task_status
---| "pending"   # not started yet
---| "running"   # started, not finished (it may be waiting)
---| "done"      # returned
---| "failed"    # raised an error
---| "cancelled" # cancelled before it finished

---A task handle: what `lunar.spawn` and `q:submit` return.
---@class lunar.task
---@field id integer The task's number.
---@field label string Its name (`task 3`).
---@field traceback string? The traceback of its failure (`stack traceback:` first), once it failed.
local task = {}

---Waits for the task and returns its results, as many as it returned (trailing nils
---included); raises its error, with the task's traceback appended to a string error.
---@async
---@return any ...
function task:await() end

---Waits for the task; `true` and its results, or `false` and its error. Never raises.
---@async
---@return boolean ok
---@return any ...
function task:result() end

---Cancels the task: one not started never runs; a waiting one sees `lunar.cancelled`
---raised at its waiting point. Returns false if it had already finished.
---@return boolean cancelled
function task:cancel() end

---The task's status now.
---@return lunar.task_status
function task:status() end

---Runs `fn(...)` as a task (a coroutine on the scheduler) and returns its handle at once.
---@param fn async fun(...: any): ...
---@param ... any arguments for `fn`
---@return lunar.task
function lunar.spawn(fn, ...) end

---Waits `seconds` (any non-negative number) on the runtime clock. A deadline past the
---clock's range (`math.huge` too) never comes: the sleep waits until cancelled.
---@async
---@param seconds number
function lunar.sleep(seconds) end

---Seconds since the epoch on the runtime clock (virtual under `--clock virtual`).
---@return number
function lunar.now() end

---The current folder's path (its exact bytes); or nil, the reason and `errno` when the
---system cannot tell, as `io.open` fails.
---@return string? path
---@return string? reason
---@return integer? errno
function lunar.cwd() end

---Waits for every task; returns the first result of each, in order (nil for a task that
---returned none). Raises the first failure at once.
---@async
---@param tasks lunar.task[]
---@return any ...
function lunar.await_all(tasks) end

---Waits for the first of the tasks to finish; returns its index, then all its results.
---Raises its error if it failed.
---@async
---@param tasks lunar.task[]
---@return integer index
---@return any ...
function lunar.await_any(tasks) end

---Defines a Lua action `fn(ctx, input)` that may use the services listed in `uses`;
---its context exposes only those.
---@param name string the action's name (`report.print`)
---@param options { uses?: string[] } the services it uses (`http`, `store`, `log`, `clock`, `launches`, ...)
---@param fn lunar.action_function
---@overload fun(name: string, fn: lunar.action_function)
function lunar.action(name, options, fn) end

---Runs a Lua or Swift action with `input` and returns its output; raises its error.
---@async
---@param name string
---@param input any
---@return any output
function lunar.run(name, input) end

---Runs an action with some services replaced (for tests); returns its output and the
---list of every action that ran with its input.
---@async
---@param stubs table<string, any> replacement service objects by service name
---@param name string
---@param input any
---@return any output
---@return { name: string, input: any }[] runs
function lunar.run_stubbed(stubs, name, input) end

return lunar
