-- lunar test (SpecRunner.swift): what a runtime runs once, when it is set
-- up for the spec files: prepends --lpath and --cpath (nil when not given)
-- to the package paths, and keeps the options as a table in the DSL's
-- runner (SpecPlugin.runnerKey).
local lua_path, lua_cpath, options = ...
if lua_path then package.path = lua_path .. ';' .. package.path end
if lua_cpath then package.cpath = lua_cpath .. ';' .. package.cpath end
debug.getregistry()["lunar.busted.runner"].options = options
