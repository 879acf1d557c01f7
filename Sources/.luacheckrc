-- luacheck's settings for the Lua Lunar ships in its binary: every `.lua`
-- here is embedded by Package.swift (`.embedInCode`). scripts/test lints
-- them from this folder (`cd Sources && luacheck .`). They are not the
-- repository's .luacheckrc because that file must stay exactly the one
-- `lunar types` writes for users (TypesCommandTests checks it), and these
-- settings are about Lunar's own chunks, not a user's scripts.
--
-- Lunar's chunks are plain Lua 5.4. A module's chunk receives its module
-- table as `...` and requires what it uses; the one global they may read
-- is `lunar`, which Lunar defines in every runtime before any other module
-- loads (lunar.launches' action and the console's `.clock` use it as a
-- script would). The exceptions below each say why.
std = "lua54"
read_globals = { "lunar" }

local writable = { read_only = false }

-- --sandbox's chunk takes the unsafe parts of the standard library away
-- and puts its own loaders in their place: writing them is its job.
files["Lunar/Sandbox/sandbox.lua"] = {
  globals = { "io", "debug" },
  read_globals = {
    os = { fields = { execute = writable, remove = writable, rename = writable, tmpname = writable } },
    package = { fields = { loadlib = writable, searchpath = writable } },
  },
}

-- lunar graph's chunk silences the script's printing, so the diagram alone
-- reaches standard output.
files["Lunar/Runtime/inert.lua"] = {
  globals = { "print" },
  read_globals = { io = { fields = { write = writable } } },
}

-- busted puts its own os.exit in place for a spec file (a spec's os.exit
-- ends the file, not the runner), as busted does.
files["LunarTest/lua/busted.lua"] = { read_globals = { os = { fields = { exit = writable } } } }

-- luassert's API is methods of two singletons (`assert:register(...)`,
-- `say:set(...)`): called with `:`, they have a `self` they need not read.
files["LunarTest/lua/luassert.lua"] = { self = false }

-- The editor types `lunar types` writes are lua-language-server
-- annotations: each function is a stub whose parameters document the
-- real one (212), and each class a table that only carries annotations
-- (241). lunar.lua declares the `lunar` global the others annotate.
files["lunar/Types"] = { ignore = { "212", "241" } }
files["lunar/Types/lunar.lua"] = { globals = { "lunar" } }
-- luacheck's own configuration format: the standard luacheck has for it.
files["lunar/Types/luacheckrc.lua"] = { std = "+luacheckrc" }
