// A state and its control block: the counting allocator and the memory
// limit, copies Swift holds counted against it, warnings, and making and
// closing a state.
#include "Internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lunar_Control *lunar_control(lua_State *L) { return control(L); }
size_t lunar_memoryused(lua_State *L) { return used_bytes(control(L)); }
size_t lunar_memorypeak(lua_State *L) { return control(L)->peak; }
size_t lunar_memorylimit(lua_State *L) { return control(L)->limit; }

// MARK: - Allocator and control block

// Counts every byte Lua allocates. The limit is only enforced while Lua
// code runs under lunar_pcall/lunar_resume ("armed"): Swift frames call the
// C API outside any protected call, and a failed allocation there would
// longjmp through them. Swift host functions disarm it for their duration;
// an overshoot made by Swift is caught at Lua's next allocation. The bytes
// Swift holds in copies of Lua values (`held`) count against the same
// limit.
// A block of `nsize` bytes holding what `ptr` (osize bytes, or NULL) held:
// small ones from the state's free lists (SmallBlocks.c), others from malloc.
// Lua always gives a block's own size as `osize`, so the size tells which of
// the two a block came from.
static void *reallocate(lunar_Control *c, void *ptr, size_t old, size_t nsize) {
  int was_small = ptr != NULL && old <= LUNAR_SMALL_LIMIT;
  if (nsize > LUNAR_SMALL_LIMIT) {
    if (!was_small) return realloc(ptr, nsize);
    void *p = malloc(nsize);
    if (p == NULL) return NULL;
    memcpy(p, ptr, old);
    lunar_smallfree(&c->blocks, ptr, old);
    return p;
  }
  if (was_small && (old - 1) / LUNAR_SMALL_GRAIN == (nsize - 1) / LUNAR_SMALL_GRAIN) return ptr;
  void *p = lunar_smallalloc(&c->blocks, nsize);
  if (p == NULL || ptr == NULL) return p;
  memcpy(p, ptr, old < nsize ? old : nsize);
  if (was_small) {
    lunar_smallfree(&c->blocks, ptr, old);
  } else {
    free(ptr);
  }
  return p;
}

static void *lunar_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  lunar_Control *c = (lunar_Control *)ud;
  size_t old = ptr ? osize : 0;
  size_t used = used_bytes(c);
  if (nsize == 0) {
    atomic_store_explicit(&c->used, used - old, memory_order_relaxed);
    if (old > LUNAR_SMALL_LIMIT) {
      free(ptr);
    } else if (ptr != NULL) {
      lunar_smallfree(&c->blocks, ptr, old);
    }
    return NULL;
  }
  if (nsize >= UNAFFORDABLE) return NULL;
  if (c->limit != 0 && c->armed > 0 && nsize > old && used - old + nsize + held_bytes(c) > c->limit)
    return NULL;
  void *p = reallocate(c, ptr, old, nsize);
  if (p == NULL) return NULL;
  used = used - old + nsize;
  atomic_store_explicit(&c->used, used, memory_order_relaxed);
  if (used > c->peak) c->peak = used;
  return p;
}

lunar_Control *lunar_retaincontrol(lunar_Control *c) {
  atomic_fetch_add_explicit(&c->references, 1, memory_order_relaxed);
  return c;
}

void lunar_releasecontrol(lunar_Control *c) {
  if (atomic_fetch_sub_explicit(&c->references, 1, memory_order_acq_rel) != 1) return;
  sem_destroy(&c->wakeup);
  free(c);
}

int lunar_charge(lunar_Control *c, size_t bytes, int force) {
  size_t held = atomic_fetch_add_explicit(&c->held, bytes, memory_order_relaxed) + bytes;
  if (force || c->limit == 0 || used_bytes(c) + held <= c->limit) return 1;
  atomic_fetch_sub_explicit(&c->held, bytes, memory_order_relaxed);
  return 0;
}

void lunar_uncharge(lunar_Control *c, size_t bytes) {
  atomic_fetch_sub_explicit(&c->held, bytes, memory_order_relaxed);
}

size_t lunar_memoryheld(lunar_Control *c) { return held_bytes(c); }

size_t lunar_memorylimitof(lunar_Control *c) { return c->limit; }

size_t lunar_memoryavailable(lunar_Control *c) {
  if (c->limit == 0) return SIZE_MAX;
  size_t taken = used_bytes(c) + held_bytes(c);
  return taken >= c->limit ? 0 : c->limit - taken;
}

