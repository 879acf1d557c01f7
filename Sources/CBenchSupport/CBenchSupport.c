#include "CBenchSupport.h"
#include <lua5.4/lauxlib.h>

int bench_c_add(lua_State *L) {
  lua_Integer a = luaL_checkinteger(L, 1);
  lua_Integer b = luaL_checkinteger(L, 2);
  lua_pushinteger(L, a + b);
  return 1;
}

void bench_resume_loop(lua_State *L, lua_State *co, long n) {
  int nres;
  for (long i = 0; i < n; i++) {
    lua_resume(co, L, 0, &nres);
    lua_pop(co, nres);
  }
}
