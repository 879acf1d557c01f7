---@meta lunar.machine
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---`require "lunar.machine"`: actor state machines and command interpreters. A machine
---handles one message at a time; handlers are pure and return commands, which
---interpreters carry out.
---@class lunar.machinelib
local machine = {}

---A message: a name, or a table whose `[1]` is its name (`{ "loaded", items = ... }`).
---@alias lunar.message string|{ [1]: string, [any]: any }

---A command: a table whose `[1]` names the interpreter (`{ "load", 20 }`). Built in:
---`{ "after", seconds, msg }`, `{ "log", ... }` and `{ "emit", kind, fields }`.
---@alias lunar.command { [1]: string, [any]: any }

---A message handler: from the (read-only) context and the message, the next state
---(nil to stay) and the commands to carry out.
---@alias lunar.machine_handler fun(ctx: table, msg: lunar.message): (next_state: string?, commands: lunar.command[]?)

---A state's `enter` or `exit` hook: the commands to carry out.
---@alias lunar.machine_hook fun(ctx: table): lunar.command[]?

---A state: handlers by message name (a state name for a data transition, a function, or
---a function with the states it may go to, for drawings), and its hooks.
---@class lunar.machine_state
---@field on? table<string, string|lunar.machine_handler|{ run: lunar.machine_handler, targets?: string[] }>
---@field enter? lunar.machine_hook
---@field exit? lunar.machine_hook

---A machine's definition (`machine.new`'s argument).
---@class lunar.machine_definition
---@field name string
---@field initial string the state it starts in (its `enter` runs when the machine is made)
---@field states table<string, lunar.machine_state>
---@field context? table shared, read-only data handlers receive (copied when the machine is made)
---@field strict? boolean true: a message no state handles is an error instead of dropped

---A running machine.
---@class lunar.machine
---@field state string The current state (its exact bytes).
---@field name string
---@field stopped boolean
local instance = {}

---An exhaustive test store (after TCA's `TestStore`), from `machine.test`.
---@class lunar.machine_test_store
---@field machine lunar.machine The machine under test.
---@field private mark integer
---@field private pending table[]
local store = {}

---A machine made from `definition`; it starts at once (its initial state's `enter`
---runs on the loop, after this call). A bad definition is an error at the caller's line.
---@param definition lunar.machine_definition
---@return lunar.machine
function machine.new(definition) end

---A machine written in Swift, registered by a plugin.
---@param name string
---@return lunar.machine
function machine.swift(name) end

---Registers `fn(cmd, send)` as the interpreter of commands called `name`; `send(msg)`
---puts a feedback message in the issuing machine's mailbox.
---@param name string
---@param fn fun(cmd: lunar.command, send: fun(msg: lunar.message))
function machine.interpreter(name, fn) end

---The machine as a diagram (`mermaid`, the default, or `dot`).
---@param m lunar.machine
---@param format? "mermaid"|"dot"
---@return string
function machine.graph(m, format) end

---An exhaustive test store for `m` (give it a machine just made): it settles the start;
---every feedback message must be claimed with `receive`.
---@async
---@param m lunar.machine
---@return lunar.machine_test_store
function machine.test(m) end

---Puts a message in the mailbox (functions inside it are refused with their path).
---@param msg lunar.message
function instance:send(msg) end

---Waits for the start, an empty mailbox and no running command; raises the failures
---since the last settle.
---@async
function instance:settle() end

---The pure step, for tests: the next state, every command (exit, handler, enter) and
---whether a handler took the message.
---@param msg lunar.message
---@param state? string the state to step from (default: the current one)
---@return string next_state
---@return lunar.command[] commands
---@return boolean handled
function instance:step(msg, state) end

---Stops the machine (its timers are cancelled); sending to it is then an error.
function instance:stop() end

---The number of messages waiting.
---@return integer
function instance:mailbox() end

---Sends `msg`, settles, and collects the feedback it caused; returns the state.
---@async
---@param msg lunar.message
---@return string state
function store:send(msg) end

---Claims the next feedback message, which must be called `name`.
---@param name string
function store:receive(name) end

---Fails if any feedback was not claimed.
function store:finish() end

return machine
