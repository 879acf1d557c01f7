-- lunar repl (ReplCommand.swift): what the console asks of its runtime,
-- one chunk for every request: `...` is the request's name, then its
-- argument. Evaluating entries is lunar.repl's (Sources/Lunar/Repl/repl.lua).
local request, argument = ...
if request == "start" then
  -- Nothing more: the runtime runs LUA_INIT before its first chunk.
  return "ok"
elseif request == "prompt" then
  -- _PROMPT or _PROMPT2 if the session set them, as lua.c reads them.
  return tostring(rawget(_G, argument) or '')
end
-- load (-i FILE), command (a dot-command), eval (an entry), complete
-- (Tab), leaving (what leaving stops).
return require('lunar.repl')[request](argument)
