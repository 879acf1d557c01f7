// C baselines for the benchmarks: the same work written directly against
// the Lua C API, measured side by side with Lunar's Swift versions.
#ifndef CBENCHSUPPORT_H
#define CBENCHSUPPORT_H
#include <lua5.4/lua.h>

/// add(a, b) for two integers, as a plain lua_CFunction.
int bench_c_add(lua_State *L);
/// Resumes `co` (which yields once per iteration) `n` times: the cost of a
/// bare lua_resume/lua_yield round trip.
void bench_resume_loop(lua_State *L, lua_State *co, long n);
#endif
