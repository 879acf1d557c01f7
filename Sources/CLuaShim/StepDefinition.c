// `step "name" { ... }` of lunar.workflow, in C: a workflow may define tens
// of thousands of steps, and the usual one (only `uses` or `run`, `with`
// and `needs`, each well typed) is made here without running Lua code.
// Every other definition, and every bad one, goes to the module's Lua
// `make_step`, which checks it field by field and names the problem.
#include "Internal.h"

#include <string.h>

// The shared upvalue of every definer: what the module hands over, the
// source of the function that defined the last step (most steps of a file
// come from one function, and its source is then read once), and the keys
// of a step's fields as Lua strings (set with lua_rawset, without making
// each key again from C text).
enum {
  SHARED_STEP_META = 1, SHARED_NO_NEEDS, SHARED_MAKE_STEP, SHARED_LAST_FUNCTION, SHARED_LAST_SOURCE,
  SHARED_KEY_NAME, SHARED_KEY_SRC, SHARED_KEY_LINE, SHARED_KEY_RUN, SHARED_KEY_USES, SHARED_KEY_WITH,
  SHARED_KEY_NEEDS, SHARED_KEY_INDEX, SHARED_COUNT = SHARED_KEY_INDEX
};
static const char *const step_keys[] = { "name", "src", "line", "run", "uses", "with", "needs", "index" };

// Pushes the short source and the current line of the function calling the
// running C function, as debug.getinfo(2, "Sl") reads them from Lua; returns
// 0, pushing nothing, past the top of the stack.
static int push_where_defined(lua_State *L, int shared) {
  lua_Debug ar;
  if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "lf", &ar)) return 0;
  lua_rawgeti(L, shared, SHARED_LAST_FUNCTION);
  if (lua_rawequal(L, -1, -2)) {
    lua_pop(L, 2);
    lua_rawgeti(L, shared, SHARED_LAST_SOURCE);
  } else {
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, shared, SHARED_LAST_FUNCTION);
    lua_Debug source;
    lua_getinfo(L, ">S", &source);  // pops the function
    lua_pushstring(L, source.short_src);
    lua_pushvalue(L, -1);
    lua_rawseti(L, shared, SHARED_LAST_SOURCE);
  }
  lua_pushinteger(L, ar.currentline);
  return 1;
}

// The fields a plain step has, in the order is_plain_step leaves them.
enum { FIELD_USES, FIELD_RUN, FIELD_WITH, FIELD_NEEDS, FIELD_COUNT };

// Which of the fields a plain step has the string at `idx` names, or -1.
static int common_field(lua_State *L, int idx) {
  size_t length;
  const char *key = lua_tolstring(L, idx, &length);
  switch (length) {
  case 3: return memcmp(key, "run", 3) == 0 ? FIELD_RUN : -1;
  case 4: return memcmp(key, "uses", 4) == 0 ? FIELD_USES : memcmp(key, "with", 4) == 0 ? FIELD_WITH : -1;
  case 5: return memcmp(key, "needs", 5) == 0 ? FIELD_NEEDS : -1;
  default: return -1;
  }
}

// Whether the table at `idx`, without a metatable, is a list of names:
// its keys exactly 1..n, each value a string.
static int is_name_list(lua_State *L, int idx) {
  if (lua_getmetatable(L, idx)) {
    lua_pop(L, 1);
    return 0;
  }
  lua_Integer count = 0, highest = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int is_name = lua_type(L, -1) == LUA_TSTRING;
    lua_pop(L, 1);
    if (!is_name || !lua_isinteger(L, -1)) {
      lua_pop(L, 1);
      return 0;
    }
    lua_Integer key = lua_tointeger(L, -1);
    if (key < 1) {
      lua_pop(L, 1);
      return 0;
    }
    if (key > highest) highest = key;
    count++;
  }
  // n distinct positive keys, none above n: 1..n.
  return highest == count;
}

// Whether `spec` (at 1, a table) is a plain step's: no metatable, no field
// but the common ones, exactly one of a non-empty `uses` string and a `run`
// function, `with` a table or a function, `needs` a name or a list of them.
// A plain step's `uses`, `run`, `with` and `needs` are left on the stack,
// in that order; nothing is left of any other.
static int is_plain_step(lua_State *L) {
  if (lua_getmetatable(L, 1)) {
    lua_pop(L, 1);
    return 0;
  }
  // One walk over the spec: each field's value goes to its slot.
  int slots = lua_gettop(L) + 1;
  for (int i = 0; i < FIELD_COUNT; i++) lua_pushnil(L);
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    int field = lua_type(L, -2) == LUA_TSTRING ? common_field(L, -2) : -1;
    if (field < 0) {
      lua_settop(L, slots - 1);
      return 0;
    }
    lua_replace(L, slots + field);
  }
  int uses = lua_type(L, slots + FIELD_USES), run = lua_type(L, slots + FIELD_RUN);
  int with = lua_type(L, slots + FIELD_WITH), needs = lua_type(L, slots + FIELD_NEEDS);
  int plain = (uses == LUA_TNIL) != (run == LUA_TNIL)
    && (uses == LUA_TNIL || (uses == LUA_TSTRING && lua_rawlen(L, slots + FIELD_USES) > 0))
    && (run == LUA_TNIL || run == LUA_TFUNCTION)
    && (with == LUA_TNIL || with == LUA_TTABLE || with == LUA_TFUNCTION)
    && (needs == LUA_TNIL || needs == LUA_TSTRING || (needs == LUA_TTABLE && is_name_list(L, slots + FIELD_NEEDS)));
  if (!plain) lua_settop(L, slots - 1);
  return plain;
}

