-- lunar graph (ScriptRunner.swift) keeps standard output for the diagram:
-- the script it runs to find the machines prints nothing.
print = function() end; if io then io.write = function() return io.stdout end end
