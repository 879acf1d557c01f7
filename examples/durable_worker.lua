-- The actions the jobs of examples/durable_queue.lua run. Start one or
-- more workers on the same store as the script:
--   lunar worker --store sqlite:demo.db durable_worker.lua
lunar.action("deploy", function(ctx, input)
  -- ctx.attempt is 2 or more when a worker running this job was lost and
  -- the job runs again: a durable job runs at least once.
  lunar.sleep(0.05)
  return { url = "https://" .. input.region .. ".example.com", attempt = ctx.attempt }
end)

lunar.action("fail", function(_ctx, input)
  error("cannot deploy to " .. input.region)
end)
