// The C side of Lunar's Lua binding. See include/CLuaShim.h.
#include "CLuaShim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Allocator and control block

// Counts every byte Lua allocates. The limit is only enforced while Lua
// code runs under lunar_pcall/lunar_resume ("armed"): Swift frames call the
// C API outside any protected call, and a failed allocation there would
// longjmp through them. Swift host functions disarm it for their duration;
// an overshoot made by Swift is caught at Lua's next allocation.
static void *lunar_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  lunar_Control *c = (lunar_Control *)ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    c->used -= old;
    free(ptr);
    return NULL;
  }
  if (c->limit != 0 && c->armed > 0 && nsize > old && c->used - old + nsize > c->limit)
    return NULL;
  void *p = realloc(ptr, nsize);
  if (p == NULL) return NULL;
  c->used = c->used - old + nsize;
  if (c->used > c->peak) c->peak = c->used;
  return p;
}

static int lunar_panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "lunar: unprotected error in Lua: %s\n", msg ? msg : "(not a string)");
  fflush(stderr);
  return 0;  // Lua aborts after the panic function returns
}

lua_State *lunar_newstate(size_t limit) {
  lunar_Control *c = calloc(1, sizeof(lunar_Control));
  if (c == NULL) return NULL;
  c->limit = limit;
  lua_State *L = lua_newstate(lunar_alloc, c);
  if (L == NULL) {
    free(c);
    return NULL;
  }
  *(lunar_Control **)lua_getextraspace(L) = c;  // threads inherit it
  c->running = L;
  lua_atpanic(L, lunar_panic);
  return L;
}

void lunar_close(lua_State *L) {
  lunar_Control *c = lunar_control(L);
  lua_close(L);
  free(c);
}

static inline int arm(lua_State *L, int value) {
  lunar_Control *c = lunar_control(L);
  int saved = c->armed;
  c->armed = value;
  return saved;
}

// MARK: - Host function trampoline

static lunar_Dispatch swift_dispatch;
static lunar_Release swift_release;
static const char *const HOSTFUNCTION = "lunar.hostfunction";

void lunar_configure(lunar_Dispatch dispatch, lunar_Release release) {
  swift_dispatch = dispatch;
  swift_release = release;
}

typedef struct HostFunction {
  void *function;
} HostFunction;

static int hostfunction_gc(lua_State *L) {
  HostFunction *h = (HostFunction *)lua_touserdata(L, 1);
  if (h != NULL && h->function != NULL) {
    swift_release(h->function);
    h->function = NULL;
  }
  return 0;
}

// Resumed after LUNAR_STATUS_YIELD: `ctx` is the stack top before the yield;
// above it sit the values the scheduler resumed with.
static int resume_checked(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  int base = (int)ctx;
  int top = lua_gettop(L);
  if (top > base && lua_toboolean(L, base + 1))
    return top - base - 1;
  if (top < base + 2) lua_pushnil(L);
  else lua_pushvalue(L, base + 2);
  return lua_error(L);
}

static int resume_raw(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  return lua_gettop(L) - (int)ctx;
}

int lunar_finish(lua_State *L, int status) {
  if (status >= 0) return status;
  switch (status) {
    case LUNAR_STATUS_YIELD:
      return lua_yieldk(L, 1, (lua_KContext)(lua_gettop(L) - 1), resume_checked);
    case LUNAR_STATUS_YIELD_RAW:
      return lua_yieldk(L, 1, (lua_KContext)(lua_gettop(L) - 1), resume_raw);
    default:
      return lua_error(L);
  }
}

static int trampoline(lua_State *L) {
  HostFunction *h = (HostFunction *)lua_touserdata(L, lua_upvalueindex(1));
  int saved = arm(L, 0);
  int status = swift_dispatch(L, h->function);
  arm(L, saved);
  return lunar_finish(L, status);
}

