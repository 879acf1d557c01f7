-- lunar test (SpecRunner.swift): the main chunk run for each spec file:
-- hands the file (`...`) to the DSL's runner (SpecPlugin.runnerKey) with
-- the options; the results reach the runner through the plugin's log.
local runner = debug.getregistry()["lunar.busted.runner"] runner.run_file(..., runner.options)
