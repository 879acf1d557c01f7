// CLuaShim: the small C layer between Lua and Swift.
//
// Swift must never be unwound by Lua's longjmp (docs/architecture.md, "Never
// longjmp through Swift"), so everything
// that may raise or yield happens here, in C: Swift host functions return a
// status and the trampoline raises, yields or returns as its own tail
// action. Lua's function-like macros are re-declared as static inline
// functions so Swift can call them.
#ifndef CLUASHIM_H
#define CLUASHIM_H

#include <stddef.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <lua5.4/lua.h>
#include <lua5.4/lauxlib.h>
#include <lua5.4/lualib.h>

// MARK: - Statuses a Swift host function returns to the trampoline

/// The error value is on top of the stack; the trampoline raises it.
#define LUNAR_STATUS_ERROR (-1)
/// Yield the value on top to the scheduler. On resume the first value says
/// whether the wait succeeded: `true, results...` returns the results,
/// `false, err` raises `err` in the caller.
#define LUNAR_STATUS_YIELD (-2)
/// Yield the value on top; on resume return every resumed value unchanged.
#define LUNAR_STATUS_YIELD_RAW (-3)

// MARK: - Per-state control block

/// Shared by every thread of one Lua state (reached through the extra space
/// Lua reserves in front of each lua_State): memory accounting, the limit,
/// the interrupt flag and the runtime's wake-up semaphore. Opaque to Swift
/// because it holds C11 atomics.
typedef struct lunar_Control lunar_Control;

/// A new state with Lunar's counting allocator; `limit` 0 means no limit.
lua_State *lunar_newstate(size_t limit);
/// Closes a state made by lunar_newstate and frees its control block.
void lunar_close(lua_State *L);
/// The control block of the state `L` belongs to.
lunar_Control *lunar_control(lua_State *L);
/// Bytes Lua holds now.
size_t lunar_memoryused(lua_State *L);
/// The most bytes Lua has held at once.
size_t lunar_memorypeak(lua_State *L);
/// The limit in bytes (0: none).
size_t lunar_memorylimit(lua_State *L);

// MARK: - Copies held by Swift, counted against the same limit

/// Keeps a control block alive, past lunar_close, until the matching
/// lunar_releasecontrol (copies may be released after the state); returns it.
lunar_Control *lunar_retaincontrol(lunar_Control *c);
/// Gives back a lunar_retaincontrol (or lunar_newstate's own reference).
void lunar_releasecontrol(lunar_Control *c);
/// Counts `bytes` Swift now holds; returns 0 (and counts nothing) if Lua's
/// bytes and those held would then pass the limit, unless `force`. Any
/// thread.
int lunar_charge(lunar_Control *c, size_t bytes, int force);
/// Gives back bytes counted by lunar_charge. Any thread.
void lunar_uncharge(lunar_Control *c, size_t bytes);
/// Bytes Swift holds now.
size_t lunar_memoryheld(lunar_Control *c);
/// The limit in bytes (0: none), from the control block.
size_t lunar_memorylimitof(lunar_Control *c);
/// Bytes that may still be charged or allocated (SIZE_MAX without a limit).
size_t lunar_memoryavailable(lunar_Control *c);
/// True when Lua's bytes and those held together pass the limit (Swift
/// pushing a value checks this, as the allocator is disarmed meanwhile).
int lunar_overlimit(lua_State *L);

// MARK: - Interrupts (Ctrl-C, timeouts)

#define LUNAR_INTERRUPT_NONE 0
#define LUNAR_INTERRUPT_SIGNAL 1
#define LUNAR_INTERRUPT_TIMEOUT 2
#define LUNAR_INTERRUPT_REQUEST 3

