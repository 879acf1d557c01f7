// Calls into Lua in protected mode, with the memory limit armed: pcall
// with a message handler that keeps a traceback, resume, and tostring.
#include "Internal.h"

// MARK: - Protected calls

static const char *const TRACEBACK = "lunar.traceback";

// Keeps the error value as it is (so tables and nil survive) and records
// the traceback beside it, in the registry: nil if it has no frame of the
// user's code to show.
static int message_handler(lua_State *L) {
  if (lunar_traceback(L, L, NULL, 1) == 0) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, TRACEBACK);
  lua_settop(L, 1);
  return 1;
}

void lunar_pushmessagehandler(lua_State *L) { lua_pushcfunction(L, message_handler); }

int lunar_pcallwith(lua_State *L, int nargs, int nresults, int msgh) {
  int saved = arm(L, 1);
  int status = lua_pcall(L, nargs, nresults, msgh);
  arm(L, saved);
  return status;
}

int lunar_pcall(lua_State *L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  int status = lunar_pcallwith(L, nargs, nresults, base);
  lua_remove(L, base);
  return status;
}

void lunar_pushtraceback(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, TRACEBACK);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, TRACEBACK);
}

int lunar_resume(lua_State *co, lua_State *from, int nargs, int *nresults) {
  lunar_Control *c = control(co);
  lua_State *previous = atomic_load(&c->running);
  // Publish the running thread before checking the flag: a signal handler
  // sets the flag before reading `running`, so one of the two sees the other.
  atomic_store(&c->running, co);
  lunar_hookforcoverage(c, co);
  // A coroutine the task resumes computes for the task: same deadline.
  lunar_watchdeadline(c, co);
  lunar_hookifinterrupted(c, co);
  int saved = arm(co, 1);
  int status = lua_resume(co, from, nargs, nresults);
  arm(co, saved);
  atomic_store(&c->running, previous);
  // Time may be up now: then the resumer is stopped at its next step too,
  // and cannot catch the error the coroutine ended with and go on.
  lunar_watchdeadline(c, previous);
  lunar_hookifinterrupted(c, previous);
  return status;
}

// MARK: - tostring in protected mode

static int tostring_protected(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  return 1;
}

const char *lunar_tostring(lua_State *L, int idx, size_t *len) {
  idx = lua_absindex(L, idx);
  lua_pushcfunction(L, tostring_protected);
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    lua_pushfstring(L, "(%s value)", lunar_typename(L, idx));
  }
  return lua_tolstring(L, -1, len);
}
