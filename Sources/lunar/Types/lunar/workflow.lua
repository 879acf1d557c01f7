---@meta lunar.workflow
-- Written by `lunar types`: Lunar's Lua API for lua-language-server (the README's
-- "Lua API reference" documents it). `lunar types` rewrites this file.

---`require "lunar.workflow"`: workflows of named steps, each an action, with
---dependencies. `workflow "name" { step "a" {...}, ... }` defines one; a file that
---returns it runs it under `lunar run`.
---@class lunar.workflowlib
---@overload fun(name: string): fun(steps: lunar.workflow.step[]): lunar.workflow
local workflow = {}

---A step's status in a run.
---@alias lunar.workflow.step_status "succeeded"|"failed"|"skipped"|"reused"

---A defined workflow (checked: no cycles, no unknown or duplicate step).
---@class lunar.workflow
---@field name string
---@field steps lunar.workflow.step[] In declaration order.
---@field by_name table<string, lunar.workflow.step>

---The fields of `step "name" { ... }`: exactly one of `uses` and `run`.
---@class lunar.workflow.step_spec
---@field uses? string an action (`NAME.x` loads plugin `NAME` on first use)
---@field run? fun(ctx: lunar.workflow.run_context, input: any): any a Lua function, run as an action
---@field with? table|fun(ctx: lunar.workflow.context, item?: any): any the action's input (with `map`: of each item)
---@field map? fun(ctx: lunar.workflow.context): any[] the items: a child step `name[k]` per item; output: their outputs
---@field max_parallel? integer with `map`: the most children running at once
---@field needs? string|string[] steps that must finish first
---@field queue? string steps sharing a queue run one at a time, in declaration order
---@field durable? boolean with `queue` and `uses`: a job of that durable queue, run by `lunar worker`
---@field retry? { attempts: integer, backoff?: number } attempts (at least 1), the first backoff in seconds (doubling)
---@field timeout? number seconds after which an attempt fails
---@field ["if"]? fun(ctx: lunar.workflow.context): boolean skip the step when false
---@field when? fun(ctx: lunar.workflow.context): boolean the same as `if` (give one of the two)
---@field continue_on_error? boolean steps that need it run even if it failed
---@field services? string[] services a `run` step may use through `ctx`
---@field description? string a note for readers
---@field cache? "code"|"inputs" what `--resume` compares: the step's code and inputs (default), or its inputs only
---@field version? string a pinned code version: `--resume` reruns the step when it changes, not when its code does

---A defined step: its spec's fields, and where it was defined.
---@class lunar.workflow.step: lunar.workflow.step_spec
---@field name string
---@field index integer Its position in its workflow (once in one).
---@field needs string[]
---@field src string? The file that defined it.
---@field line integer? The line that defined it.

---What a step's `with`, `if` and `when` functions receive.
---@class lunar.workflow.context
---@field workflow string The workflow's name.
---@field step string The step's name.
---@field steps table<string, lunar.workflow.step_state> The steps that have finished, by name.
---@field now fun(): number The runtime clock.

---What a `run` step's function receives: an action's context, with the workflow's view.
---@class lunar.workflow.run_context: lunar.action_context
---@field workflow string The workflow's name.
---@field step string The step's name.
---@field steps table<string, lunar.workflow.step_state> The steps that have finished, by name.

---A finished step, as later steps see it.
---@class lunar.workflow.step_state
---@field status lunar.workflow.step_status
---@field output any Its output (the first value its action returned).
---@field error string? Why it failed.

---The options of `workflow.run` and `workflow.execute` (as `lunar run`'s flags).
---@class lunar.workflow.options
---@field only? string run this step and what it needs
---@field from? string rerun this step and everything after it
---@field dry_run? boolean print the order and the parallel groups, run nothing
---@field jobs? integer steps running at once (default 4)
---@field journal? string a store file, as `--journal`
---@field quiet? boolean print no progress and no summary
---@field progress? "plain"|"terminal" how progress is drawn

---What a run did.
---@class lunar.workflow.outcome
---@field ok boolean
---@field failed string[] The steps that failed.
---@field results table<string, { status: lunar.workflow.step_status, attempts: integer, output: any }>

---A step definition: `step "name" { ... }`. A bad field is an error at the caller's line.
---@param name string
---@return fun(spec: lunar.workflow.step_spec): lunar.workflow.step
function workflow.step(name) end

---The fields of `workflow.sleep "name" { ... }`: exactly one of `seconds` and `until`.
---@class lunar.workflow.sleep_spec
---@field seconds? number how long to wait (0 or more)
---@field until? fun(ctx: lunar.workflow.context): number when to stop waiting, in seconds since the epoch
---@field needs? string|string[] steps that must finish first
---@field ["if"]? fun(ctx: lunar.workflow.context): boolean skip the step when false
---@field when? fun(ctx: lunar.workflow.context): boolean the same as `if`
---@field description? string a note for readers

---The fields of `workflow.wait "name" { ... }`.
---@class lunar.workflow.wait_spec
---@field signal string the signal's name (`lunar runs signal RUN NAME [JSON]` sends it)
---@field timeout? number seconds after which the step fails
---@field needs? string|string[] steps that must finish first
---@field ["if"]? fun(ctx: lunar.workflow.context): boolean skip the step when false
---@field when? fun(ctx: lunar.workflow.context): boolean the same as `if`
---@field description? string a note for readers

---A step that waits, recorded in the run store so a resumed run waits only what is left:
---`workflow.sleep "cool-down" { seconds = 3600 }`. Its output is `{ deadline = ..., waited = ... }`.
---@param name string
---@return fun(spec: lunar.workflow.sleep_spec): lunar.workflow.step
function workflow.sleep(name) end

---A step that waits for a signal sent to the run; the signal's value is its output:
---`workflow.wait "approval" { signal = "approve", timeout = 86400 }`.
---@param name string
---@return fun(spec: lunar.workflow.wait_spec): lunar.workflow.step
function workflow.wait(name) end

---True if `value` is a workflow.
---@param value any
---@return boolean
function workflow.is(value) end

---The plan as text: the order and the parallel groups.
---@param wf lunar.workflow
---@param options? lunar.workflow.options `only` and `from` select the steps
---@return string
function workflow.plan(wf, options) end

---The step graph as Mermaid (a flowchart, the default) or DOT.
---@param wf lunar.workflow
---@param format? "mermaid"|"dot"
---@return string
function workflow.graph(wf, format) end

---Runs the workflow and returns what happened (never raises for a failed step).
---@async
---@param wf lunar.workflow
---@param options? lunar.workflow.options
---@return lunar.workflow.outcome
function workflow.execute(wf, options) end

---Runs the workflow as `lunar run FILE` does; raises if a step failed.
---@async
---@param wf lunar.workflow
---@param options? lunar.workflow.options
---@return lunar.workflow.outcome
function workflow.run(wf, options) end

---Internal: runs the workflow a main chunk returned, as `run` does, and returns
---nothing (`lunar run FILE`); a script has no use for it.
---@param wf lunar.workflow
---@param options? lunar.workflow.options
function workflow._run(wf, options) end

---Internal: defines each `run` step's action in a `lunar run --processes`
---worker (`lunar worker --steps`); a script has no use for it.
---@param wf lunar.workflow
function workflow._serve(wf) end

return workflow