/// Stops the state's Lua code at its next instruction with `message`
/// (a string that outlives the state, or NULL for "interrupted" after a
/// signal and "stopped" otherwise), and wakes the runtime's loop. Async-signal-safe and
/// callable from any thread, as lua.c's signal handler is.
void lunar_interrupt(lunar_Control *c, int reason, const char *message);
/// Why the state was interrupted (LUNAR_INTERRUPT_*), or 0. Call it only
/// on the loop thread: a non-zero answer marks the interrupt as taken.
int lunar_interrupted(lua_State *L);
/// True once the interrupt has taken effect: the hook raised it, or the
/// loop thread saw it. Callable from any thread.
int lunar_interrupttaken(lunar_Control *c);
/// Flushes standard output if no thread holds it, writes `line` to
/// standard error and ends the process with `status` at once (`_exit`).
/// For a watchdog whose interrupt was never taken (see Interrupts.c).
void lunar_endprocess(const char *line, int status) __attribute__((noreturn));
/// Forgets an interrupt so Lua code may run again (the REPL's next line).
void lunar_clearinterrupt(lua_State *L);
/// Routes SIGINT to this state (several states may be registered).
void lunar_catchsigint(lua_State *L);
/// How many SIGINTs the process has received (a console reading input
/// tells a Ctrl-C from the end of input with it).
int lunar_sigintcount(void);
/// Routes SIGTERM and SIGHUP to this state too, as SIGINT (`lunar run`).
void lunar_catchstopsignals(lua_State *L);
/// While on, the first stop signal is only noted and posted
/// (`lunar_waitstopsignal` returns), for a workflow to cancel itself.
void lunar_cooperatestop(int on);
/// The first stop signal the process received, or 0.
int lunar_stopsignal(void);
/// Waits up to `seconds` for a posted stop; 1 if one came, else 0.
int lunar_waitstopsignal(double seconds);
/// Waits up to `seconds` (0 to a day) on the monotonic clock for
/// `semaphore`; 1 if it was posted, 0 on timeout or a signal.
int lunar_semwait(sem_t *semaphore, double seconds);
/// Wakes `lunar_waitstopsignal` (its waiter is stopping).
void lunar_poststop(void);
/// Interrupts every routed state, as a second stop signal does.
void lunar_interruptforstop(void);
/// Stops routing SIGINT to this state.
void lunar_releasesigint(lua_State *L);
// Stops routing Ctrl-C to the state of control block `c` (usable after the
// state is closed).
void lunar_releasesigintof(lunar_Control *c);
// 1 while lunar_close runs the state's finalizers, which no interrupt can
// stop (Lua runs them with hooks off).
int lunar_isclosing(lunar_Control *c);
// Marks the state's program as owning its process: Ctrl-C while the state
// closes ends the process (status 130) instead of waiting for finalizers.
void lunar_ownprocess(lua_State *L);

// MARK: - Deadlines (a task's time limit while it computes)

/// Seconds on CLOCK_MONOTONIC, the clock deadlines are on.
double lunar_monotonic(void);
/// Puts the Lua code that runs from now on (the thread running now and
/// every coroutine resumed until the next call) under deadline `at`, in
/// lunar_monotonic seconds: once it passes, a count hook raises the string
/// in registry slot `message`, and raises it again at every step after,
/// so no pcall can keep the code running. HUGE_VAL: no deadline; 0: one
/// already passed. Loop thread only.
void lunar_setdeadline(lua_State *L, double at, int message);

// MARK: - Line coverage (`lunar test --coverage`)

/// The files a state counts line hits in (see Coverage.c); loop thread only.
typedef struct lunar_Coverage lunar_Coverage;

/// Counts the lines every thread of the state runs from now on (a line
/// hook, in the same hook function as interrupts and deadlines) in the
/// files `require`, `dofile` and `loadfile` load from now on. Returns 0 if
/// out of memory. Loop thread only, before the scripts run.
int lunar_startcoverage(lua_State *L);
/// How many files the state has counted lines in (0 without coverage).
int lunar_coveragefilecount(lua_State *L);
/// The source of file `i` as its chunk names it (`@path`), not
/// NUL-terminated; `length` receives its length.
const char *lunar_coveragesource(lua_State *L, int i, size_t *length);
/// One past the highest line file `i` has data for; `hits` and
/// `executable` receive arrays of that many entries indexed by line: how
/// often the line ran, and whether it holds code (any function's active
/// line, as `debug.getinfo(f, "L")` lists them).
int lunar_coveragelines(lua_State *L, int i, const uint64_t **hits, const unsigned char **executable);

// MARK: - The runtime's wake-up

