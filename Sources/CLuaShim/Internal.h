// The private declarations the C files of CLuaShim share. Swift sees only
// include/CLuaShim.h, the shim's interface; every file here that needs
// more includes this header, and it includes nothing of theirs.
#ifndef LUNAR_INTERNAL_H
#define LUNAR_INTERNAL_H

#include "CLuaShim.h"

#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>

// A function one file of the shim defines for the others, not for Swift:
// kept out of the interface of any library the shim is linked into.
#define LUNAR_INTERNAL __attribute__((visibility("hidden")))

// MARK: - The control block (Control.c)

// MARK: - Small blocks (SmallBlocks.c)

// Requests up to this many bytes come from the free lists; larger ones
// from malloc. Classes are LUNAR_SMALL_GRAIN bytes apart.
#define LUNAR_SMALL_LIMIT 512
#define LUNAR_SMALL_GRAIN 16

// A state's free lists and the chunks their blocks are carved from.
typedef struct lunar_SmallBlocks {
  void *free[LUNAR_SMALL_LIMIT / LUNAR_SMALL_GRAIN];  // class k: blocks of (k + 1) * grain bytes
  unsigned char *next, *end;                          // the newest chunk's part not carved yet
  struct Chunk *chunks;                               // the newest chunk, which links to the others
} lunar_SmallBlocks;

// A block of 1...LUNAR_SMALL_LIMIT bytes, or NULL when no chunk can be had.
LUNAR_INTERNAL void *lunar_smallalloc(lunar_SmallBlocks *b, size_t size);
// Gives back a block lunar_smallalloc returned for `size` bytes.
LUNAR_INTERNAL void lunar_smallfree(lunar_SmallBlocks *b, void *block, size_t size);
// Frees every chunk: the state that used them is closed.
LUNAR_INTERNAL void lunar_smallrelease(lunar_SmallBlocks *b);

// What every thread of one state shares, found through the extra space Lua
// reserves in front of each lua_State (see lunar_Control in CLuaShim.h).
struct lunar_Control {
  _Atomic size_t used;              // bytes allocated by Lua now (written by the loop thread only)
  size_t peak;                      // most bytes allocated at once
  size_t limit;                     // 0 for none; enforced only while armed
  _Atomic size_t held;              // bytes of copies Swift holds (lunar_charge), any thread
  int armed;                        // > 0 while Lua code runs under lunar_pcall/lunar_resume
  _Atomic int references;           // the state, and each lunar_retaincontrol
  _Atomic int interrupted;          // LUNAR_INTERRUPT_*; set from signal handlers
  _Atomic int taken;                // 1 once the loop thread has acted on the interrupt
  _Atomic(lua_State *) running;     // the thread running Lua code now; NULL once no Lua code can run
  _Atomic int interrupting;         // lunar_interrupt calls touching `running` now, from any thread
  _Atomic int closing;              // 1 while lua_close runs the finalizers
  _Atomic int endsprocess;          // Ctrl-C while closing ends the process (lunar_ownprocess)
  const char *_Atomic message;      // what the interrupt raises
  sem_t wakeup;                     // the runtime loop sleeps on it
  double deadline;                  // lunar_setdeadline's; loop thread only
  int deadlinemessage;              // registry slot of the error it raises
  lunar_Coverage *coverage;         // line hits (lunar_startcoverage), or NULL; loop thread only
  _Atomic int linemask;             // LUA_MASKLINE while coverage counts, else 0
  lunar_OutputSink outputsink;      // what print and io writes to stdout/stderr also goes to, or NULL; loop thread only
  void *outputcontext;              // outputsink's first argument
  lunar_TaskLabel tasklabel;        // names the task of a marked thread (lunar_settasklabel), or NULL
  void *tasklabelcontext;           // tasklabel's first argument
  int tracing;                      // 1 while someone listens to the trace (lunar_settracing); loop thread only
  lua_Integer currenttask;          // the id of the task running Lua code, 0 outside any (lunar_setcurrenttask); loop thread only
  lunar_SmallBlocks blocks;         // where lunar_alloc takes small blocks from; loop thread only
};

// A thread's extra space holds its state's control block, tagged in the
// low bits with who owns the thread and whether Lua code has seen it
// (Coroutines.c): the block is aligned, so the bits are free, and marking
// a thread allocates nothing.
enum { OWNER_NONE = 0, OWNER_TASK = 1, OWNER_WAIT = 2, OWNER_BITS = 3, SEEN_BIT = 4, TAG_BITS = 7 };

