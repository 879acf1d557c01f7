---@meta lunar.repl
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---`require "lunar.repl"`: what `lunar repl` evaluates entries with. Internal to the
---console: not for scripts.
---@class lunar.repllib
local repl = {}

---Evaluates one console entry: "ok", "incomplete" or "error" with the message.
---@private
---@param source string
---@return "ok"|"incomplete"|"error" outcome
---@return string? message
function repl.eval(source) end

---Runs a file in the console's environment: "ok", or "error" with the message.
---@private
---@param path string
---@return "ok"|"error" outcome
---@return string? message
function repl.load(path) end

---Runs a dot-command (the entry without its dot): "ok", or the command's outcome.
---@private
---@param entry string
---@return string outcome
---@return string? message
function repl.command(entry) end

---Completions of `text`, the word before the cursor.
---@private
---@param text string
---@return string[]
function repl.complete(text) end

---What leaving the console now stops (tasks and machines at work), or nil.
---@private
---@return string?
function repl.leaving() end

return repl