/// Wakes a loop sleeping in lunar_sleep (thread-safe, signal-safe).
void lunar_wake(lua_State *L);
/// Sleeps until lunar_wake or `seconds` pass (< 0: no limit); returns 1 if
/// woken, 0 on timeout. A wait over a day (or NaN) ends after a day.
int lunar_sleep(lua_State *L, double seconds);

// MARK: - Host yields through user coroutines

/// Pushes the private value a host function yields to reach the scheduler.
void lunar_pushmarker(lua_State *L);
/// True if the value at `idx` is that marker.
int lunar_ismarker(lua_State *L, int idx);
/// Replaces coroutine.resume and coroutine.wrap with versions that keep the
/// stock semantics but pass marker yields on: when the coroutine they
/// resume yields the marker, they call the function on top of the stack
/// (popped; it waits for the host work, yielding itself or running the
/// loop nested) and resume the coroutine with what it returns.
///
/// Also replaces coroutine.status and coroutine.close: a coroutine suspended
/// in a host wait counts as "normal" (it is inside its resumer's call), and
/// a task's coroutine cannot be resumed or closed from Lua (an argument
/// error at the caller's line).
void lunar_installcoroutines(lua_State *L);
/// Replaces the global `require` and `table.sort` with versions that keep
/// the stock semantics (for require: package.loaded, package.searchers,
/// the loader's data as second result, the same messages; for sort: the
/// same comparisons in the same order, the same errors) but call Lua with
/// continuations, so a module body or a comparator in a task may yield.
void lunar_installyieldablecalls(lua_State *L);
/// Gives the `lunar` table at `idx` its sub-modules on first use (Submodules.c):
/// `lunar.queue` is `require "lunar.queue"`, and `lunar.action`, `lunar.run`
/// and `lunar.run_stubbed` load the actions module; other keys are nil.
void lunar_installsubmodules(lua_State *L, int idx);
/// Replaces `os.setlocale` with one that sets the locale of the calling
/// thread only (ThreadLocale.c): a runtime's locale is its own, and every
/// runtime starts in the process's ("C").
void lunar_installthreadlocale(lua_State *L);
/// Puts the calling thread back in the process's locale, freeing the one
/// `os.setlocale` made for it (a runtime restored for another script, or
/// closed).
void lunar_resetthreadlocale(void);
/// The yieldable table.sort (TableSort.c).
int lunar_tablesort(lua_State *L);
/// Pushes on `L` how the innermost C call on `co` that does not pass yields
/// on (not pcall, not Lunar's resume/wrap/require) is named in tracebacks
/// (`function 'table.sort'`): why a wait on `co` could not yield. Returns 0
/// and pushes nothing if there is none.
int lunar_pushblockingcall(lua_State *L, lua_State *co);
/// Marks the thread at `idx` as a task's coroutine (only the scheduler
/// resumes it), or unmarks it when `istask` is 0. Allocates nothing.
void lunar_settaskthread(lua_State *L, int idx, int istask);
/// Marks the thread `co` as a task's coroutine that Lua code has not seen:
/// a finished task's coroutine, given to another task.
void lunar_marktaskthread(lua_State *co);
/// 1 if the thread `co`, a task's, may run another task: it returned (at
/// its base, its stack empty), Lua code never had it as a value
/// (`coroutine.running` marks it) and it has no hook of the user's.
int lunar_threadreusable(lua_State *co);
/// Writes into `buffer` (`size` bytes) the label of the task whose
/// coroutine is `co`, NUL-terminated, for an error that names it; writes
/// nothing if it knows none. It must not call into Lua.
typedef void (*lunar_TaskLabel)(void *context, lua_State *co, char *buffer, size_t size);
/// Sets how the state of `L` names the task of a marked thread, and its context.
void lunar_settasklabel(lua_State *L, lunar_TaskLabel label, void *context);

// MARK: - Host functions

/// Calls the Swift function `function` for the Lua call in progress on `L`;
/// returns a result count or one of the LUNAR_STATUS_* values.
typedef int (*lunar_Dispatch)(lua_State *L, void *function);
/// Releases the Swift function `function` when Lua collects it.
typedef void (*lunar_Release)(void *function);

