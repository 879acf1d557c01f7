// Host functions: the one trampoline every Swift function is called
// through, which raises, yields or returns as Swift's status says, and
// the `__index` of userdata classes with properties.
#include "Internal.h"

// MARK: - Host function trampoline

static lunar_Dispatch swift_dispatch;
static lunar_Release swift_release;
static const char *const HOSTFUNCTION = "lunar.hostfunction";

void lunar_configure(lunar_Dispatch dispatch, lunar_Release release) {
  swift_dispatch = dispatch;
  swift_release = release;
}

// The block of the userdata a host function keeps as its upvalue 1. Lua
// code can reach that userdata (debug.getupvalue), its metatable, and can
// replace the upvalue (debug.setupvalue), but never write the block: its
// tag says it is one.
typedef struct HostFunction {
  const void *tag;
  void *function;
} HostFunction;

static const char hostfunction_tag = 0;

// The block at `idx` if it is a host function's, else NULL.
static HostFunction *to_hostfunction(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TUSERDATA || lua_rawlen(L, idx) != sizeof(HostFunction)) return NULL;
  HostFunction *h = (HostFunction *)lua_touserdata(L, idx);
  return h->tag == &hostfunction_tag ? h : NULL;
}

// Raises `message` at the user's line that called the function.
int lunar_raiseatcaller(lua_State *L, const char *message) {
  lunar_pusherror(L, message);
  return lua_error(L);
}

static int hostfunction_gc(lua_State *L) {
  HostFunction *h = to_hostfunction(L, 1);
  if (h != NULL && h->function != NULL) {
    swift_release(h->function);
    h->function = NULL;
  }
  return 0;
}

static const char memory_error_key = 0;
#define MEMORY_ERROR ((void *)&memory_error_key)

void lunar_pushmemoryerror(lua_State *L) { lua_pushlightuserdata(L, MEMORY_ERROR); }

static int raise_memory_error(lua_State *L) {
  // Lua has no API to raise LUA_ERRMEM, but a request no allocator can
  // meet makes Lua raise it itself, with its own preallocated message,
  // exactly as when the limit stops an allocation.
  lua_newuserdatauv(L, UNAFFORDABLE, 0);
  return 0;  // not reached
}

// Raises the error value on top; lunar_pushmemoryerror's value becomes
// Lua's own memory error.
static int raise_error(lua_State *L) {
  if (lua_type(L, -1) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == MEMORY_ERROR)
    return raise_memory_error(L);
  return lua_error(L);
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
  return raise_error(L);
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
      return raise_error(L);
  }
}

static int trampoline(lua_State *L) {
  HostFunction *h = to_hostfunction(L, lua_upvalueindex(1));
  if (h == NULL) return lunar_raiseatcaller(L, CHANGED_UPVALUE);
  // Released: its finalizer ran (called by hand, or the state is closing
  // and finalizes everything, this function's box before a caller).
  if (h->function == NULL) return lunar_raiseatcaller(L, "this function of Lunar's was released and cannot run");
  int saved = arm(L, 0);
  int status = swift_dispatch(L, h->function);
  arm(L, saved);
  return lunar_finish(L, status);
}

void lunar_pushhostfunction(lua_State *L, void *function, int nup) {
  HostFunction *h = (HostFunction *)lua_newuserdatauv(L, sizeof(HostFunction), 0);
  h->tag = &hostfunction_tag;
  h->function = function;
  if (luaL_newmetatable(L, HOSTFUNCTION)) {
    lua_pushcfunction(L, hostfunction_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  if (nup > 0) lua_insert(L, -(nup + 1));
  lua_pushcclosure(L, trampoline, nup + 1);
}

// `__index` for userdata classes with properties (see LuaClass).
// Upvalue 1: the getter function; upvalue 2: the methods table. The getter
// is a host function: an error it raises unwinds only this C frame.
int lunar_classindex(lua_State *L) {
  if (lua_type(L, lua_upvalueindex(2)) != LUA_TTABLE)
    return lunar_raiseatcaller(L, CHANGED_UPVALUE);
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 2, 1);
  return 1;
}

void lunar_pushclassindex(lua_State *L) { lua_pushcclosure(L, lunar_classindex, 2); }
