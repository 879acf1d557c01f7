// The action chain of each task (lunar.actions: which actions run inside
// which, for the recursion limit and `ctx.chain`), kept in Lua by task id
// in a registry table: every action run sets it, and a host call into
// Swift for that was a twentieth of a workflow step. Task 0 is the code
// outside any task (the main chunk). A task starts with its creator's
// chain and its entry goes when it finishes.
#include "Internal.h"

// The registry key of the table of chains, by task id.
static const char chains_key = 0;

// Pushes the table of chains, or nil if none was made yet.
static int push_chains(lua_State *L) { return lua_rawgetp(L, LUA_REGISTRYINDEX, &chains_key); }

void lunar_setcurrenttask(lua_State *L, lua_Integer task) { control(L)->currenttask = task; }

int lunar_chain(lua_State *L) {
  if (push_chains(L) != LUA_TTABLE) return 1;
  lua_rawgeti(L, -1, control(L)->currenttask);
  return 1;
}

int lunar_setchain(lua_State *L) {
  lua_settop(L, 1);
  if (push_chains(L) != LUA_TTABLE) {
    lua_pop(L, 1);
    if (lua_isnil(L, 1)) return 0;
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &chains_key);
  }
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, control(L)->currenttask);
  return 0;
}

// inherit(parent, child), run protected: the new key may allocate.
static int inherit(lua_State *L) {
  lua_Integer parent = lua_tointeger(L, 1), child = lua_tointeger(L, 2);
  push_chains(L);
  lua_rawgeti(L, -1, parent);
  lua_rawseti(L, -2, child);
  return 0;
}

int lunar_inheritchain(lua_State *L, lua_Integer parent, lua_Integer child) {
  if (!lua_checkstack(L, 4)) return LUA_ERRMEM;
  int top = lua_gettop(L);
  int has_chain = push_chains(L) == LUA_TTABLE && lua_rawgeti(L, -1, parent) != LUA_TNIL;
  lua_settop(L, top);
  // Most tasks are made where no chain is set: nothing to copy, no call.
  if (!has_chain) return LUA_OK;
  lua_pushcfunction(L, inherit);
  lua_pushinteger(L, parent);
  lua_pushinteger(L, child);
  int status = lua_pcall(L, 2, 0, 0);
  lua_settop(L, top);
  return status;
}

void lunar_forgetchain(lua_State *L, lua_Integer task) {
  // Without room the entry stays: a stale chain under an id no later task
  // gets (ids start again only after lunar_forgetchains).
  if (!lua_checkstack(L, 2)) return;
  int top = lua_gettop(L);
  if (push_chains(L) == LUA_TTABLE && lua_rawgeti(L, -1, task) != LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushnil(L);
    // The key exists: setting it to nil allocates nothing, so cannot raise.
    lua_rawseti(L, -2, task);
  }
  lua_settop(L, top);
}

void lunar_forgetchains(lua_State *L) {
  if (!lua_checkstack(L, 1)) return;
  lua_pushnil(L);
  // Nil is never inserted as a new key (ltable.c): this cannot raise.
  lua_rawsetp(L, LUA_REGISTRYINDEX, &chains_key);
}
