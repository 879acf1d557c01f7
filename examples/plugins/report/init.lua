-- plugins/report: a Lua plugin. A step `uses = "report.print"` (or
-- `lunar.run("report.send", ...)`) loads it on first use from the plugin
-- path: --plugin-dir, LUNAR_PATH, ./plugins, or plugins/ beside the script.
local report = {}

--- Formats a report's lines: `text`, or `title` and `lines`.
function report.format(input)
  if type(input) ~= "table" then error(("report: input must be a table, got %s"):format(type(input)), 2) end
  if input.text ~= nil then return tostring(input.text) end
  local out = { input.title or "report" }
  for _, line in ipairs(input.lines or {}) do out[#out + 1] = "  " .. tostring(line) end
  return table.concat(out, "\n")
end

-- report.print{ text = } or { title =, lines = }: prints the report, returns its text.
lunar.action("report.print", { uses = { "log" } }, function(_ctx, input)
  local text = report.format(input)
  print(text)
  return text
end)

-- report.send{ url =, text = }: posts the report as JSON ({ "text": ... })
-- to a webhook; returns the reply.
lunar.action("report.send", { uses = { "http" } }, function(ctx, input)
  local text = report.format(input)
  if type(input.url) ~= "string" then error("report.send: input.url must be a webhook URL", 0) end
  ctx:event("report_sent", { url = input.url, bytes = #text })
  return ctx.http:post_json(input.url, { text = text })
end)

return report