/// Installs the two Swift entry points; call once before any host function.
void lunar_configure(lunar_Dispatch dispatch, lunar_Release release);
/// Pushes a Lua function that calls `function` (retained, released by __gc)
/// through the trampoline, with `nup` extra upvalues taken from the stack
/// (reachable as lua_upvalueindex(2...)).
void lunar_pushhostfunction(lua_State *L, void *function, int nup);
/// The status a trampoline applies after Swift returned `status`; for C
/// callers that build their own trampolines.
int lunar_finish(lua_State *L, int status);
/// Pushes the error value that stands for Lua's own memory error: raised
/// by a host function (LUNAR_STATUS_ERROR) or resumed as a wait's error, it
/// becomes `not enough memory` with status LUA_ERRMEM.
void lunar_pushmemoryerror(lua_State *L);

/// Pushes an `__index` function for userdata classes with properties: it
/// looks the key up in the methods table at the top of the stack first (no
/// call into Swift for a method), then calls the getter below it as
/// getter(object, key). Pops both.
void lunar_pushclassindex(lua_State *L);

// MARK: - Protected calls with a traceback

/// lua_pcall with a message handler that records a traceback (read with
/// lunar_pushtraceback) and with the memory limit armed during the call.
int lunar_pcall(lua_State *L, int nargs, int nresults);
/// Pushes lunar_pcall's message handler, for callers that make many calls
/// and keep it at one place on the stack (see lunar_pcallwith).
void lunar_pushmessagehandler(lua_State *L);
/// lunar_pcall with the message handler already at stack index `msgh`,
/// below the function: nothing is moved on the stack.
int lunar_pcallwith(lua_State *L, int nargs, int nresults, int msgh);
/// Pushes the traceback recorded by the last failed lunar_pcall (or nil) and
/// forgets it.
void lunar_pushtraceback(lua_State *L);
/// lua_resume with the memory limit armed and `co` marked as running.
int lunar_resume(lua_State *co, lua_State *from, int nargs, int *nresults);
/// Calls luaL_tolstring on the value at `idx` in protected mode; pushes the
/// string (or a type-based description if a __tostring metamethod fails).
const char *lunar_tostring(lua_State *L, int idx, size_t *len);

// MARK: - Error messages in Lua's own words, pushed, never raised

