// Lua's loading functions and standard libraries, callable from Swift, and
// the stdout Lua writes to.
#include "Internal.h"

#include <stdio.h>

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
