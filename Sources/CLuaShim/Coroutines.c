// Coroutines under the scheduler: the marker host yields carry, the
// coroutine library's replacements that pass it through user coroutines,
// the coroutines Lua code must not resume or close, and the C calls a
// user's own yield may not cross.
#include "Internal.h"

// MARK: - Host yields through user coroutines

static const char marker_key = 0;
#define HOST_MARKER ((void *)&marker_key)

void lunar_pushmarker(lua_State *L) { lua_pushlightuserdata(L, HOST_MARKER); }

int lunar_ismarker(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == HOST_MARKER;
}

// MARK: - Coroutines the user must not resume or close

// The threads Lua code must not resume or close are marked in their extra
// space (Internal.h): a task's coroutine (only the scheduler resumes it)
// and a user coroutine suspended in a host wait (it is still inside its
// resumer's call, which will resume it with the wait's result, so it
// behaves as a "normal" coroutine).

// The owner of the thread at `idx`; pushes the task's label if asked to.
static int thread_owner(lua_State *L, int idx, int pushlabel) {
  lua_State *co = lua_tothread(L, idx);
  if (co == NULL) return OWNER_NONE;
  int owner = (int)(tagged_control(co) & OWNER_BITS);
  if (pushlabel && owner == OWNER_TASK) {
    char label[256] = "a task";
    lunar_Control *c = control(L);
    if (c->tasklabel != NULL) c->tasklabel(c->tasklabelcontext, co, label, sizeof label);
    label[sizeof label - 1] = 0;
    lua_pushstring(L, label);
  }
  return owner;
}

static void set_owner(lua_State *L, int idx, int owner) {
  lua_State *co = lua_tothread(L, idx);
  if (co == NULL) return;
  uintptr_t *slot = (uintptr_t *)lua_getextraspace(co);
  *slot = (*slot & ~(uintptr_t)OWNER_BITS) | (uintptr_t)owner;
}

void lunar_settaskthread(lua_State *L, int idx, int istask) {
  set_owner(L, idx, istask ? OWNER_TASK : OWNER_NONE);
  // A new thread copies the main thread's extra space, seen bit and all.
  if (istask) {
    lua_State *co = lua_tothread(L, idx);
    if (co != NULL) *(uintptr_t *)lua_getextraspace(co) &= ~(uintptr_t)SEEN_BIT;
  }
}

void lunar_marktaskthread(lua_State *co) {
  uintptr_t *slot = (uintptr_t *)lua_getextraspace(co);
  *slot = (*slot & ~(uintptr_t)TAG_BITS) | (uintptr_t)OWNER_TASK;
}

int lunar_threadreusable(lua_State *co) {
  lua_Debug ar;
  // Returned: at its base, nothing on its stack; and nothing of the user's
  // left on it (Lua code never had it, no debug.sethook hook).
  return lua_status(co) == LUA_OK && lua_gettop(co) == 0 && !lua_getstack(co, 0, &ar) &&
         (tagged_control(co) & SEEN_BIT) == 0 && lunar_hasonlyownhook(co);
}

// coroutine.running, which marks the thread it returns as seen: Lua code
// may keep it, so the scheduler never gives it to another task. The main
// thread is never a task's (and other threads read its extra space).
static int co_running(lua_State *L) {
  int ismain = lua_pushthread(L);
  uintptr_t *slot = (uintptr_t *)lua_getextraspace(L);
  if (!ismain && (*slot & SEEN_BIT) == 0) *slot |= SEEN_BIT;
  lua_pushboolean(L, ismain);
  return 2;
}

void lunar_settasklabel(lua_State *L, lunar_TaskLabel label, void *context) {
  lunar_Control *c = control(L);
  c->tasklabel = label;
  c->tasklabelcontext = context;
}

// Two callers share the driving loop: coroutine.resume (the coroutine is
// argument 1, results are `true, ...` or `false, err`) and the functions
// coroutine.wrap makes (the coroutine is upvalue 1, errors propagate).
// Upvalue 1 of resume, and upvalue 2 of a wrapped function, is the waiting
// function that the runtime installed.
enum { MODE_RESUME = 0, MODE_WRAP = 1 };

static lua_State *mode_coroutine(lua_State *L, int mode) {
  return lua_tothread(L, mode == MODE_RESUME ? 1 : lua_upvalueindex(1));
}

static int mode_base(int mode) { return mode == MODE_RESUME ? 1 : 0; }

static int mode_index(int mode) { return mode == MODE_RESUME ? 1 : lua_upvalueindex(1); }

