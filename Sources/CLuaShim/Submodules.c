// The `lunar` table's sub-modules, loaded on first use.
#include "Internal.h"

#include <string.h>

// The keys the actions module puts in the `lunar` table when it loads,
// rather than being a module of their own name.
static const char *const action_keys[] = {"action", "run", "run_stubbed", NULL};

static int is_action_key(lua_State *L, int idx) {
  size_t length;
  const char *key = lua_tolstring(L, idx, &length);
  for (const char *const *k = action_keys; *k != NULL; k++) {
    if (strlen(*k) == length && memcmp(*k, key, length) == 0) return 1;
  }
  return 0;
}

// Whether registry[table][module at `module`] is set: the table is
// LUA_PRELOAD_TABLE or LUA_LOADED_TABLE, which back package.preload and
// package.loaded, as `require` reads them.
static int registered(lua_State *L, const char *table, int module) {
  int found = 0;
  if (lua_getfield(L, LUA_REGISTRYINDEX, table) == LUA_TTABLE) {
    lua_pushvalue(L, module);
    found = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return found;
}

// After `require` returned its first result: for an action key, the value
// the actions module put in the table; otherwise that result.
static int submodule_loaded(lua_State *L, int status, lua_KContext action_key) {
  (void)status;
  if (action_key) {
    lua_pushvalue(L, 2);
    lua_rawget(L, 1);
  }
  return 1;
}

// __index(lunar, key): nil for a key that names no module (as a missing
// field is), else what `require` gives, called with a continuation so a
// module body in a task may yield.
static int submodule_index(lua_State *L) {
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  int action_key = is_action_key(L, 2);
  if (action_key) {
    lua_pushliteral(L, "lunar.actions");
  } else {
    lua_pushliteral(L, "lunar.");
    lua_pushvalue(L, 2);
    lua_concat(L, 2);
  }
  int module = lua_gettop(L);
  if (!registered(L, LUA_PRELOAD_TABLE, module) && !registered(L, LUA_LOADED_TABLE, module)) return 0;
  lua_getglobal(L, "require");
  lua_pushvalue(L, module);
  lua_callk(L, 1, 1, (lua_KContext)action_key, submodule_loaded);
  return submodule_loaded(L, LUA_OK, (lua_KContext)action_key);
}

void lunar_installsubmodules(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, submodule_index);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, idx);
}
