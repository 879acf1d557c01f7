// The yieldable `require` (and where it and table.sort are installed).
#include "Internal.h"

// MARK: - A yieldable require

// loadlib.c's ll_require and findloader, step for step, with every call
// (searchers and the loader) made by lua_callk: a module body that waits
// yields its task instead of running the loop nested above the frames
// beneath it. Upvalue 1 is the package table, as for the stock require.
// While searching the stack holds 1 the name, 2 LOADED, 3 package.searchers
// and 4 the "not found" message so far; a searcher's answers go to 5 and 6.

static int require_search(lua_State *L, lua_Integer i);
static int require_searched(lua_State *L, int status, lua_KContext ctx);
static int require_loaded(lua_State *L, int status, lua_KContext ctx);

// After a searcher returned (at -2, -1): true if it found a loader;
// otherwise adds its message, if any, to 4, as findloader's buffer does.
static int searcher_found(lua_State *L) {
  if (lua_isfunction(L, -2)) return 1;
  if (lua_isstring(L, -2)) {
    lua_pop(L, 1);
    lua_pushvalue(L, 4);
    lua_pushliteral(L, "\n\t");
    lua_rotate(L, -3, -1);  // message so far, "\n\t", this one
    lua_concat(L, 3);
    lua_replace(L, 4);
  } else {
    lua_pop(L, 2);
  }
  return 0;
}

// Stack: ...5 the loader, 6 its data. Calls loader(name, data).
static int require_load(lua_State *L) {
  lunar_coverageregister(control(L)->coverage, L, -2);
  lua_rotate(L, -2, 1);  // data, loader
  lua_pushvalue(L, 1);
  lua_pushvalue(L, -3);
  lua_callk(L, 2, 1, 0, require_loaded);
  return require_loaded(L, LUA_OK, 0);
}

static int require_search(lua_State *L, lua_Integer i) {
  for (;; i++) {
    if (lua_rawgeti(L, 3, i) == LUA_TNIL) {
      lua_pop(L, 1);
      return luaL_error(L, "module '%s' not found:%s", lua_tostring(L, 1), lua_tostring(L, 4));
    }
    lua_pushstring(L, lua_tostring(L, 1));  // as C text, as findloader passes it
    lua_callk(L, 1, 2, (lua_KContext)i, require_searched);
    if (searcher_found(L)) return require_load(L);
  }
}

static int require_searched(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  if (searcher_found(L)) return require_load(L);
  return require_search(L, (lua_Integer)ctx + 1);
}

// Stack: ...5 the loader's data, 6 what the loader returned.
static int require_loaded(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  const char *name = lua_tostring(L, 1);
  if (!lua_isnil(L, -1))
    lua_setfield(L, 2, name);  // LOADED[name] = returned value
  else
    lua_pop(L, 1);
  if (lua_getfield(L, 2, name) == LUA_TNIL) {  // the module set no value
    lua_pushboolean(L, 1);
    lua_copy(L, -1, -2);
    lua_setfield(L, 2, name);  // LOADED[name] = true
  }
  lua_rotate(L, -2, 1);  // the module, then the loader's data
  return 2;
}

int lunar_requireyieldable(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  lua_settop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, 2, name);
  if (lua_toboolean(L, -1)) return 1;  // already loaded
  lua_pop(L, 1);
  if (lua_getfield(L, lua_upvalueindex(1), "searchers") != LUA_TTABLE)
    return luaL_error(L, "'package.searchers' must be a table");
  lua_pushliteral(L, "");
  return require_search(L, 1);
}

void lunar_installyieldablecalls(lua_State *L) {
  int top = lua_gettop(L);
  lua_getglobal(L, "require");
  if (lua_type(L, -1) == LUA_TFUNCTION && lua_getupvalue(L, -1, 1) != NULL && lua_type(L, -1) == LUA_TTABLE) {
    lua_pushcclosure(L, lunar_requireyieldable, 1);
    lua_setglobal(L, "require");
  }
  lua_settop(L, top);
  lua_getglobal(L, "table");
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_pushcfunction(L, lunar_tablesort);
    lua_setfield(L, -2, "sort");
  }
  lua_settop(L, top);
}