static int deliver(lua_State *L, lua_State *co, int status, int nres, int mode) {
  if (status == LUA_OK || status == LUA_YIELD) {
    if (!lua_checkstack(L, nres + 1)) {
      lua_pop(co, nres);
      lua_pushliteral(L, "too many results to resume");
      goto failed;
    }
    if (mode == MODE_RESUME) lua_pushboolean(L, 1);
    lua_xmove(co, L, nres);
    return nres + (mode == MODE_RESUME ? 1 : 0);
  }
  lua_xmove(co, L, 1);
failed:
  if (mode == MODE_RESUME) {
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }
  // As lcorolib's auxwrap: close the dead coroutine (an error while closing
  // replaces the original) and prefix the caller's position to strings.
  {
    int stat = lua_status(co);
    if (stat != LUA_OK && stat != LUA_YIELD) {
      stat = lua_resetthread(co);
      lua_xmove(co, L, 1);
    }
    if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
      luaL_where(L, 1);
      lua_insert(L, -2);
      lua_concat(L, 2);
    }
    return lua_error(L);
  }
}

static int resume_after_wait(lua_State *L, int status, lua_KContext ctx);

static int drive(lua_State *L, lua_State *co, int narg, int mode) {
  for (;;) {
    int nres = 0;
    int status = lunar_resume(co, L, narg, &nres);
    if (status == LUA_YIELD && nres == 1 && lunar_ismarker(co, -1)) {
      lua_pop(co, 1);
      set_owner(L, mode_index(mode), OWNER_WAIT);
      lua_pushvalue(L, lua_upvalueindex(mode == MODE_RESUME ? 1 : 2));
      lua_callk(L, 0, LUA_MULTRET, (lua_KContext)mode, resume_after_wait);
      // The waiting function returned without yielding (it ran the loop).
      set_owner(L, mode_index(mode), OWNER_NONE);
      narg = lua_gettop(L) - mode_base(mode);
      lua_xmove(L, co, narg);
      continue;
    }
    return deliver(L, co, status, nres, mode);
  }
}

static int resume_after_wait(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  int mode = (int)ctx;
  lua_State *co = mode_coroutine(L, mode);
  set_owner(L, mode_index(mode), OWNER_NONE);
  int narg = lua_gettop(L) - mode_base(mode);
  lua_xmove(L, co, narg);
  return drive(L, co, narg, mode);
}

static int start(lua_State *L, lua_State *co, int narg, int mode) {
  switch (thread_owner(L, mode_index(mode), 1)) {
    case OWNER_TASK:
      return luaL_argerror(L, 1, lua_pushfstring(L,
        "the coroutine of %s is run by the scheduler; await the task instead", lua_tostring(L, -1)));
    case OWNER_WAIT:
      // What lua_resume answers for a coroutine inside a resume, delivered
      // as coroutine.resume and auxwrap deliver it.
      lua_pushliteral(L, "cannot resume non-suspended coroutine");
      if (mode == MODE_RESUME) {
        lua_pushboolean(L, 0);
        lua_insert(L, -2);
        return 2;
      }
      luaL_where(L, 1);
      lua_insert(L, -2);
      lua_concat(L, 2);
      return lua_error(L);
  }
  if (!lua_checkstack(co, narg)) {
    lua_pushliteral(L, "too many arguments to resume");
    if (mode == MODE_RESUME) {
      lua_pushboolean(L, 0);
      lua_insert(L, -2);
      return 2;
    }
    return lua_error(L);
  }
  lua_xmove(L, co, narg);
  return drive(L, co, narg, mode);
}

static int co_resume(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argexpected(L, co, 1, "thread");  // the wording Debian's lua5.4 uses
  return start(L, co, lua_gettop(L) - 1, MODE_RESUME);
}

static int co_wrapped(lua_State *L) {
  lua_State *co = lua_tothread(L, lua_upvalueindex(1));
  if (co == NULL) return lunar_raiseatcaller(L, CHANGED_UPVALUE);
  return start(L, co, lua_gettop(L), MODE_WRAP);
}

static int co_wrap(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_State *co = lua_newthread(L);
  lua_pushvalue(L, 1);
  lua_xmove(L, co, 1);
  lua_pushvalue(L, lua_upvalueindex(1));  // the waiting function
  lua_pushcclosure(L, co_wrapped, 2);
  return 1;
}

// Stock C functions that call Lua with a continuation, so a yield passes
// through them; the same in every state (one library), recorded when the
// first state installs Lunar's coroutine functions.
static _Atomic(lua_CFunction) stock_pcall, stock_xpcall, stock_dofile;

static void record_stock(lua_State *L, const char *name, _Atomic(lua_CFunction) *slot) {
  lua_getglobal(L, name);
  lua_CFunction f = lua_tocfunction(L, -1);
  if (f != NULL) atomic_store(slot, f);
  lua_pop(L, 1);
}

// lcorolib's auxstatus, with a coroutine suspended in a host wait counted
// as "normal" (it is inside its resumer's call).
enum { COS_RUN, COS_DEAD, COS_YIELD, COS_NORM };
static const char *const statname[] = {"running", "dead", "suspended", "normal"};