void lunar_pushhostfunction(lua_State *L, void *function, int nup) {
  HostFunction *h = (HostFunction *)lua_newuserdatauv(L, sizeof(HostFunction), 0);
  h->function = function;
  if (luaL_newmetatable(L, HOSTFUNCTION)) {
    lua_pushcfunction(L, hostfunction_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  if (nup > 0) lua_insert(L, -(nup + 1));
  lua_pushcclosure(L, trampoline, nup + 1);
}

// MARK: - Protected calls

static const char *const TRACEBACK = "lunar.traceback";

// Keeps the error value as it is (so tables and nil survive) and records
// the traceback beside it, in the registry.
static int message_handler(lua_State *L) {
  luaL_traceback(L, L, NULL, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, TRACEBACK);
  lua_settop(L, 1);
  return 1;
}

int lunar_pcall(lua_State *L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  int saved = arm(L, 1);
  int status = lua_pcall(L, nargs, nresults, base);
  arm(L, saved);
  lua_remove(L, base);
  return status;
}

void lunar_pushtraceback(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, TRACEBACK);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, TRACEBACK);
}

int lunar_resume(lua_State *co, lua_State *from, int nargs, int *nresults) {
  lunar_Control *c = lunar_control(co);
  lua_State *previous = c->running;
  c->running = co;
  int saved = arm(co, 1);
  int status = lua_resume(co, from, nargs, nresults);
  arm(co, saved);
  c->running = previous;
  return status;
}

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

// MARK: - Error messages

const char *lunar_typename(lua_State *L, int idx) {
  int t = luaL_getmetafield(L, idx, "__name");
  if (t == LUA_TSTRING) {
    const char *name = lua_tostring(L, -1);
    lua_pop(L, 1);  // the metatable keeps the string alive
    return name;
  }
  if (t != LUA_TNIL) lua_pop(L, 1);
  if (lua_type(L, idx) == LUA_TLIGHTUSERDATA) return "light userdata";
  return luaL_typename(L, idx);
}

// Finds "module.name" for the running function in package.loaded, as
// lauxlib's pushglobalfuncname does; leaves the name on the stack.
static int push_global_name(lua_State *L, lua_Debug *ar) {
  int top = lua_gettop(L);
  lua_getinfo(L, "f", ar);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, top + 1)) {
            const char *module = lua_tostring(L, -4);
            const char *field = lua_tostring(L, -2);
            if (strcmp(module, LUA_GNAME) == 0) lua_pushstring(L, field);
            else lua_pushfstring(L, "%s.%s", module, field);
            lua_replace(L, top + 1);
            lua_settop(L, top + 1);
            return 1;
          }
          lua_pop(L, 1);
        }
      }
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
  return 0;
}

void lunar_pushargerror(lua_State *L, int arg, const char *extramsg) {
  lua_Debug ar;
  int top = lua_gettop(L);
  if (!lua_getstack(L, 0, &ar)) {
    lunar_pusherror(L, lua_pushfstring(L, "bad argument #%d (%s)", arg, extramsg));
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return;
  }
  lua_getinfo(L, "n", &ar);
  const char *message;
  if (ar.namewhat != NULL && strcmp(ar.namewhat, "method") == 0) {
    arg--;
    if (arg == 0) {
      message = lua_pushfstring(L, "calling '%s' on bad self (%s)", ar.name, extramsg);
      goto done;
    }
  }
  if (ar.name == NULL)
    ar.name = push_global_name(L, &ar) ? lua_tostring(L, -1) : "?";
  message = lua_pushfstring(L, "bad argument #%d to '%s' (%s)", arg, ar.name, extramsg);
done:
  lunar_pusherror(L, message);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
}

void lunar_pushtypeerror(lua_State *L, int arg, const char *tname) {
  int top = lua_gettop(L);
  const char *got = lunar_typename(L, arg);
  const char *extramsg = lua_pushfstring(L, "%s expected, got %s", tname, got);
  lunar_pushargerror(L, arg, extramsg);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
}

void lunar_pusherror(lua_State *L, const char *message) {
  luaL_where(L, 1);
  lua_pushstring(L, message);
  lua_concat(L, 2);
}

// MARK: - Loading

int lunar_loadbuffer(lua_State *L, const char *buf, size_t size, const char *name, const char *mode) {
  return luaL_loadbufferx(L, buf, size, name, mode);
}

int lunar_loadfile(lua_State *L, const char *filename, const char *mode) {
  return luaL_loadfilex(L, filename, mode);
}

static int openlibs(lua_State *L) {
  luaL_openlibs(L);
  return 0;
}

int lunar_openlibs(lua_State *L) {
  lua_pushcfunction(L, openlibs);
  return lua_pcall(L, 0, 0, 0);
}