/// Pushes "where: bad argument #arg to 'name' (extramsg)" as luaL_argerror
/// would raise it.
void lunar_pushargerror(lua_State *L, int arg, const char *extramsg);
/// Pushes "where: bad argument #arg to 'name' (tname expected, got X)".
void lunar_pushtypeerror(lua_State *L, int arg, const char *tname);
/// Pushes "where: message" as luaL_error would, with luaL_where(L, 1)
/// moved past Lunar's own chunks to the user's code that called them.
void lunar_pusherror(lua_State *L, const char *message);
/// True for the chunk names of Lua code Lunar embeds (`=lunar`,
/// `=lunar.workflow`, `=lunar test`, `=busted`, `=luassert`, `=sandbox`):
/// messages and tracebacks show the user's code that called it instead.
int lunar_isinternalchunk(const char *source);
/// Pushes "chunk:line: " of the nearest Lua line of the user's code calling
/// the running function (past C frames and Lunar's chunks), or "".
void lunar_pushlocation(lua_State *L);
/// Tells the state's Lua code whether someone listens to the trace (see
/// lunar_tracing). Loop thread only.
void lunar_settracing(lunar_Control *c, int on);
/// tracing() -> whether someone listens to the trace, as lunar_settracing
/// last said: a lua_CFunction.
int lunar_tracing(lua_State *L);
/// Says which task runs Lua code now (its id; 0: none, the main chunk):
/// the action chain `lunar_chain` reads is that task's. Loop thread only.
void lunar_setcurrenttask(lua_State *L, lua_Integer task);
/// chain() -> the action chain of the running task (TaskChains.c), or nil:
/// a lua_CFunction.
int lunar_chain(lua_State *L);
/// set_chain(chain): sets the running task's action chain (nil: none): a
/// lua_CFunction.
int lunar_setchain(lua_State *L);
/// Gives task `child` the action chain of task `parent` (a task inherits
/// its creator's), in protected mode; returns the status (LUA_OK, or
/// LUA_ERRMEM with nothing pushed).
int lunar_inheritchain(lua_State *L, lua_Integer parent, lua_Integer child);
/// Forgets the action chain of task `task`, which has finished; never
/// raises.
void lunar_forgetchain(lua_State *L, lua_Integer task);
/// Forgets every task's action chain (a runtime reused for another script).
void lunar_forgetchains(lua_State *L);
/// caller(level) -> the short source and current line of the function
/// `level` frames up from the one calling it, as debug.getinfo(level, "Sl")
/// reads them but without its table; nothing past the top of the stack.
int lunar_caller(lua_State *L);
/// step_definer(STEP, NO_NEEDS, make_step) -> lunar.workflow's `step`: a
/// step whose fields are only well-typed `uses` or `run`, `with` and `needs`
/// is made in C; any other goes to `make_step(name, spec, src, line)`, which
/// returns the step or nil and the message raised at the definition's line.
int lunar_stepdefiner(lua_State *L);
/// luaL_traceback, showing the user's frames only: Lunar's chunks and the C
/// functions they call are left out, and the outermost frame of Lunar's,
/// called by the user, shows as the public function (`[C]: in function
/// 'lunar.workflow.run'`). Pushes the text; returns how many frames it shows.
int lunar_traceback(lua_State *L, lua_State *L1, const char *msg, int level);
/// Fills `ar` (as lua_getinfo "Sl") with the innermost frame of the user's
/// code in L1 from `level` on, past C functions and Lunar's chunks: where a
/// failure was raised. Returns 0, leaving `ar` unspecified, if there is none.
int lunar_userframe(lua_State *L1, int level, lua_Debug *ar);
/// Replaces the global `error` with one whose positions skip Lunar's
/// chunks as lunar_pusherror's do (otherwise lbaselib's).
void lunar_installerror(lua_State *L);
/// The type name Lua's messages use for the value at `idx` (__name aware).
const char *lunar_typename(lua_State *L, int idx);

// MARK: - Loading

/// luaL_loadbufferx, callable from Swift.
int lunar_loadbuffer(lua_State *L, const char *buf, size_t size, const char *name, const char *mode);
/// luaL_loadfilex, callable from Swift; NULL reads standard input.
int lunar_loadfile(lua_State *L, const char *filename, const char *mode);
/// luaL_openlibs in protected mode; returns a Lua status.
int lunar_openlibs(lua_State *L);

/// Receives what Lua's print, io.write and file:write wrote to standard
/// output (`stream` 1) or standard error (2), once written; it must not call
/// into Lua. Called on the thread running the Lua code.
typedef void (*lunar_OutputSink)(void *context, int stream, const char *bytes, size_t size);
/// Replaces print, io.write and the files' write method with copies of
/// Lua's own that also hand what they write to the state's output sink.
/// Call after the standard libraries are open; returns a Lua status.
int lunar_installoutput(lua_State *L);
/// Sets the output sink of `L`'s state (NULL for none) and its context.
void lunar_setoutputsink(lua_State *L, lunar_OutputSink sink, void *context);

// MARK: - Macros as functions

