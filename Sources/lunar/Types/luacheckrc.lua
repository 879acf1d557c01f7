-- Written by `lunar types`: luacheck's standard for Lunar. `lunar types` rewrites this
-- file; to keep your own settings, delete this first line (Lunar then leaves it alone).
--
-- The `lunar` global and its modules are read-only: luacheck reports a field Lunar does
-- not have (`lunar.sleeep`) and a write to one of its fields. Spec files (`*_spec.lua`,
-- as `lunar test` finds them, and everything under `spec/`) also see busted's globals.
stds.lunar = {
  read_globals = {
    lunar = {
      fields = {
        version = {},
        cancelled = { other_fields = true },
        spawn = {},
        sleep = {},
        now = {},
        cwd = {},
        await_all = {},
        await_any = {},
        action = {},
        run = {},
        run_stubbed = {},
        queue = { fields = { new = {}, job = {} } },
        machine = { fields = { new = {}, swift = {}, interpreter = {}, graph = {}, test = {} } },
        actions = {
          fields = {
            limit = {}, service = {}, is_service = {}, service_names = {}, define = {}, run = {},
            run_stubbed = {}, list = {}, set_limit = {},
          },
        },
        workflow = {
          fields = { step = {}, sleep = {}, wait = {}, is = {}, plan = {}, graph = {}, execute = {}, run = {},
            _serve = {}, _run = {} },
        },
        trace = { fields = { events = {}, summaries = {}, clear = {}, stop = {}, start = {}, recording = {} } },
        launches = {
          fields = {
            sources = { other_fields = true }, upcoming = {}, next = {}, snapshot = {}, remind = {},
            reminders = {}, configure = {},
          },
        },
      },
    },
  },
}

std = "lua54+lunar"
-- The annotations beside this file describe the API; they are not code to lint.
exclude_files = { ".lunar/types/**" }
files["**/*_spec.lua"] = { std = "+busted" }
files["spec/**/*.lua"] = { std = "+busted" }