static int co_statusof(lua_State *L, lua_State *co) {
  if (L == co) return COS_RUN;
  if (thread_owner(L, 1, 0) == OWNER_WAIT) return COS_NORM;
  switch (lua_status(co)) {
    case LUA_YIELD:
      return COS_YIELD;
    case LUA_OK: {
      lua_Debug ar;
      if (lua_getstack(co, 0, &ar)) return COS_NORM;
      return lua_gettop(co) == 0 ? COS_DEAD : COS_YIELD;
    }
    default:
      return COS_DEAD;
  }
}

static int co_status(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argexpected(L, co, 1, "thread");
  lua_pushstring(L, statname[co_statusof(L, co)]);
  return 1;
}

// lcorolib's luaB_close, refusing a task's coroutine: closing it under the
// scheduler would leave the task to be resumed dead.
static int co_close(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argexpected(L, co, 1, "thread");
  if (thread_owner(L, 1, 1) == OWNER_TASK)
    return luaL_argerror(L, 1, lua_pushfstring(L,
      "the coroutine of %s is run by the scheduler; cancel the task instead", lua_tostring(L, -1)));
  int status = co_statusof(L, co);
  if (status != COS_DEAD && status != COS_YIELD)
    return luaL_error(L, "cannot close a %s coroutine", statname[status]);
  if (lua_resetthread(co) == LUA_OK) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_xmove(co, L, 1);
  return 2;
}

// Lunar's table.sort and require call Lua with a continuation, so that a
// host wait inside a comparator or a module body yields its task. Stock
// Lua calls both without one: a user's own yield there must still fail as
// it does in lua5.4 (Lua's test suite checks it), and isyieldable must
// still answer false. Only the host's marker yield (lunar_yield, through
// the trampoline) passes them.
static int blocks_user_yields(lua_State *co) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(co, level, &ar); level++) {
    if (!lua_getinfo(co, "f", &ar)) continue;
    lua_CFunction f = lua_tocfunction(co, -1);
    lua_pop(co, 1);
    if (f == lunar_tablesort || f == lunar_requireyieldable) return 1;
  }
  return 0;
}

// lcorolib's luaB_yield, refused where stock Lua could not yield.
static int co_yield(lua_State *L) {
  if (lua_isyieldable(L) && blocks_user_yields(L)) {
    lua_pushliteral(L, "attempt to yield across a C-call boundary");
    return lua_error(L);
  }
  return lua_yield(L, lua_gettop(L));
}

// lcorolib's luaB_yieldable, answering as stock Lua would.
static int co_isyieldable(lua_State *L) {
  lua_State *co = lua_isnone(L, 1) ? L : lua_tothread(L, 1);
  luaL_argexpected(L, co, 1, "thread");
  lua_pushboolean(L, lua_isyieldable(co) && !blocks_user_yields(co));
  return 1;
}

void lunar_installcoroutines(lua_State *L) {
  int wait = lua_gettop(L);
  record_stock(L, "pcall", &stock_pcall);
  record_stock(L, "xpcall", &stock_xpcall);
  record_stock(L, "dofile", &stock_dofile);
  lua_getglobal(L, "coroutine");
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_pushcfunction(L, co_status);
    lua_setfield(L, -2, "status");
    lua_pushcfunction(L, co_close);
    lua_setfield(L, -2, "close");
    lua_pushcfunction(L, co_yield);
    lua_setfield(L, -2, "yield");
    lua_pushcfunction(L, co_isyieldable);
    lua_setfield(L, -2, "isyieldable");
    lua_pushcfunction(L, co_running);
    lua_setfield(L, -2, "running");
    lua_pushvalue(L, wait);
    lua_pushcclosure(L, co_resume, 1);
    lua_setfield(L, -2, "resume");
    lua_pushvalue(L, wait);
    lua_pushcclosure(L, co_wrap, 1);
    lua_setfield(L, -2, "wrap");
  }
  lua_settop(L, wait - 1);
}

// MARK: - Why a wait could not yield

static int passes_yields(lua_CFunction f) {
  return f == co_resume || f == co_wrapped || f == lunar_requireyieldable || f == lunar_tablesort ||
         f == lunar_coveragedofile ||
         f == atomic_load(&stock_pcall) ||
         f == atomic_load(&stock_xpcall) || f == atomic_load(&stock_dofile);
}

int lunar_pushblockingcall(lua_State *L, lua_State *co) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(co, level, &ar); level++) {
    lua_getinfo(co, "Snf", &ar);
    lua_CFunction f = lua_tocfunction(co, -1);
    lua_pop(co, 1);
    if (*ar.what != 'C' || passes_yields(f)) continue;
    // Named as luaL_traceback names it.
    if (lunar_pushglobalname(co, &ar)) {
      lua_pushfstring(co, "function '%s'", lua_tostring(co, -1));
      lua_remove(co, -2);
    } else if (*ar.namewhat != '\0') {
      lua_pushfstring(co, "%s '%s'", ar.namewhat, ar.name);
    } else {
      lua_pushliteral(co, "a C function");
    }
    lua_xmove(co, L, 1);
    return 1;
  }
  return 0;
}