static inline void lunar_pop(lua_State *L, int n) { lua_pop(L, n); }
static inline void lunar_newtable(lua_State *L) { lua_newtable(L); }
static inline void lunar_pushcfunction(lua_State *L, lua_CFunction f) { lua_pushcfunction(L, f); }
static inline void lunar_insert(lua_State *L, int idx) { lua_insert(L, idx); }
static inline void lunar_remove(lua_State *L, int idx) { lua_remove(L, idx); }
static inline void lunar_replace(lua_State *L, int idx) { lua_replace(L, idx); }
static inline int lunar_upvalueindex(int i) { return lua_upvalueindex(i); }
static inline int lunar_registryindex(void) { return LUA_REGISTRYINDEX; }
static inline lua_Number lunar_tonumber(lua_State *L, int idx) { return lua_tonumber(L, idx); }
static inline lua_Integer lunar_tointeger(lua_State *L, int idx) { return lua_tointeger(L, idx); }
static inline const char *lunar_tostringraw(lua_State *L, int idx) { return lua_tostring(L, idx); }
static inline int lunar_isnoneornil(lua_State *L, int idx) { return lua_isnoneornil(L, idx); }
static inline void *lunar_newuserdata(lua_State *L, size_t size) { return lua_newuserdata(L, size); }
static inline int lunar_getmetatable(lua_State *L, const char *name) { return luaL_getmetatable(L, name); }
static inline void lunar_pushglobaltable(lua_State *L) { lua_pushglobaltable(L); }
static inline int lunar_yieldable(lua_State *L) { return lua_isyieldable(L); }
static inline int lunar_errfile(void) { return LUA_ERRFILE; }
static inline int lunar_gccollect(lua_State *L) { return lua_gc(L, LUA_GCCOLLECT); }
static inline int lunar_gcgenerational(lua_State *L) { return lua_gc(L, LUA_GCGEN, 0, 0); }
// Loads the Lua source file open on `fd` (closed here) as luaL_loadfilex
// would load `filename`: the chunk (or an error message) is pushed, the
// status returned; a file under coverage is registered. Never raises.
int lunar_loadopened(lua_State *L, int fd, const char *filename, const char *mode);
// Turns warnings off or on (as `warn("@off")`/`warn("@on")` or lua.c's -W);
// a state starts with them off, as lauxlib's do.
void lunar_setwarnings(lua_State *L, int on);
static inline int lunar_gccount(lua_State *L) { return lua_gc(L, LUA_GCCOUNT); }
/// Writes `n` as Lua's %.14g would; returns the length.
static inline int lunar_formatnumber(char *buffer, size_t size, double n) {
  return snprintf(buffer, size, LUA_NUMBER_FMT, n);
}
static inline const char *lunar_pushliteral(lua_State *L, const char *s) { return lua_pushstring(L, s); }

// MARK: - Reusing a state (StateSnapshot.c)

/// Records every object Lua code can reach in `L`'s state (from the
/// registry, the main thread's stack and the basic types' metatables) with
/// a copy of its contents, kept in the registry. `setmetatable`,
/// `debug.setmetatable` and `debug.upvaluejoin` are replaced, wherever they
/// are reached, by versions that also note finalizers and joined upvalues
/// (see lunar_restorestate). Call it on the main thread; returns a Lua
/// status (nothing is left on the stack).
int lunar_snapshotstate(lua_State *L);
/// What lunar_restorestate puts back.
#define LUNAR_RESTORE_ALL 0
#define LUNAR_RESTORE_ALL_AND_SLOTS 1
#define LUNAR_RESTORE_SLOTS 2
/// Puts back what lunar_snapshotstate recorded: with LUNAR_RESTORE_ALL,
/// every table's keys and metatable, every upvalue, every userdata's
/// metatable and user values, the basic types' metatables and the main
/// thread's hook. With LUNAR_RESTORE_SLOTS (after a full collection, when
/// the references a script's objects held are released), the registry's
/// slots in use must be those in use at the snapshot, and slots freed since
/// are put back on the free list as it was; LUNAR_RESTORE_ALL_AND_SLOTS
/// does both. Returns how many things it changed, or -1 when the state
/// cannot be put back (its registry or a recorded coroutine changed, an
/// upvalue of a recorded closure was joined to another, a C library was
/// loaded, the main thread's stack differs, a slot is still taken, memory
/// ran out): it must then be discarded. Sets `*finalizers` (if not NULL) when a
/// finalizer written in Lua may have been made since the last restore (the
/// snapshot's `setmetatable` saw `__gc`, or a `__gc` field changed): a full
/// collection may then change things again.
long long lunar_restorestate(lua_State *L, int mode, int *finalizers);
/// Sets the collector back to a new state's: running, generational, Lua
/// 5.4's default parameters.
int lunar_gcreset(lua_State *L);

/// Writes a progress line of `size` bytes to C's stdout, the stream Lua's
/// print and io.write use, so lines the host writes keep their order among
/// the script's; it is flushed within 30 ms (LazyFlush.c), not at once.
void lunar_writeprogress(const char *bytes, size_t size);

#endif