static inline uintptr_t tagged_control(lua_State *L) { return *(uintptr_t *)lua_getextraspace(L); }

static inline lunar_Control *control(lua_State *L) {
  return (lunar_Control *)(tagged_control(L) & ~(uintptr_t)TAG_BITS);
}

static inline size_t used_bytes(lunar_Control *c) { return atomic_load_explicit(&c->used, memory_order_relaxed); }
static inline size_t held_bytes(lunar_Control *c) { return atomic_load_explicit(&c->held, memory_order_relaxed); }

// No request this large can be met: raise_memory_error asks for it to
// make Lua raise its own memory error.
#define UNAFFORDABLE ((size_t)1 << 60)

// Arms (1) or disarms (0) the memory limit for what runs from now on (see
// lunar_alloc); returns the previous value, which the caller puts back.
static inline int arm(lua_State *L, int value) {
  lunar_Control *c = control(L);
  int saved = c->armed;
  c->armed = value;
  return saved;
}

// MARK: - Hooks (Interrupts.c)

// What lunar_resume (ProtectedCall.c) and lunar_startcoverage (Coverage.c)
// set on a thread: coverage's line hook, the deadline's count hook, the
// interrupt's hook. Each is described where it is defined.
LUNAR_INTERNAL void lunar_hookforcoverage(lunar_Control *c, lua_State *L);
LUNAR_INTERNAL void lunar_watchdeadline(lunar_Control *c, lua_State *L);
LUNAR_INTERNAL void lunar_hookifinterrupted(lunar_Control *c, lua_State *L);
// 1 if the thread's hook is none or Lunar's own (not one debug.sethook set).
LUNAR_INTERNAL int lunar_hasonlyownhook(lua_State *L);

// MARK: - Host functions (Trampoline.c)

#define CHANGED_UPVALUE "this function of Lunar's was changed with debug.setupvalue and cannot run"

// Raises `message` at the user's line that called the function.
LUNAR_INTERNAL int lunar_raiseatcaller(lua_State *L, const char *message);
// The `__index` lunar_pushclassindex pushes (the function error messages
// name methods by).
LUNAR_INTERNAL int lunar_classindex(lua_State *L);

// MARK: - The yieldable require (Require.c)

// The global `require` lunar_installyieldablecalls installs.
LUNAR_INTERNAL int lunar_requireyieldable(lua_State *L);

// MARK: - Names of functions (ErrorMessages.c)

// The name of the function of `ar` as lauxlib's pushglobalfuncname gives
// it, but the shortest (see its definition); returns 0 if it has none.
LUNAR_INTERNAL int lunar_pushglobalname(lua_State *L, lua_Debug *ar);

// MARK: - Line coverage (Coverage.c)

// The part the rest of the shim calls (its hook, require, the
// yield-passing check); the part Swift calls is in include/CLuaShim.h.

/// The state's record, or NULL when coverage is off.
LUNAR_INTERNAL lunar_Coverage *lunar_coveragestate(lua_State *L);
/// A new, empty record of files and line hits; NULL when out of memory.
LUNAR_INTERNAL lunar_Coverage *lunar_coveragenew(void);
/// Frees a record made by lunar_coveragenew (NULL is ignored).
LUNAR_INTERNAL void lunar_coveragefree(lunar_Coverage *coverage);
/// Counts the line a line hook reports in `ar` if it is in a registered
/// file; any other line costs a lookup and is ignored.
LUNAR_INTERNAL void lunar_coverageline(lunar_Coverage *coverage, lua_State *L, lua_Debug *ar);
/// Registers the function at `idx` if it is the main chunk of a file
/// (source `@path`): its lines become the file's executable lines, and its
/// hits (and those of every chunk with the same source) are counted from
/// now on. Never raises.
LUNAR_INTERNAL void lunar_coverageregister(lunar_Coverage *coverage, lua_State *L, int idx);
/// Replaces the global `dofile` and `loadfile` with versions that behave as
/// lbaselib's and register the chunk they load.
LUNAR_INTERNAL void lunar_installcoverageloaders(lua_State *L);
/// The `dofile` lunar_installcoverageloaders installs (it passes yields).
LUNAR_INTERNAL int lunar_coveragedofile(lua_State *L);

#endif
