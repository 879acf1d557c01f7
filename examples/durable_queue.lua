-- Durable jobs: the queue lives in the store, the jobs run in `lunar worker`
-- processes (examples/durable_worker.lua defines their actions), in strict
-- submission order across every worker.
--   lunar worker --store sqlite:demo.db durable_worker.lua &
--   lunar run --store sqlite:demo.db durable_queue.lua
local queue = require "lunar.queue"

local deploys = queue.new { name = "deploys", durable = true }
local eu = deploys:submit("deploy", { region = "eu" })
local us = deploys:submit("deploy", { region = "us" })
local bad = deploys:submit("fail", { region = "mars" })

print("eu", eu:await().url)
print("us", us:await().url)
local ok, err = bad:result()
print("mars", ok, err)

-- A handle can be found again later, by queue and sequence number.
print("again", queue.job("deploys", eu.sequence):status())