int lunar_overlimit(lua_State *L) {
  lunar_Control *c = control(L);
  return c->limit != 0 && used_bytes(c) + held_bytes(c) > c->limit;
}

static int lunar_panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "lunar: unprotected error in Lua: %s\n", msg ? msg : "(not a string)");
  fflush(stderr);
  return 0;  // Lua aborts after the panic function returns
}

// Warnings as lauxlib gives them to lua.c: off until "@on", then each
// message on standard error after "Lua warning: ", its parts (tocont)
// joined on one line; "@off" and "@on" are control messages.
static void warn_off(void *ud, const char *message, int tocont);
static void warn_on(void *ud, const char *message, int tocont);

static int warn_control(lua_State *L, const char *message, int tocont) {
  if (tocont || *message != '@') return 0;
  if (strcmp(message + 1, "off") == 0) lua_setwarnf(L, warn_off, L);
  else if (strcmp(message + 1, "on") == 0) lua_setwarnf(L, warn_on, L);
  return 1;
}

static void warn_off(void *ud, const char *message, int tocont) { warn_control((lua_State *)ud, message, tocont); }

static void warn_continued(void *ud, const char *message, int tocont) {
  lua_State *L = (lua_State *)ud;
  fputs(message, stderr);
  if (tocont) {
    lua_setwarnf(L, warn_continued, L);
  } else {
    fputs("\n", stderr);
    lua_setwarnf(L, warn_on, L);
  }
  fflush(stderr);
}

static void warn_on(void *ud, const char *message, int tocont) {
  if (warn_control((lua_State *)ud, message, tocont)) return;
  fputs("Lua warning: ", stderr);
  warn_continued(ud, message, tocont);
}

static void mark_close_sentinel(lua_State *L);

void lunar_setwarnings(lua_State *L, int on) { lua_setwarnf(L, on ? warn_on : warn_off, L); }

lua_State *lunar_newstate(size_t limit) {
  lunar_Control *c = calloc(1, sizeof(lunar_Control));
  if (c == NULL) return NULL;
  c->limit = limit;
  c->deadline = HUGE_VAL;
  atomic_init(&c->references, 1);
  sem_init(&c->wakeup, 0, 0);
  lua_State *L = lua_newstate(lunar_alloc, c);
  if (L == NULL) {
    lunar_smallrelease(&c->blocks);
    lunar_releasecontrol(c);
    return NULL;
  }
  *(lunar_Control **)lua_getextraspace(L) = c;  // threads inherit it
  atomic_store(&c->running, L);
  lua_atpanic(L, lunar_panic);
  lua_setwarnf(L, warn_off, L);
  mark_close_sentinel(L);
  return L;
}

// The finalizer of the first object a state marks for finalization, so
// the last one lua_close runs: after it no Lua code runs, and interrupts
// stop touching the state, which lua_close then frees. It waits for an
// interrupt already setting a hook (on another thread) to be done.
static int closed_for_interrupts(lua_State *L) {
  lunar_Control *c = control(L);
  atomic_store(&c->running, NULL);
  while (atomic_load(&c->interrupting) > 0) {
  }
  return 0;
}

static const char close_sentinel_key = 0;

static void mark_close_sentinel(lua_State *L) {
  lua_newuserdatauv(L, 1, 0);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, closed_for_interrupts);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &close_sentinel_key);
}

// Lua runs finalizers with hooks off, so no interrupt can stop one that
// loops while the state closes: a program that owns its process
// (lunar_ownprocess) ends it on Ctrl-C then, and its timeout's watchdog
// ends it when closing outlasts the grace (see Runtime.startWatchdog).
void lunar_close(lua_State *L) {
  lunar_Control *c = control(L);
  atomic_store(&c->running, L);
  atomic_store(&c->closing, 1);
  lua_close(L);
  lunar_smallrelease(&c->blocks);
  atomic_store(&c->closing, 0);
  lunar_releasesigintof(c);
  lunar_coveragefree(c->coverage);
  c->coverage = NULL;
  lunar_releasecontrol(c);
}

int lunar_isclosing(lunar_Control *c) { return atomic_load(&c->closing); }

void lunar_ownprocess(lua_State *L) { atomic_store(&control(L)->endsprocess, 1); }

void lunar_settracing(lunar_Control *c, int on) { c->tracing = on; }

// tracing(): asked by every action run, so a C function rather than a
// Swift host function.
int lunar_tracing(lua_State *L) {
  lua_pushboolean(L, control(L)->tracing);
  return 1;
}
