-- lunar worker (DurableJobRunner.swift), before its first job: loading the
-- actions module makes it hand its job runner over to the host.
require('lunar.actions')