// Sets field `key` (a SHARED_KEY_ slot) of the new table at the top to the
// value at `idx`.
static void set_field(lua_State *L, int key, int idx) {
  lua_rawgeti(L, lua_upvalueindex(2), key);
  lua_pushvalue(L, idx);
  lua_rawset(L, -3);
}

// Sets field `key` of the new table at the top to the value at `idx`,
// unless that is nil (a new table has no such field anyway).
static void set_unless_nil(lua_State *L, int key, int idx) {
  if (!lua_isnil(L, idx)) set_field(L, key, idx);
}

// Raises `step "name": message` (the message at the top) at the line that
// called the definer.
static int raise_at_caller(lua_State *L) {
  luaL_where(L, 1);
  lua_insert(L, -2);
  lua_concat(L, 2);
  return lua_error(L);
}

// What the definer does once `make_step` has returned: its step, or its
// problem raised.
static int finish_slow(lua_State *L, int status, lua_KContext context) {
  (void)status;
  (void)context;
  if (lua_isnil(L, -2)) return raise_at_caller(L);
  lua_pop(L, 1);
  return 1;
}

// definer(spec): the step named by upvalue 1 with the fields `spec`.
static int define_step(lua_State *L) {
  int spec = lua_type(L, 1);
  if (spec != LUA_TTABLE) {
    lua_pushliteral(L, "step \"");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushfstring(L, "\": expected a table of fields, got %s", lua_typename(L, spec == LUA_TNONE ? LUA_TNIL : spec));
    lua_concat(L, 3);
    return raise_at_caller(L);
  }
  lua_settop(L, 1);
  int shared = lua_upvalueindex(2);
  int where = push_where_defined(L, shared);  // 2: src, 3: line
  if (!is_plain_step(L)) {
    lua_rawgeti(L, shared, SHARED_MAKE_STEP);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    if (where) {
      lua_pushvalue(L, 2);
      lua_pushvalue(L, 3);
    } else {
      lua_pushnil(L);
      lua_pushnil(L);
    }
    lua_callk(L, 4, 2, 0, finish_slow);
    return finish_slow(L, LUA_OK, 0);
  }
  // uses, run, with and needs, from is_plain_step: after src and line, if any.
  int fields = where ? 4 : 2;
  lua_createtable(L, 0, 8);
  set_field(L, SHARED_KEY_NAME, lua_upvalueindex(1));
  if (where) {
    set_field(L, SHARED_KEY_SRC, 2);
    set_field(L, SHARED_KEY_LINE, 3);
  }
  set_unless_nil(L, SHARED_KEY_RUN, fields + FIELD_RUN);
  set_unless_nil(L, SHARED_KEY_USES, fields + FIELD_USES);
  set_unless_nil(L, SHARED_KEY_WITH, fields + FIELD_WITH);
  lua_rawgeti(L, shared, SHARED_KEY_NEEDS);
  int needs = fields + FIELD_NEEDS;
  int kind = lua_type(L, needs);
  if (kind == LUA_TNIL) {
    lua_rawgeti(L, shared, SHARED_NO_NEEDS);
  } else if (kind == LUA_TSTRING) {
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, needs);
    lua_rawseti(L, -2, 1);
  } else {
    lua_pushvalue(L, needs);
  }
  lua_rawset(L, -3);
  lua_rawgeti(L, shared, SHARED_KEY_INDEX);
  lua_pushinteger(L, 0);
  lua_rawset(L, -3);
  lua_rawgeti(L, shared, SHARED_STEP_META);
  lua_setmetatable(L, -2);
  return 1;
}

// step(name) -> the definer of step `name`.
static int step(lua_State *L) {
  int kind = lua_type(L, 1);
  if (kind != LUA_TSTRING || lua_rawlen(L, 1) == 0) {
    return luaL_error(L, "bad argument #1 to 'step' (step name expected, got %s)",
      kind == LUA_TSTRING ? "an empty string" : lua_typename(L, kind == LUA_TNONE ? LUA_TNIL : kind));
  }
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushcclosure(L, define_step, 2);
  return 1;
}

int lunar_stepdefiner(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  lua_createtable(L, SHARED_COUNT, 0);
  for (int i = 1; i <= 3; i++) {
    lua_pushvalue(L, i);
    lua_rawseti(L, -2, i);
  }
  for (int key = SHARED_KEY_NAME; key <= SHARED_KEY_INDEX; key++) {
    lua_pushstring(L, step_keys[key - SHARED_KEY_NAME]);
    lua_rawseti(L, -2, key);
  }
  lua_pushcclosure(L, step, 1);
  return 1;
}
