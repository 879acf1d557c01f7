-- Actor state machines and command interpreters (`lunar.machine`).
local machine = require "lunar.machine"
local trace = require "lunar.trace"

local function list_screen(extra)
  local definition = {
    name = "list", initial = "initial", context = { page = 20 },
    states = {
      initial = { on = { reload = function(ctx) return "loading", { { "load", ctx.page } } end } },
      loading = { on = { loaded = function(_ctx, msg) return "presenting", { { "present", msg.items } } end } },
      presenting = { on = { reload = "refreshing" },
                     enter = function() return { { "after", 60, { "expire" } } } end },
      refreshing = { on = { loaded = function(_ctx, msg) return "presenting", { { "present", msg.items } } end,
                            expire = function() return nil, { { "log", "expired while refreshing" } } end } },
    },
  }
  for k, v in pairs(extra or {}) do definition[k] = v end
  return machine.new(definition)
end

local graphviz_reads = require "spec.support.graphviz"

-- The machine events since the test began, of `kinds` if given, of the
-- machine called `name` if given (machines made while a describe block is
-- read start when the loop first runs, in whichever test that is).
local function machine_events(kinds, name)
  local lines = {}
  for _, e in ipairs(trace.events("machine.")) do
    if (not kinds or kinds[e.kind]) and (not name or e.machine == name) then
      local detail = e.from and (e.from .. ">" .. e.to) or e.message or e.command or e.state or ""
      lines[#lines + 1] = e.kind:sub(9) .. " " .. detail
    end
  end
  return lines
end

describe("lunar.machine", function()
  describe("the pure step", function()
    local list = list_screen()

    it("reload from initial loads the first page", function()
      local state, commands, handled = list:step("reload")
      assert.are.equal("loading", state)
      assert.are.same({ { "load", 20 } }, commands)
      assert.is_true(handled)
    end)

    it("loaded while loading presents and starts the expiry timer", function()
      local state, commands = list:step({ "loaded", items = { "a" } }, "loading")
      assert.are.equal("presenting", state)
      assert.are.same({ { "present", { "a" } }, { "after", 60, { "expire" } } }, commands)
    end)

    it("reload while presenting refreshes without commands", function()
      assert.are.same({ "refreshing", {}, true }, { list:step("reload", "presenting") })
    end)

    it("a second reload while loading loads once", function()
      local state, commands, handled = list:step("reload", "loading")
      assert.are.same({ "loading", {}, false }, { state, commands, handled })
    end)

    it("never changes the machine", function()
      list:step("reload")
      assert.are.equal("initial", list.state)
    end)

    it("uses each state's handlers as they were when the machine was made", function()
      local definition = { name = "made", initial = "a", states = { a = { on = { go = "b" } }, b = {} } }
      local m = machine.new(definition)
      definition.states.a.on = { go = "a" }
      definition.states.b.enter = function() return { { "log", "late" } } end
      local state, commands = m:step("go")
      assert.are.same({ "b", {} }, { state, commands })
    end)

    it("finds states and messages whatever their length", function()
      local long = string.rep("s", 60)
      local m = machine.new { name = "long", initial = "a", states = {
        a = { on = { [long] = function() return long, { { long } } end } },
        [long] = {},
      } }
      local state, commands = m:step(long)
      assert.are.same({ long, { { long } } }, { state, commands })
    end)
  end)

  describe("driven by interpreters", function()
    it("takes feedback through the mailbox, in order", function()
      local list = list_screen { name = "in order" }
      local shown = {}
      machine.interpreter("load", function(cmd, send)
        lunar.sleep(1)
        send { "loaded", items = { "page of " .. cmd[2] } }
      end)
      machine.interpreter("present", function(cmd) shown[#shown + 1] = cmd[2][1] end)
      list:send("reload")
      list:settle()
      assert.are.equal("presenting", list.state)
      assert.are.same({ "page of 20" }, shown)
      assert.are.same({
        "received reload", "started initial", "handled reload", "state initial>loading", "command load",
        "received loaded", "interpreted load", "handled loaded", "state loading>presenting",
        "command present", "command after", "interpreted present", "interpreted after",
      }, machine_events(nil, "in order"))
    end)

    it("gives each interpreter its own copy of the command, from the last registration", function()
      local SAVE = { "save", { count = 1 } }
      local m = machine.new { name = "copies", initial = "a", states = {
        a = { on = { go = function() return nil, { SAVE } end } },
      } }
      local first, seen = 0, {}
      machine.interpreter("save", function() first = first + 1 end)
      machine.interpreter("save", function(cmd)
        seen[#seen + 1] = cmd[2].count
        cmd[2].count = 99
        cmd[1] = "changed"
      end)
      collectgarbage()
      m:send("go")
      m:send("go")
      m:settle()
      assert.are.equal(0, first)
      assert.are.same({ 1, 1 }, seen)
      assert.are.same({ "save", { count = 1 } }, SAVE)
    end)

    it("carries out the built-in log and emit commands into the trace", function()
      local m = machine.new { name = "builtins", initial = "a", states = {
        a = { on = { go = function()
          return nil, { { "log", "hello", 3 }, { "emit", "builtins.done", { count = 2, label = "x" } } }
        end } },
      } }
      m:send("go")
      m:settle()
      local logged = trace.events("machine.log")
      assert.are.equal("hello 3", logged[#logged].text)
      local emitted = trace.events("builtins.done")
      assert.are.equal(1, #emitted)
      assert.are.equal("builtins", emitted[1].machine)
      assert.are.equal(2, emitted[1].count)
      assert.are.equal("x", emitted[1].label)
    end)

    it("handles feedback sent synchronously before later messages, never re-entrantly", function()
      local log = {}
      local m = machine.new {
        name = "echo", initial = "idle",
        states = { idle = { on = {
          ping = function() log[#log + 1] = "ping"; return nil, { { "twice" } } end,
          pong = function() log[#log + 1] = "pong"; return nil, {} end,
          outside = function() log[#log + 1] = "outside"; return nil, {} end,
        } } },
      }
      machine.interpreter("twice", function(_cmd, send)
        send("pong")
        send("pong")
        log[#log + 1] = "interpreter done"
      end)
      m:send("ping")
      m:send("outside")
      m:settle()
      assert.are.same({ "ping", "interpreter done", "outside", "pong", "pong" }, log)
    end)

    it("re-enters the current state when a handler names it, so its timers start again", function()
      local function watchdog(poke)
        local start, expired = lunar.now(), nil
        machine.interpreter("expired", function() expired = math.floor((lunar.now() - start) * 1000 + 0.5) / 1000 end)
        local m = machine.new {
          name = "watchdog", initial = "armed",
          states = {
            armed = { enter = function() return { { "after", 0.1, { "expire" } } } end,
                      on = { poke = poke, expire = "fired" } },
            fired = { enter = function() return { { "expired" } } end },
          },
        }
        for _ = 1, 5 do
          lunar.sleep(0.05)
          m:send("poke")
        end
        m:settle()
        lunar.sleep(1)
        m:settle()
        return expired
      end
      assert.are.equal(0.35, watchdog("armed"), "each poke restarts the timer: 0.1 s after the last, at 0.25 s")
      assert.are.equal(0.35, watchdog(function() return "armed" end))
      assert.are.equal(0.1, watchdog(function() return nil, {} end), "returning no state stays: the timer runs on")
    end)

    it("runs exit, then enter, on a transition to the current state", function()
      local log = {}
      local m = machine.new {
        name = "loop", initial = "s",
        states = { s = {
          enter = function() log[#log + 1] = "enter" return {} end,
          exit = function() log[#log + 1] = "exit" return {} end,
          on = { again = "s", stay = function() log[#log + 1] = "stay" return nil end },
        } },
      }
      m:send("again")
      m:send("stay")
      m:settle()
      assert.are.same({ "enter", "exit", "enter", "stay" }, log)
    end)

    it("lets one machine's interpreter wait without holding the others", function()
      local start, woke = lunar.now(), {}
      machine.interpreter("nap", function(cmd)
        lunar.sleep(cmd[2])
        woke[#woke + 1] = { cmd[3], math.floor((lunar.now() - start) * 1000 + 0.5) / 1000 }
      end)
      local function napper(name, seconds)
        return machine.new {
          name = name, initial = "idle",
          states = { idle = { on = { go = function() return nil, { { "nap", seconds, name } } end } } },
        }
      end
      local fast, slow = napper("fast", 0.1), napper("slow", 0.5)
      fast:send("go")
      slow:send("go")
      fast:settle()
      assert.are.same({ { "fast", 0.1 } }, woke)
      slow:settle()
      assert.are.same({ { "fast", 0.1 }, { "slow", 0.5 } }, woke)
    end)

    it("runs a machine's commands in order, each to completion, while its interpreter waits", function()
      local log = {}
      machine.interpreter("step", function(cmd)
        log[#log + 1] = cmd[2] .. " start"
        lunar.sleep(cmd[3])
        log[#log + 1] = cmd[2] .. " end"
      end)
      local m = machine.new {
        name = "ordered", initial = "idle",
        states = { idle = { on = {
          go = function(_ctx, msg)
            return nil, { { "step", msg.name .. "1", 0.2 }, { "step", msg.name .. "2", 0.1 } }
          end,
        } } },
      }
      m:send { "go", name = "a" }
      m:send { "go", name = "b" }
      assert.are.equal("idle", m.state)
      m:settle()
      assert.are.same({ "a1 start", "a1 end", "a2 start", "a2 end", "b1 start", "b1 end", "b2 start", "b2 end" }, log)
    end)

    it("turns an interpreter's error into command_failed, waiting or not", function()
      machine.interpreter("broken", function(cmd)
        if cmd[2] then lunar.sleep(cmd[2]) end
        error("no disk", 0)
      end)
      local failures = {}
      local m = machine.new {
        name = "failing", initial = "idle",
        states = { idle = { on = {
          go = function(_ctx, msg) return nil, { { "broken", msg.wait } } end,
          command_failed = function(_ctx, msg) failures[#failures + 1] = msg.error; return nil, {} end,
        } } },
      }
      m:send { "go" }
      m:send { "go", wait = 0.1 }
      m:settle()
      assert.are.same({ "no disk", "no disk" }, failures)
    end)

    it("refuses a timer that would never fire", function()
      for _, seconds in ipairs { 1/0, 0/0, -1 } do
        local m = machine.new {
          name = "never", initial = "idle",
          states = { idle = { on = { start = function() return nil, { { "after", seconds, { "ring" } } } end } } },
        }
        m:send("start")
        assert.error_matches(function() m:settle() end,
          "command { \"after\", [^,]+, { \"ring\" } } must be { \"after\", seconds, message } "
            .. "%(seconds: a non%-negative finite number%)")
      end
    end)

    it("runs timers on the virtual clock and cancels them on leaving the state", function()
      local function timer(name)
        return machine.new {
          name = name, initial = "waiting",
          states = {
            waiting = { enter = function() return { { "after", 30, { "timeout" } } } end,
                        on = { timeout = "expired", done = "finished" } },
            expired = {}, finished = { on = { timeout = "expired" } },
          },
        }
      end
      -- Entering the initial state starts the timer: nothing is sent.
      local started = lunar.now()
      local n = timer("timer")
      n:settle()
      lunar.sleep(31)
      assert.are.equal("expired", n.state)
      assert.are.equal(31, lunar.now() - started)

      local o = timer("timer2")
      o:send("done")
      o:settle()
      lunar.sleep(60)
      assert.are.equal("finished", o.state)  -- the timer died with 'waiting'
    end)
  end)

  describe("starting", function()
    it("enters the initial state, after the call that made it and before the first message", function()
      local log = {}
      local m = machine.new { name = "starter", initial = "a", states = {
        a = { enter = function() log[#log + 1] = "enter a"; return { { "note", "entered a" } } end,
              on = { go = function() return "b", { { "note", "go" } } end } },
        b = {},
      } }
      log[#log + 1] = "made"
      m:send("go")
      -- Registered after the machine was made: the start has not run yet.
      machine.interpreter("note", function(cmd) log[#log + 1] = cmd[2] end)
      m:settle()
      assert.are.same({ "made", "enter a", "entered a", "go" }, log)
      assert.are.equal("b", m.state)
      assert.are.same({ "started a" }, machine_events({ ["machine.started"] = true }, "starter"))
    end)

    it("leaves the pure step alone: it never enters the initial state", function()
      local entered = 0
      local m = machine.new { name = "pure", initial = "a", states = {
        a = {
          enter = function() entered = entered + 1; return { { "emit", "pure.entered" } } end,
          on = { stay = function() end },
        },
      } }
      assert.are.same({ "a", {}, true }, { m:step("stay") })
      m:settle()
      assert.are.same({ "a", {}, true }, { m:step("stay") })
      assert.are.equal(1, entered)
    end)

    it("reports a failing initial enter from settle", function()
      local m = machine.new { name = "broken", initial = "a", states = {
        a = { enter = function() error("no power", 0) end },
      } }
      assert.has_error(function() m:settle() end, "machine 'broken': no power")
    end)
  end)

  describe("failures", function()
    it("turns a failing interpreter into command_failed", function()
      local got
      local m = machine.new {
        name = "f", initial = "a",
        states = { a = { on = {
          go = function() return nil, { { "explode" } } end,
          command_failed = function(_ctx, msg) got = msg.command[1] .. ": " .. msg.error end,
        } } },
      }
      machine.interpreter("explode", function() error("kaboom", 0) end)
      m:send("go")
      m:settle()
      assert.are.equal("explode: kaboom", got)
    end)

    it("raises an unhandled command_failed from settle", function()
      local m = machine.new { name = "g", initial = "a",
        states = { a = { on = { go = function() return nil, { { "explode" } } end } } } }
      machine.interpreter("explode", function() error("kaboom", 0) end)
      m:send("go")
      assert.error_matches(function() m:settle() end, "machine 'g': command { \"explode\" } failed: kaboom")
    end)

    it("drops unhandled messages, or raises them in strict mode", function()
      local loose = machine.new { name = "loose", initial = "a", states = { a = {} } }
      loose:send("nothing")
      loose:settle()
      local strict = machine.new { name = "strict", initial = "a", strict = true, states = { a = {} } }
      strict:send("nothing")
      assert.has_error(function() strict:settle() end, "machine 'strict': state 'a' does not handle message 'nothing'")
      assert.are.same({ "dropped nothing", "dropped nothing" }, machine_events { ["machine.dropped"] = true })
    end)

    it("names an unknown command and its machine", function()
      local m = machine.new { name = "u", initial = "a",
        states = { a = { on = { go = function() return nil, { { "teleport" } } end } } } }
      m:send("go")
      assert.has_error(function() m:settle() end, "machine 'u': unknown command 'teleport' (no interpreter registered)")
      -- Registered later, the same command is found from then on.
      local carried = 0
      machine.interpreter("teleport", function() carried = carried + 1 end)
      m:send("go")
      m:settle()
      assert.equal(1, carried)
    end)

    it("refuses to send to a stopped machine", function()
      local m = list_screen()
      m:stop()
      assert.error_matches(function() m:send("reload") end, "machine 'list' is stopped")
      assert.is_true(m.stopped)
    end)

    it("refuses functions in messages with their path", function()
      local m = list_screen()
      assert.error_matches(function() m:send({ "loaded", done = print }) end,
        "msg.done: a function cannot cross into Swift")
    end)

    it("refuses functions in command payloads with their path", function()
      local m = machine.new { name = "p", initial = "a", states = {
        a = { on = { go = function() return nil, { { "log", "x", { done = print } } } end } },
      } }
      local ok, err = pcall(m.step, m, "go")
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("commands[1][3].done: a function cannot cross into Swift", 1, true))
    end)

    it("rejects a command without a name, naming its position", function()
      local m = machine.new { name = "p", initial = "a", states = {
        a = { on = { go = function() return nil, { { "log" }, { 42 } } end } },
      } }
      assert.error_matches(function() m:step("go") end,
        "machine 'p': state 'a': handler 'go': commands%[2%] must be a table whose first element is the command's name")
    end)

    it("rejects a command list that is not an array, naming what it got", function()
      local m = machine.new { name = "p", initial = "a", states = {
        a = { on = {
          keyed = function() return nil, { first = { "log" } } end,
          text = function() return nil, "log" end,
          holes = function() return nil, { { "log" }, nil, { "log" } } end,
        } },
      } }
      for message, got in pairs { keyed = "table", text = "string", holes = "table" } do
        assert.error_matches(function() m:step(message) end,
          "machine 'p': state 'a': handler '" .. message .. "': commands must be an array of commands, got " .. got,
          1, true)
      end
    end)

    it("keeps keyed fields and nested payloads of commands", function()
      local m = machine.new { name = "p", initial = "a", states = {
        a = { on = { go = function() return "a", { { "load", 2, { page = 3 }, limit = 10 } } end } },
      } }
      local _, commands = m:step("go")
      assert.same({ { "load", 2, { page = 3 }, limit = 10 } }, commands)
    end)

    it("keeps every field of a command with a hole, whatever its length says", function()
      -- #cmd can be 3 here, and cmd has three entries: still not 1, 2, 3.
      local cmd = { "load", nil, 5, nil, x = 1 }
      local m = machine.new { name = "p", initial = "a", states = {
        a = { on = { go = function() return nil, { cmd } end } },
      } }
      local _, commands = m:step("go")
      assert.are.equal("load", commands[1][1])
      assert.is_nil(commands[1][2])
      assert.are.equal(5, commands[1][3])
      assert.are.equal(1, commands[1].x)
    end)

    it("rejects bad definitions at definition time, naming the state", function()
      assert.has_error(function() machine.new { name = "x", initial = "nowhere", states = { a = {} } } end,
        "machine 'x': unknown initial state 'nowhere'")
      assert.has_error(function() machine.new { name = "x", initial = "a", states = { a = { on = { go = "b" } } } } end,
        "machine 'x': state 'a': transition 'go' goes to unknown state 'b'")
      assert.has_error(function() machine.new { name = "x", initial = "a", states = { a = { on = { go = 42 } } } } end,
        "machine 'x': state 'a': handler 'go' must be a function or a state name, got number")
      assert.has_error(function() machine.new { name = "x", initial = "a", states = { a = { enter = "soon" } } } end,
        "machine 'x': state 'a': 'enter' must be a function")
      assert.has_error(function() machine.new { initial = "a", states = {} } end,
        "machine definition: 'name' must be a string")
      assert.has_error(function() machine.new(42) end, "bad argument #1 to 'new' (table expected, got number)")
    end)

    it("rejects nonsense in every field of a definition, at the caller's line", function()
      local function refuses(definition, message)
        local ok, err = pcall(function() local m = machine.new(definition); return m end)
        assert.is_false(ok)
        assert.matches("^[^:]*machine_spec%.lua:%d+: ", err)
        assert.are.equal(message, (err:gsub("^[^:]*:%d+: ", "")))
      end
      local function define(fields)
        local definition = { name = "x", initial = "a", states = { a = {} } }
        for k, v in pairs(fields) do definition[k] = v end
        return definition
      end
      refuses(define { strict = "yes" }, "machine 'x': 'strict' must be true or false, got string")
      refuses(define { context = 5 }, "machine 'x': 'context' must be a table, got number")
      refuses(define { inital = "a" },
        "machine 'x': unknown field 'inital' (fields are name, initial, states, context, strict)")
      refuses(define { states = { a = { onn = {} } } },
        "machine 'x': state 'a': unknown field 'onn' (fields are on, enter, exit)")
      refuses(define { states = { a = { on = { [true] = "a" } } } },
        "machine 'x': state 'a': message names in 'on' must be strings, got boolean")
      refuses(define { states = { a = { on = { go = { run = print, target = { "a" } } } } } },
        "machine 'x': state 'a': handler 'go': unknown field 'target' (fields are run, targets)")
      refuses(define { states = { a = { on = { go = { run = print, targets = "a" } } } } },
        "machine 'x': state 'a': handler 'go': 'targets' must be a list of state names, got string")
      refuses(define { states = { a = { on = { go = { run = print, targets = { 1 } } } } } },
        "machine 'x': state 'a': handler 'go': targets[1] must be a state name, got number")
      local m = machine.new(define {
        strict = false, context = {}, states = { a = { on = { go = { run = print, targets = { "a" } } } } },
      })
      assert.are.equal("a", m.state)
    end)

    it("rejects a handler returning an unknown state", function()
      local m = machine.new { name = "r", initial = "a", states = { a = { on = { go = function() return "z" end } } } }
      assert.has_error(function() m:step("go") end, "machine 'r': state 'a': handler 'go' returned unknown state 'z'")
    end)

    it("keeps the context read-only", function()
      local m = machine.new { name = "ro", initial = "a", context = { n = 1 },
        states = { a = { on = { go = function(ctx) ctx.n = 2 end } } } }
      assert.error_matches(function() m:step("go") end, "the context is read%-only")
    end)
  end)
end)

describe("machine.test", function()
  local function loader()
    machine.interpreter("load", function(_cmd, send) send { "loaded", items = {} } end)
    return machine.new {
      name = "list", initial = "initial",
      states = {
        initial = { on = { reload = function() return "loading", { { "load" } } end } },
        loading = { on = { loaded = "presenting" } },
        presenting = { on = { reload = "loading" } },
      },
    }
  end

  it("passes when every feedback message is claimed", function()
    local store = machine.test(loader())
    assert.are.equal("presenting", store:send("reload"))
    store:receive("loaded")
    store:finish()
  end)

  it("fails on feedback nobody asserted", function()
    local store = machine.test(loader())
    store:send("reload")
    assert.has_error(function() store:finish() end,
      "machine 'list': the test finished, but these messages were received and not asserted: loaded")
  end)

  it("fails on a different message than expected", function()
    local store = machine.test(loader())
    store:send("reload")
    assert.error_matches(function() store:receive("failed") end, "expected to receive 'failed', but received 'loaded'")
  end)

  local function eager()
    machine.interpreter("load", function(_cmd, send) send { "loaded", items = {} } end)
    return machine.new {
      name = "eager", initial = "loading",
      states = {
        loading = { enter = function() return { { "load" } } end, on = { loaded = "presenting" } },
        presenting = { on = { reload = "loading" } },
      },
    }
  end

  it("claims the feedback to the initial state's enter before the first send", function()
    local store = machine.test(eager())
    store:receive("loaded")
    assert.are.equal("presenting", store:send("reload"))
    store:receive("loaded")
    store:finish()
  end)

  it("fails on feedback to the initial state's enter that nobody asserted", function()
    local store = machine.test(eager())
    assert.has_error(function() store:send("reload") end,
      "machine 'eager': sending reload, but these messages were received and not asserted: loaded")
  end)
end)

-- Names from Lua are bytes: a zero byte or invalid UTF-8 is part of the
-- name, and "\xC3\xA9" (é, one code point) and "e\xCC\x81" (e and a
-- combining accent) are two names, as they are two Lua strings.
describe("names are bytes", function()
  local composed, decomposed = "\xC3\xA9", "e\xCC\x81"

  it("keeps states with a zero byte or invalid UTF-8 apart and exact", function()
    local m = machine.new { name = "bytes\0", initial = "b\0c", states = {
      ["b\0c"] = { on = { next = "\xfe" } },
      ["\xfe"] = { on = { ["\xff"] = "b\0c", next = "b" } },
      b = {},  -- what "b\0c" would become, cut at its zero byte
    } }
    assert.are.equal("bytes\0", m.name)
    assert.are.equal("b\0c", m.state)
    m:send("next")
    m:settle()
    assert.are.equal("\xfe", m.state)
    m:send({ "\xff", why = "a table message named by invalid UTF-8" })
    m:settle()
    assert.are.equal("b\0c", m.state)
    assert.are.same({ "\xfe", {}, true }, { m:step("next") })
    assert.are.same({ "b", {}, true }, { m:step("next", "\xfe") })
  end)

  it("keeps canonically equivalent states apart, each with its transitions", function()
    local m = machine.new { name = "accents", initial = "start", states = {
      start = { on = { nfc = composed, nfd = decomposed } },
      [composed] = { on = { onward = "was composed" } },
      [decomposed] = { on = { onward = "was decomposed" } },
      ["was composed"] = {},
      ["was decomposed"] = {},
    } }
    m:send("nfd")
    m:settle()
    assert.are.equal(decomposed, m.state)
    m:send("onward")
    m:settle()
    assert.are.equal("was decomposed", m.state)
    assert.are.same({ composed, {}, true }, { m:step("nfc", "start") })
    assert.are.equal("was composed", (m:step("onward", composed)))
    assert.are.equal("was decomposed", (m:step("onward", decomposed)))
  end)

  it("runs the interpreter registered under a command's exact name", function()
    local ran = {}
    machine.interpreter(composed, function(cmd) ran[#ran + 1] = "composed " .. cmd[2] end)
    machine.interpreter(decomposed, function(cmd) ran[#ran + 1] = "decomposed " .. cmd[2] end)
    machine.interpreter("\xfe\xfd", function(cmd) ran[#ran + 1] = "invalid " .. cmd[2] end)
    local m = machine.new { name = "issuer", initial = "idle", states = {
      idle = { on = { go = function()
        return nil, { { composed, 1 }, { decomposed, 2 }, { "\xfe\xfd", 3 }, { composed, 4 } }
      end } },
    } }
    m:send("go")
    m:settle()
    assert.are.same({ "composed 1", "decomposed 2", "invalid 3", "composed 4" }, ran)
  end)

  it("draws such states apart without failing", function()
    local m = machine.new { name = "drawn", initial = "b\0c", states = {
      ["b\0c"] = { on = { go = "\xfe", nfc = composed, nfd = decomposed } },
      ["\xfe"] = {}, ["\xff"] = {}, [composed] = {}, [decomposed] = {},
    } }
    for _, format in ipairs { "mermaid", "dot" } do
      local drawing = machine.graph(m, format)
      assert.is_truthy(drawing:find(composed, 1, true))
      assert.is_truthy(drawing:find(decomposed, 1, true))
    end
    assert.is_true(graphviz_reads(machine.graph(m, "dot")))
    -- Each is declared with its own id and its name shown ("b\0c", "\254", "\255", é twice).
    local ids = {}
    for id in machine.graph(m):gmatch("state \"[^\n]*\" as ([^\n]+)") do ids[id] = true end
    local count = 0
    for _ in pairs(ids) do count = count + 1 end
    assert.are.equal(5, count)
  end)

  it("runs an action only under its own name, and keeps its store keys apart", function()
    local runs = {}
    lunar.action(composed, { uses = { "store" } }, function(ctx)
      runs[#runs + 1] = "composed"
      ctx.store:set(composed, "set by composed")
      return ctx.store:get(decomposed)
    end)
    assert.is_nil(lunar.run(composed))
    assert.error_matches(function() lunar.run(decomposed) end, "unknown action")
    assert.are.same({ "composed" }, runs)
  end)
end)
