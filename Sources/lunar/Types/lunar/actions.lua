---@meta lunar.actions
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---`require "lunar.actions"`: the action runner and its services. `lunar.action`,
---`lunar.run` and `lunar.run_stubbed` are its `define`, `run` and `run_stubbed`.
---@class lunar.actionslib
---@field limit integer The recursion limit of action chains (default 32; see `set_limit`).
---@field private journaling boolean
local actions = {}

---A Lua action: runs against a context holding the services it declared.
---@alias lunar.action_function fun(ctx: lunar.action_context, input: any): any

---What an action sees: its name and chain, its attempt, and the services it declared
---(reaching for another is an error naming the action and the service).
---@class lunar.action_context
---@field action string The action's name.
---@field chain string[] The actions that led here, this one last (`{"login", "store_token"}`).
---@field attempt integer 1, or the durable job's attempt when a worker runs it again.
---@field now fun(): number The runtime clock.
---@field http lunar.http_service HTTP and HTTPS (if declared in `uses`).
---@field store lunar.store_service The run's key-value store (if declared).
---@field log lunar.log_service Lines on standard error and trace events (if declared).
---@field clock lunar.clock_service The runtime clock, recorded and replayed (if declared).
---@field launches lunar.launcheslib The launch schedule (if declared).
local context = {}

---The `http` service: HTTP and HTTPS only. A status outside 200-299, a transport failure
---or invalid JSON is an error.
---@class lunar.http_service
local http = {}

---The `store` service: the run's key-value store (keys are bytes).
---@class lunar.store_service
local store = {}

---The `log` service: a line on standard error and a `log.LEVEL` trace event.
---@class lunar.log_service
local log = {}

---The `clock` service: the runtime clock, recorded by `--record` and replayed.
---@class lunar.clock_service
local clock = {}

---Registers a service actions can declare (`uses = { name }`).
---@param name string
---@param object any
function actions.service(name, object) end

---True if `name` is a service an action may declare (registered from Lua so far, or by
---Swift for the run).
---@param name string
---@return boolean
function actions.is_service(name) end

---The names of the services `is_service` knows, sorted.
---@return string[]
function actions.service_names() end

---Defines a Lua action (as `lunar.action`).
---@param name string
---@param options { uses?: string[] }
---@param fn lunar.action_function
---@overload fun(name: string, fn: lunar.action_function)
function actions.define(name, options, fn) end

---Defines an action whose name and services its caller has already checked (a
---worker process's workflow steps).
---@private
---@param name string
---@param services string[]?
---@param fn lunar.action_function
function actions.define_checked(name, services, fn) end

---The declaration of the services in `services` (names its caller has already
---checked), for `run_declared`.
---@private
---@param services string[]?
---@return table declaration
function actions.declare(services) end

---Runs `fn` as the Lua action `name` would run were it registered (chain, journal,
---trace events), without registering it: a workflow's `run` step. Its context has the
---services of `declaration` and the step's `workflow`, `step` and `steps`.
---@async
---@private
---@param name string
---@param fn lunar.action_function
---@param declaration table
---@param input any
---@param attempt integer?
---@param workflow string
---@param step string
---@param steps table
---@return any output
function actions.run_declared(name, fn, declaration, input, attempt, workflow, step, steps) end

---The function of the Lua action `name`, or nil for a Swift action or none (a workflow
---step's code fingerprint covers it).
---@private
---@param name string
---@return function?
function actions.definition(name) end

---Runs the action `name` with `input` below `chain`; its context's `attempt` is
---`attempt` (default 1). Raises the action's error.
---@async
---@param name string
---@param input any
---@param chain? string[]
---@param attempt? integer
---@return any output
function actions.run(name, input, chain, attempt) end

---Runs an action with some services replaced (as `lunar.run_stubbed`).
---@async
---@param stubs table<string, any>
---@param name string
---@param input any
---@return any output
---@return { name: string, input: any }[] runs
function actions.run_stubbed(stubs, name, input) end

---The names of every action, Lua and Swift, sorted.
---@return string[]
function actions.list() end

---Changes the recursion limit of action chains.
---@param n integer a positive integer
function actions.set_limit(n) end

---@private
---@async
---@param name string
---@param input any
---@param chain string[]?
---@param attempt integer?
---@return any
function actions.swift_run(name, input, chain, attempt) end

---@private
---@param name string
---@return boolean
function actions.has_swift(name) end

---@private
---@return string[]
function actions.swift_names() end

---@private
---@return string[]
function actions.swift_services() end

---@private
---@param name string
---@return string[]
function actions.swift_uses(name) end

---@private
---@param kind string
---@param fields table
function actions.emit(kind, fields) end

---@private
---@param kind string
---@param key table
---@param result? table
---@return table?
function actions.journal(kind, key, result) end

---@private
---@return boolean
function actions.replaying() end

---@private
---`run_declared` without its checks, below a given chain, and the running task's chain, for
---the workflow runner; nil once taken.
---@return function? runner `(name, fn, declaration, input, attempt, workflow, step, steps, outer_chain)`
---@return (fun(): string[]?)? current_chain
function actions._take_declared_runner() end

---@private
---@return boolean
function actions.tracing() end

---Runs another action from this one, below this one in the chain.
---@async
---@param name string
---@param input any
---@return any output
function context:run(name, input) end

---Adds an analytics event to the action's span in the trace.
---@param name string
---@param fields? table
function context:event(name, fields) end

---GETs `url` and decodes its JSON body.
---@async
---@param url string
---@param options? { timeout?: number } `timeout`: non-negative seconds (default 30, 0 for none)
---@return any
function http:get_json(url, options) end

---POSTs `body` as JSON to `url` and decodes the JSON reply.
---@async
---@param url string
---@param body any
---@param options? { timeout?: number }
---@return any
function http:post_json(url, body, options) end

---GETs `url`.
---@async
---@param url string
---@param options? { timeout?: number }
---@return { status: integer, body: string }
function http:get(url, options) end

---The value stored under `key`, or nil.
---@param key string
---@return any
function store:get(key) end

---Stores `value` under `key`.
---@param key string
---@param value any
function store:set(key, value) end

---Logs at level `info`.
---@param ... any
function log:info(...) end

---Logs at level `warn`.
---@param ... any
function log:warn(...) end

---Logs at level `error`.
---@param ... any
function log:error(...) end

---The runtime clock: seconds since the epoch.
---@return number
function clock:now() end

return actions
