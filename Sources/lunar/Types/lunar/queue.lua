---@meta lunar.queue
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---`require "lunar.queue"`: ordered actor queues. A queue runs its jobs strictly in
---submission order; different queues run concurrently.
---@class lunar.queuelib
local queue = {}

---What happens to the jobs behind a failure.
---@alias lunar.queue_policy
---| "continue" # the failure stays in its handle; the next job runs (default)
---| "stop"     # the jobs waiting behind a failure are cancelled (a durable queue halts)

---The options of `queue.new`.
---@class lunar.queue_options
---@field name string the queue's name (its exact bytes)
---@field policy? lunar.queue_policy
---@field durable? boolean true: the queue lives in the run's store and `lunar worker` runs its jobs

---An in-process queue of Lua functions.
---@class lunar.queue
---@field name string As given (its exact bytes).
---@field policy lunar.queue_policy
local in_process = {}

---A durable queue: named actions with value inputs, kept in the run's store and run by
---`lunar worker` processes, strictly in order across every worker.
---@class lunar.durable_queue
---@field name string As given (its exact bytes).
---@field policy lunar.queue_policy
---@field durable true
local durable = {}

---The handle of a durable job (from `q:submit` or `queue.job`, in any process).
---@class lunar.durable_job
---@field sequence integer The job's place in its queue.
---@field queue string Its queue's name.
---@field id integer Its number in the store.
---@field durable true
local job = {}

---A queue named `name`, or one made from `options`: an in-process queue, or a durable
---one with `durable = true`.
---@param name string
---@return lunar.queue
---@overload fun(options: { name: string, policy?: lunar.queue_policy, durable?: false }): lunar.queue
---@overload fun(options: { name: string, policy?: lunar.queue_policy, durable: true }): lunar.durable_queue
---@overload fun(options: lunar.queue_options): lunar.queue|lunar.durable_queue
function queue.new(name) end

---The handle of job `sequence` of the durable queue `name` (from any process), or nil.
---@param name string
---@param sequence integer
---@return lunar.durable_job?
function queue.job(name, sequence) end

---Queues `fn(...)` and returns its task handle at once (the same kind `lunar.spawn` gives).
---@param fn async fun(...: any): ...
---@param ... any arguments for `fn`
---@return lunar.task
function in_process:submit(fn, ...) end

---Waits until every job submitted so far has finished (their handles hold their results).
---@async
function in_process:drain() end

---The jobs waiting plus the one running.
---@return integer
function in_process:length() end

---The running job's handle, or nil.
---@return lunar.task?
function in_process:running() end

---Queues the named action with one value input (encoded losslessly; no functions) and
---returns the job's handle at once.
---@param action string the action's name, defined where the worker runs it
---@param input any
---@return lunar.durable_job
function durable:submit(action, input) end

---Waits for the job (polling the store, without blocking other tasks) and returns the
---action's output; raises its error.
---@async
---@return any output
function job:await() end

---Waits for the job; `true` and its output, or `false` and its error. Never raises.
---@async
---@return boolean ok
---@return any output_or_error
function job:result() end

---Cancels the job if it has not started (it then never runs); false once it started or
---finished.
---@return boolean cancelled
function job:cancel() end

---The job's status as the store has it now (the names of in-process task handles).
---@return lunar.task_status
function job:status() end

return queue
