-- actions.lua: small units of work run against a context of services.
--   ./scripts/run examples/actions.lua                       (offline: a stand-in account server)
--   lunar run examples/actions.lua https://HOST/account      (a real account server)
--   lunar run --analytics spans.jsonl examples/actions.lua   (spans as JSON lines)
--   lunar run --record run.jsonl examples/actions.lua        (then --replay run.jsonl)
-- An action sees only the services it declares; actions chain through ctx:run.

-- Without a URL, a stand-in answers for the account server: it replaces the
-- http service for the login run (lunar.run_stubbed).
local account_url = arg[1]
local account_server = nil
if not account_url then
  account_url = "https://accounts.example/me"
  account_server = { get_json = function(_, _url)
    return { token = "tok-4711", user = { name = "Ada", plan = "pro" } }
  end }
end

lunar.action("store_token", { uses = { "store" } }, function(ctx, input)
  ctx.store:set("token", input.token)
end)

lunar.action("login", { uses = { "http", "log" } }, function(ctx, input)
  local reply = ctx.http:get_json(input.url)
  ctx:run("store_token", { token = reply.token })
  ctx:event("logged_in", { plan = reply.user.plan })
  ctx.log:info("logged in as " .. reply.user.name)
  return { user = reply.user.name }
end)

lunar.action("whoami", { uses = { "store" } }, function(ctx)
  return "token " .. tostring(ctx.store:get("token"))
end)

print(lunar.run_stubbed({ http = account_server }, "login", { url = account_url }).user)
print(lunar.run("whoami"))

-- The same action with its HTTP service replaced, listing what ran.
local fake_http = { get_json = function() return { token = "fake", user = { name = "Test", plan = "free" } } end }
local out, runs = lunar.run_stubbed({ http = fake_http }, "login", { url = "http://example.invalid" })
print(out.user, #runs .. " actions ran: " .. runs[1].name .. ", " .. runs[2].name)
