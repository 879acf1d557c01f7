-- Workflows (`lunar.workflow`), specified from Lua.
local workflow = require "lunar.workflow"
local step = workflow.step
local trace = require "lunar.trace"

local function run(wf, options)
  options = options or {}
  options.quiet = true
  return workflow.execute(wf, options)
end

local graphviz_reads = require "spec.support.graphviz"

local function step_events(kinds)
  local lines = {}
  for _, e in ipairs(trace.events("workflow.step.")) do
    local kind = e.kind:sub(15)
    if not kinds or kinds[kind] then lines[#lines + 1] = kind .. " " .. e.step end
  end
  return lines
end

local function sleeper(seconds, value)
  return function() lunar.sleep(seconds); return value end
end

describe("lunar.workflow", function()
  it("runs steps after what they need, independent ones in parallel", function()
    local outcome = run(workflow "w" {
      step "a" { run = sleeper(2, 1) },
      step "b" { run = sleeper(3, 2) },
      step "sum" { needs = { "a", "b" }, run = function(ctx) return ctx.steps.a.output + ctx.steps.b.output end },
    })
    assert.is_true(outcome.ok)
    assert.are.equal(3, outcome.results.sum.output)
    assert.are.same({ "started a", "started b", "succeeded a", "succeeded b", "started sum", "succeeded sum" },
      step_events())
  end)

  it("bounds parallelism with jobs", function()
    local start = lunar.now()
    run(workflow "w" {
      step "a" { run = sleeper(1) }, step "b" { run = sleeper(1) }, step "c" { run = sleeper(1) },
    }, { jobs = 1 })
    assert.are.equal(3, lunar.now() - start)
    assert.are.same({ "started a", "succeeded a", "started b", "succeeded b", "started c", "succeeded c" },
      step_events())
  end)

  it("runs steps sharing a queue one at a time in declaration order", function()
    run(workflow "w" {
      step "x" { queue = "db", run = sleeper(2) },
      step "y" { queue = "db", run = sleeper(1) },
      step "free" { run = sleeper(1) },
    })
    assert.are.same({ "started x", "started free", "succeeded free", "succeeded x", "started y", "succeeded y" },
      step_events())
  end)

  it("skips what needs a failed step, unless it may continue", function()
    local outcome = run(workflow "w" {
      step "broken" { run = function() error("boom", 0) end },
      step "after" { needs = { "broken" }, run = sleeper(0, "never") },
      step "tolerated" { continue_on_error = true, run = function() error("meh", 0) end },
      step "goes_on" { needs = { "tolerated" }, run = sleeper(0, "ran") },
      step "independent" { run = sleeper(0, "ran") },
    })
    assert.is_false(outcome.ok)
    assert.are.same({ "broken" }, outcome.failed)
    assert.are.equal("skipped", outcome.results.after.status)
    assert.are.equal("ran", outcome.results.goes_on.output)
    assert.are.equal("ran", outcome.results.independent.output)
  end)

  it("retries with backoff on the runtime clock", function()
    local tries = 0
    local start = lunar.now()
    local outcome = run(workflow "w" {
      step "flaky" { retry = { attempts = 4, backoff = 1 }, run = function()
        tries = tries + 1
        if tries < 3 then error("not yet", 0) end
        return tries
      end },
    })
    assert.are.equal(3, outcome.results.flaky.output)
    assert.are.equal(3, outcome.results.flaky.attempts)
    assert.are.equal(1 + 2, lunar.now() - start)  -- backoff 1 s, then 2 s
  end)

  it("times a step out", function()
    local outcome = run(workflow "w" { step "slow" { timeout = 5, run = sleeper(60) } })
    assert.are.equal("failed", outcome.results.slow.status)
    assert.are.same({ "started slow", "failed slow" }, step_events { started = true, failed = true })
    assert.are.equal([[step "slow": timed out after 5s]], trace.events("workflow.step.failed")[1].error)
  end)

  it("skips a step whose condition is false", function()
    local outcome = run(workflow "w" {
      step "check" { run = sleeper(0, false) },
      step "maybe" { needs = { "check" }, ["if"] = function(ctx) return ctx.steps.check.output end,
                     run = sleeper(0, 1) },
    })
    assert.is_true(outcome.ok)
    assert.are.equal("skipped", outcome.results.maybe.status)
  end)

  it("gives a mapped step's children the steps their parent needs, and only those", function()
    local outcome = run(workflow "w" {
      step "base" { run = function() return 10 end },
      step "other" { run = function() return 0 end },
      step "each" { needs = "base", map = function() return { 1, 2, 3 } end,
                    run = function(ctx, n) return ctx.steps.base.output + n end },
      step "peek" { needs = "each", map = function() return { 1 } end,
                    run = function(ctx) return ctx.steps.other end },
    })
    assert.are.same({ 11, 12, 13 }, outcome.results.each.output)
    assert.are.equal("failed", outcome.results.peek.status)
    local refused = outcome.results["peek[1]"].error
    assert.matches('step "peek" reads ctx.steps.other, but "other" is not among its needs', refused, 1, true)
  end)

  it("runs only a step and what it needs, or from a step on", function()
    local wf = workflow "w" {
      step "a" { run = sleeper(0, "a") },
      step "b" { needs = { "a" }, run = sleeper(0, "b") },
      step "c" { needs = { "b" }, run = sleeper(0, "c") },
      step "d" { run = sleeper(0, "d") },
    }
    local only = run(wf, { only = "b" })
    assert.is_nil(only.results.c)
    assert.is_nil(only.results.d)
    assert.are.equal("b", only.results.b.output)
    local from = run(wf, { from = "b" })
    assert.is_nil(from.results.a)
    assert.are.equal("c", from.results.c.output)
  end)

  it("plans without running", function()
    local ran = false
    local wf = workflow "w" {
      step "a" { run = function() ran = true end },
      step "b" { run = function() ran = true end },
      step "c" { needs = { "a", "b" }, run = function() ran = true end },
    }
    assert.are.equal("workflow w: 2 groups\n  1. a, b\n  2. c", workflow.plan(wf))
    assert.is_false(ran)
  end)

  it("resumes from a journal, reusing steps that succeeded", function()
    local path = os.tmpname()
    local effects = { fetch = 0, broken = 0 }
    local fail = true
    local wf = workflow "w" {
      step "fetch" { run = function() effects.fetch = effects.fetch + 1; return { 1, 2 } end },
      step "process" { needs = { "fetch" }, run = function(ctx)
        effects.broken = effects.broken + 1
        if fail then error("disk full", 0) end
        return #ctx.steps.fetch.output
      end },
    }
    assert.is_false(run(wf, { journal = path }).ok)
    fail = false
    local second = run(wf, { journal = path })
    assert.is_true(second.ok)
    assert.are.equal("reused", second.results.fetch.status)
    assert.are.equal(2, second.results.process.output)
    assert.are.same({ fetch = 1, broken = 2 }, effects)
    os.remove(path)
  end)

  it("keeps the journal entries of steps whose names differ only in their bytes apart", function()
    local path = os.tmpname()
    local composed, decomposed = "\xC3\xA9", "e\xCC\x81"  -- é, and e with a combining accent
    local wf = workflow "w" {
      step(composed) { run = function() return "composed output" end },
      step(decomposed) { run = function() return "decomposed output" end },
    }
    local first = run(wf, { journal = path })
    assert.are.equal("succeeded", first.results[decomposed].status)
    assert.are.equal("decomposed output", first.results[decomposed].output)
    local second = run(wf, { journal = path })
    assert.are.equal("reused", second.results[composed].status)
    assert.are.equal("composed output", second.results[composed].output)
    assert.are.equal("decomposed output", second.results[decomposed].output)
    os.remove(path)
  end)

  it("gives a step's action a context of its own fields that runs actions and tells the time", function()
    lunar.action("spec.double", function(_, n) return n * 2 end)
    local seen
    local outcome = run(workflow "ctx" {
      step "a" {
        with = function() return 21 end,
        run = function(ctx, n)
          local own = {}
          for key in pairs(ctx) do own[#own + 1] = key end
          table.sort(own)
          seen = { own = table.concat(own, " "), now = ctx.now(), chain = table.concat(ctx.chain, ">") }
          ctx:event("spec.seen", { n = n })
          return ctx:run("spec.double", n)
        end,
      },
    })
    assert.is_true(outcome.ok)
    assert.are.equal(42, outcome.results.a.output)
    -- run, event and now come from the metatable every context shares.
    assert.are.equal("action attempt chain step steps workflow", seen.own)
    assert.are.equal("number", type(seen.now))
    assert.are.equal("workflow ctx/a", seen.chain)
  end)

  it("draws the step graph", function()
    local wf = workflow "w" { step "a" { uses = "launches.upcoming" }, step "b" { needs = { "a" }, run = print } }
    assert.matches("flowchart LR", workflow.graph(wf))
    assert.matches("  a %-%-> b", workflow.graph(wf))
    assert.matches('"a" %-> "b";', workflow.graph(wf, "dot"))
    assert.is_true(graphviz_reads(workflow.graph(wf, "dot")))
  end)

  it("draws steps whose names slug alike apart, and refuses unknown formats", function()
    local wf = workflow "w" {
      step "a-b" { run = print }, step "a_b" { needs = { "a-b" }, run = print },
      step "a b" { needs = { "a_b" }, run = print }, step "end" { needs = { "a b" }, run = print },
    }
    local mermaid = workflow.graph(wf)
    local edges = {}
    for from, to in mermaid:gmatch("\n  (%S+) %-%-> (%S+)") do
      assert.are_not.equal(from, to)
      edges[#edges + 1] = from .. " " .. to
    end
    assert.are.equal(3, #edges)
    assert.is_nil(mermaid:find("\n  end[", 1, true), "end is Mermaid's keyword")
    local dot = workflow.graph(wf, "dot")
    assert.is_true(graphviz_reads(dot))
    assert.error_matches(function() workflow.graph(wf, "svg") end,
      "bad argument #2 to 'graph' %(format must be 'mermaid' or 'dot', got 'svg'%)")
    assert.error_matches(function() workflow.graph(42) end,
      "bad argument #1 to 'graph' %(workflow expected, got number%)")
  end)

  describe("definition errors", function()
    it("refuse a field added to a step after its definition, where it is added", function()
      -- Else `if`, `map` or `timeout` set later would run unchecked, or be
      -- ignored by the runner, which reads a usual step's own fields only.
      for _, s in ipairs { step "plain" { run = print }, step "more" { run = print, timeout = 5 },
        workflow.sleep "nap" { seconds = 1 } } do
        local name = s.name
        local ok, message = pcall(function() s["if"] = function() return false end end)
        assert.is_false(ok)
        assert.are.equal(("spec/workflow_spec.lua:%d: step \"%s\": field 'if' cannot be added to a defined step "
          .. "(give it in step \"%s\" { ... })"):format(debug.getinfo(1, "l").currentline - 3, name, name), message)
        assert.is_nil(rawget(s, "if"))
      end
      -- The workflow made of them still runs them as defined.
      local ran = {}
      local wf = workflow "w" { step "a" { run = function() ran[#ran + 1] = "a" end } }
      assert.is_true(workflow.execute(wf, { quiet = true }).ok)
      assert.are.same({ "a" }, ran)
    end)

    it("name the step and the field", function()
      assert.error_matches(function() workflow "w" { step "notify" { needs = { "nxt" }, run = print } } end,
        '^step "notify": needs unknown step "nxt"$')
      assert.error_matches(function() workflow "w" { step "a" { run = print }, step "a" { run = print } } end,
        'workflow "w": duplicate step "a"$')
      assert.error_matches(function()
        workflow "w" { step "a" { needs = { "b" }, run = print }, step "b" { needs = { "a" }, run = print } }
      end, 'workflow "w": steps form a cycle: a → b → a$')
      -- A need declared later is ordered, and a cycle behind earlier steps is found.
      local later = workflow "w" { step "a" { needs = "b", run = print }, step "b" { run = print } }
      assert.are.equal("workflow w: 2 groups\n  1. b\n  2. a", workflow.plan(later))
      assert.error_matches(function()
        workflow "w" { step "x" { run = print }, step "a" { needs = { "x", "b" }, run = print },
          step "b" { needs = { "a" }, run = print } }
      end, 'steps form a cycle: a → b → a$')
      -- A list of one name is checked as any list is.
      assert.has_error(function() step "x" { run = print, needs = { 5 } } end,
        "step \"x\": needs[1] must be a step name, got number")
      assert.has_error(function() step "x" { run = print, needs = { "a", extra = true } } end,
        "step \"x\": 'needs' must be a list of step names, got a table with other keys")
      assert.has_error(function() step "x" { run = print, uses = "y" } end,
        "step \"x\": needs exactly one of 'uses' (an action name) or 'run' (a function)")
      assert.has_error(function() step "x" { run = print, retry = { attempts = 0 } } end,
        "step \"x\": 'retry' must be { attempts = N (≥ 1), backoff = seconds }")
      assert.has_error(function() step "x" { run = print, timeout = -1 } end,
        "step \"x\": 'timeout' must be a positive number of seconds, got -1")
      assert.has_error(function() step "x" { run = print, timeout = 0 / 0 } end,
        "step \"x\": 'timeout' must be a positive number of seconds, got " .. tostring(0 / 0))
      assert.has_error(function() step "x" { run = print, retry = { attempts = 2, backoff = 0 / 0 } } end,
        "step \"x\": 'retry.backoff' must be a non-negative number of seconds, got " .. tostring(0 / 0))
      assert.has_error(function() step "x" { run = print, colour = "red" } end, "step \"x\": unknown field 'colour'")
      assert.has_error(function() step "x" { uses = 42 } end, "step \"x\": 'uses' must be an action name, got number")
      assert.has_error(function() workflow "w" { 42 } end,
        'workflow "w": item 1 is not a step (use step "name" { ... })')
    end)

    it("refuse nonsense in every field, at the caller's line", function()
      local function refuses(fields, message)
        local ok, err = pcall(function() local s = step "notify" (fields); return s end)
        assert.is_false(ok)
        assert.matches("^[^:]*workflow_spec%.lua:%d+: ", err)
        assert.are.equal('step "notify": ' .. message, (err:gsub("^[^:]*:%d+: ", "")))
      end
      refuses({ run = print, continue_on_error = "yes" }, "'continue_on_error' must be true or false, got string")
      refuses({ run = print, services = "http" }, "'services' must be a list of service names, got string")
      refuses({ run = print, services = { "nosuchservice" } },
        "services[1] names an unknown service 'nosuchservice' (services are "
          .. table.concat(require("lunar.actions").service_names(), ", ") .. ")")
      refuses({ run = print, services = { http = true } },
        "'services' must be a list of service names, got a table with other keys")
      refuses({ uses = "report.print", services = { "log" } },
        "'services' is for 'run' steps (an action declares the services it uses)")
      refuses({ uses = "" }, "'uses' must be an action name, got an empty string")
      refuses({ run = print, needs = { after = "a" } },
        "'needs' must be a list of step names, got a table with other keys")
      refuses({ run = print, needs = { "a", 2 } }, "needs[2] must be a step name, got number")
      refuses({ run = print, retry = { attempts = 2, backof = 1 } },
        "'retry' has an unknown field 'backof' (fields are attempts, backoff)")
      refuses({ run = print, ["if"] = print, when = print }, "give 'if' or 'when', not both")
      refuses({ run = print, when = true }, "'when' must be a function, got boolean")
      refuses({ run = print, queue = 7 }, "'queue' must be a queue name, got number")
      refuses({ run = print, description = {} }, "'description' must be a string, got table")
      refuses({ run = print, [1] = "x" }, "unknown field [1]")
      -- What is right passes: a known service, a list of needs, a condition.
      local ok = step "fine" { run = print, services = { "log", "store" }, needs = { "a" }, continue_on_error = false,
        when = function() return true end, description = "fine" }
      assert.are.equal("fine", ok.name)
    end)

    it("refuse a steps table that is not a list, at the workflow's line", function()
      local ok, err = pcall(function() local wf = workflow "w" { step "a" { run = print }, extra = 1 }; return wf end)
      assert.is_false(ok)
      assert.matches('^[^:]*workflow_spec%.lua:%d+: workflow "w": \'extra\' is not a list position '
        .. '%(give the steps as a list%)$', err)
      assert.has_error(function()
        local wf = workflow "w" { step "a" { run = print }, nil, step "b" { run = print } }
        return wf
      end)
      assert.has_error(function() local wf = workflow "" { }; return wf end,
        "bad argument #1 to 'workflow' (workflow name expected, got an empty string)")
    end)

    it("are made alike whether their fields are the usual ones or not", function()
      local function body() end
      local with = { x = 1 }
      local names = { "a", "b" }
      -- `description` (not a usual field) takes the checked path; the rest is the same.
      local quick = { step "s" { run = body, needs = "a" }, step "s" { uses = "report.print", with = with },
        step "s" { run = body, needs = names }, step "s" { run = body, needs = {} } }
      local checked = {
        step "s" { run = body, needs = "a", description = "d" },
        step "s" { uses = "report.print", with = with, description = "d" },
        step "s" { run = body, needs = names, description = "d" },
        step "s" { run = body, needs = {}, description = "d" },
      }
      for i = 1, #quick do
        local q, c = quick[i], checked[i]
        assert.are.equal(getmetatable(c), getmetatable(q))
        for _, field in ipairs { "name", "src", "run", "uses", "with", "index" } do
          assert.are.equal(c[field], q[field])
        end
        assert.matches("workflow_spec%.lua$", q.src)
        assert.is_true(math.type(q.line) == "integer" and q.line > 0)
        assert.are.same(c.needs, q.needs)
      end
      -- A name is made a list of one; a list is the user's own.
      assert.are.same({ "a" }, quick[1].needs)
      assert.are.equal(names, quick[3].needs)
      -- No needs is the one shared, frozen empty list, on either path.
      local none, other = step "n" { run = body }, step "n" { run = body, description = "d" }
      assert.are.equal(none.needs, other.needs)
      assert.has_error(function() none.needs[1] = "x" end, "a step's needs cannot be changed")
      -- A spec with a metatable, or needs with one, is read as Lua reads it.
      local inherited = step "m" (setmetatable({ needs = "a" }, { __index = { run = body } }))
      assert.are.equal(body, inherited.run)
      assert.are.same({ "a" }, inherited.needs)
      local listed = step "m" { run = body, needs = setmetatable({ "a" }, {}) }
      assert.are.same({ "a" }, listed.needs)
    end)

    it("refuse a bad name, spec or list of needs, at the definition's line", function()
      local function refuses(define, message)
        local line = debug.getinfo(2, "l").currentline
        local ok, err = pcall(define)
        assert.is_false(ok)
        assert.are.equal(("%s:%d: %s"):format(debug.getinfo(1, "S").short_src, line, message), err)
      end
      refuses(function() return step "x" "run" end, 'step "x": expected a table of fields, got string')
      refuses(function() return step "x" () end, 'step "x": expected a table of fields, got nil')
      refuses(function() return step(42) end, "bad argument #1 to 'step' (step name expected, got number)")
      refuses(function() return step "" end, "bad argument #1 to 'step' (step name expected, got an empty string)")
      refuses(function() return step "x" { run = print, needs = { "a", nil, "b" } } end,
        "step \"x\": 'needs' must be a list of step names, got a table with other keys")
      refuses(function() return step "x" { run = print, needs = { [0] = "a" } } end,
        "step \"x\": 'needs' must be a list of step names, got a table with other keys")
      refuses(function() return step "x" { run = print, needs = { "a", true } } end,
        "step \"x\": needs[2] must be a step name, got boolean")
      refuses(function() return step "x" { run = "print" } end, "step \"x\": 'run' must be a function, got string")
      refuses(function() return step "x" { run = print, with = 1 } end,
        "step \"x\": 'with' must be a table or a function, got number")
      refuses(function() return step "x" {} end,
        "step \"x\": needs exactly one of 'uses' (an action name) or 'run' (a function)")
      -- A name's bytes are kept, a zero among them too.
      refuses(function() return step "a\0b" (1) end, 'step "a\0b": expected a table of fields, got number')
    end)

    it("refuse seconds that are NaN or infinite", function()
      for _, bad in ipairs { 0/0, 1/0, -1/0 } do
        assert.has_error(function() step "x" { run = print, timeout = bad } end,
          ("step \"x\": 'timeout' must be a positive number of seconds, got %s"):format(tostring(bad)))
        assert.has_error(function() step "x" { run = print, retry = { attempts = 2, backoff = bad } } end,
          ("step \"x\": 'retry.backoff' must be a non-negative number of seconds, got %s"):format(tostring(bad)))
      end
    end)
  end)

  describe("run options", function()
    local wf = workflow "w" { step "a" { run = function() return 1 end } }

    it("take a positive whole number of jobs", function()
      for _, bad in ipairs { -1, 0, 0/0, 1/0, 2.5, math.mininteger, "4" } do
        local shown = type(bad) == "number" and tostring(bad) or type(bad)
        assert.has_error(function() workflow.execute(wf, { jobs = bad, quiet = true }) end,
          ("bad argument #2 to 'execute' (option 'jobs' must be a positive integer, got %s)"):format(shown))
        assert.has_error(function() workflow.run(wf, { jobs = bad, quiet = true }) end,
          ("bad argument #2 to 'run' (option 'jobs' must be a positive integer, got %s)"):format(shown))
      end
      assert.is_true(workflow.execute(wf, { jobs = 2.0, quiet = true }).ok)
    end)

    it("are only the options there are", function()
      local options = "(options are dry_run, from, jobs, journal, only, progress, quiet)"
      assert.has_error(function() workflow.run(wf, { quiet = true, job = 2 }) end,
        "bad argument #2 to 'run' (unknown option 'job' " .. options .. ")")
      assert.has_error(function() workflow.execute(wf, { quiet = true, [1] = "x", zz = 1 }) end,
        "bad argument #2 to 'execute' (unknown option 'zz' " .. options .. ")")
    end)

    it("name the caller's line, not the module's", function()
      local ok, err = pcall(function() workflow.run(wf, { journal = 42, quiet = true }) end)
      assert.is_false(ok)
      assert.matches("^[^:]*workflow_spec%.lua:%d+: bad argument #2 to 'run' "
        .. "%(option 'journal' must be a string, got number%)$", err)
      assert.has_error(function() workflow.execute("w") end,
        "bad argument #1 to 'execute' (workflow expected, got string)")
    end)
  end)
end)
