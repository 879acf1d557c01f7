// What a user sees of an error: messages in Lua's own words, pushed and
// never raised, positions and tracebacks that show the user's code rather
// than Lunar's chunks, and the names functions are known by.
#include "Internal.h"

#include <limits.h>
#include <string.h>

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

// MARK: - The user's code, not Lunar's, in what a user sees

int lunar_isinternalchunk(const char *source) {
  if (source == NULL || source[0] != '=') return 0;
  if (strncmp(source, "=lunar", 6) == 0) return source[6] == '\0' || source[6] == '.' || source[6] == ' ';
  return strcmp(source, "=busted") == 0 || strcmp(source, "=luassert") == 0 || strcmp(source, "=sandbox") == 0;
}

// True if the function at `level` of L belongs to Lunar: Lua code of one
// of its chunks, or a C function that such code called, directly or
// through other C functions (a host function, a pcall).
static int is_lunars_level(lua_State *L, int level) {
  lua_Debug ar;
  for (; lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "S", &ar);
    if (*ar.what != 'C') return lunar_isinternalchunk(ar.source);
  }
  return 0;
}

// The outermost level of the run of Lunar's frames that `level` is in: the
// function the user called (its caller is theirs), or the bottom of the
// stack when nothing of theirs called it.
static int entry_level(lua_State *L, int level) {
  while (is_lunars_level(L, level + 1)) level++;
  return level;
}

// luaL_where(L, level), moved past Lunar's frames to the code that called
// Lunar; with `skip_c`, past every C frame too, to the nearest Lua line.
// Pushes "chunk:line: " or "".
static void push_where(lua_State *L, int level, int skip_c) {
  lua_Debug ar;
  for (; lua_getstack(L, level, &ar); level++) {
    if (is_lunars_level(L, level)) continue;
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
    if (!skip_c) break;
  }
  lua_pushliteral(L, "");
}

void lunar_pushlocation(lua_State *L) { push_where(L, 1, 1); }

// The stack slots lunar_pushglobalname and push_method_name use at most.
#define NAME_SLOTS 12

// If the function at the top of L is in `table` (at `t`) under a string
// key, replaces it with "prefix<sep>key" (the shorter of that and a name
// already found below it, so the choice does not depend on table order).
// Stack: ... function, best name or nil.
static void consider_names(lua_State *L, int t, const char *prefix, const char *sep) {
  int function = lua_gettop(L) - 1;
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, function)) {
      const char *field = lua_tostring(L, -2);
      const char *name = prefix == NULL ? lua_pushstring(L, field) : lua_pushfstring(L, "%s%s%s", prefix, sep, field);
      const char *best = lua_tostring(L, function + 1);
      if (best == NULL || strlen(name) < strlen(best) || (strlen(name) == strlen(best) && strcmp(name, best) < 0))
        lua_replace(L, function + 1);
      else
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
}

// Names the function of `ar` (a frame of L1) on L as lauxlib's
// pushglobalfuncname does, "module.field" from package.loaded ("_G."
// dropped), but the shortest such name (`lunar.run`, not
// `lunar.actions.run`) whatever the table order. Leaves the name and
// returns 1, or leaves nothing and returns 0.
int lunar_pushglobalname(lua_State *L, lua_Debug *ar) {
  if (!lua_checkstack(L, NAME_SLOTS)) return 0;
  int top = lua_gettop(L);
  lua_getinfo(L, "f", ar);
  lua_pushnil(L);  // the best name so far
  if (lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) == LUA_TTABLE) {
    int loaded = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, loaded) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
        const char *module = lua_tostring(L, -2);
        int t = lua_gettop(L);
        lua_pushvalue(L, top + 1);
        lua_pushvalue(L, top + 2);
        consider_names(L, t, strcmp(module, LUA_GNAME) == 0 ? NULL : module, ".");
        lua_replace(L, top + 2);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top + 2);
  lua_remove(L, top + 1);
  if (lua_isnil(L, -1)) {
    lua_settop(L, top);
    return 0;
  }
  return 1;
}

// Names the function of `ar` as a method of one of Lunar's userdata
// classes, "class:method" (`queue:submit` for class `lunar.queue`, as the
// README writes it): what a method called without method syntax
// (`pcall(q.submit, q)`) is known by. Leaves the name and returns 1, or
// leaves nothing and returns 0.
static int push_method_name(lua_State *L, lua_Debug *ar) {
  if (!lua_checkstack(L, NAME_SLOTS)) return 0;
  int top = lua_gettop(L);
  lua_getinfo(L, "f", ar);
  lua_pushnil(L);  // the best name so far
  // registry["lunar.classes"] maps each class's metatable address to its
  // name (see LuaClass); methods are its __index table, or the methods
  // upvalue of its lunar_classindex.
  if (lua_getfield(L, LUA_REGISTRYINDEX, "lunar.classes") == LUA_TTABLE) {
    int classes = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, classes) != 0) {
      if (lua_type(L, -1) == LUA_TSTRING && luaL_getmetatable(L, lua_tostring(L, -1)) == LUA_TTABLE) {
        lua_pushliteral(L, "__index");
        if (lua_rawget(L, -2) == LUA_TFUNCTION && lua_tocfunction(L, -1) == lunar_classindex) {
          lua_getupvalue(L, -1, 2);
          lua_remove(L, -2);
        }
        if (lua_type(L, -1) == LUA_TTABLE) {
          int t = lua_gettop(L);
          lua_pushvalue(L, top + 1);
          lua_pushvalue(L, top + 2);
          const char *class_name = lua_tostring(L, t - 2);
          consider_names(L, t, strncmp(class_name, "lunar.", 6) == 0 ? class_name + 6 : class_name, ":");
          lua_replace(L, top + 2);
          lua_pop(L, 1);
        }
      }
      lua_settop(L, classes + 1);  // the key, for lua_next
    }
  }
  lua_settop(L, top + 2);
  lua_remove(L, top + 1);
  if (lua_isnil(L, -1)) {
    lua_settop(L, top);
    return 0;
  }
  return 1;
}

// Pushes the name of the public function the frame at `level` of L stands
// for: the name its caller used, or its global name; "?" if it has none.
static void push_public_name(lua_State *L, int level) {
  lua_Debug ar;
  if (lua_getstack(L, level, &ar)) {
    lua_getinfo(L, "n", &ar);
    if (ar.name != NULL) {
      lua_pushstring(L, ar.name);
      return;
    }
    if (lunar_pushglobalname(L, &ar) || push_method_name(L, &ar)) return;
  }
  lua_pushliteral(L, "?");
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
  if (is_lunars_level(L, 1)) {
    // Lunar's own Lua code called this function for the user's call: the
    // message names the function the user called, as they called it.
    int entry = entry_level(L, 1);
    lua_Debug caller;
    if (lua_getstack(L, entry + 1, &caller)) {
      push_public_name(L, entry);
      ar.name = lua_tostring(L, -1);
    }
  }
  if (ar.name == NULL)
    ar.name = lunar_pushglobalname(L, &ar) || push_method_name(L, &ar) ? lua_tostring(L, -1) : "?";
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
  push_where(L, 1, 0);
  lua_pushstring(L, message);
  lua_concat(L, 2);
}

// The global `error`: lbaselib's luaB_error, with the position of the
// user's code that called Lunar where `level` points into Lunar's own.
static int error_function(lua_State *L) {
  int level = (int)luaL_optinteger(L, 2, 1);
  lua_settop(L, 1);
  if (lua_type(L, 1) == LUA_TSTRING && level > 0) {
    push_where(L, level, 0);
    lua_pushvalue(L, 1);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

void lunar_installerror(lua_State *L) {
  lua_pushcfunction(L, error_function);
  lua_setglobal(L, "error");
}

// lauxlib's lastlevel: the deepest level of L1, by binary search.
static int last_level(lua_State *L1) {
  lua_Debug ar;
  int li = 1, le = 1;
  while (lua_getstack(L1, le, &ar)) {
    li = le;
    le *= 2;
  }
  while (li < le) {
    int m = (li + le) / 2;
    if (lua_getstack(L1, m, &ar)) li = m + 1;
    else le = m;
  }
  return le - 1;
}

// lauxlib's pushfuncname, with Lunar's names (see lunar_pushglobalname and
// push_method_name).
static void push_frame_name(lua_State *L, lua_Debug *ar) {
  if (lunar_pushglobalname(L, ar)) {
    lua_pushfstring(L, "function '%s'", lua_tostring(L, -1));
    lua_remove(L, -2);
  } else if (*ar->namewhat != '\0') {
    lua_pushfstring(L, "%s '%s'", ar->namewhat, ar->name);
  } else if (push_method_name(L, ar)) {
    lua_pushfstring(L, "function '%s'", lua_tostring(L, -1));
    lua_remove(L, -2);
  } else if (*ar->what == 'm') {
    lua_pushliteral(L, "main chunk");
  } else if (*ar->what != 'C') {
    lua_pushfstring(L, "function <%s:%d>", ar->short_src, ar->linedefined);
  } else {
    lua_pushliteral(L, "?");
  }
}

#define LEVELS1 10  // lauxlib's: frames shown before a skip
#define LEVELS2 11  // and after it

int lunar_traceback(lua_State *L, lua_State *L1, const char *msg, int level) {
  luaL_Buffer b;
  lua_Debug ar;
  int shown = 0;
  int last = last_level(L1);
  int limit2show = (last - level > LEVELS1 + LEVELS2) ? LEVELS1 : -1;
  luaL_buffinit(L, &b);
  if (msg) {
    luaL_addstring(&b, msg);
    luaL_addchar(&b, '\n');
  }
  luaL_addstring(&b, "stack traceback:");
  for (; lua_getstack(L1, level, &ar); level++) {
    if (limit2show-- == 0) {
      int n = last - level - LEVELS2;
      lua_pushfstring(L, "\n\t...\t(skipping %d levels)", n);
      luaL_addvalue(&b);
      level += n;
      shown++;
      continue;
    }
    if (is_lunars_level(L1, level)) {
      // Lunar's frames stay out of sight; the outermost, called by the
      // user's code, shows as the public function it is, as a C function
      // of a library would.
      lua_Debug caller;
      if (!lua_getstack(L1, level + 1, &caller) || is_lunars_level(L1, level + 1)) continue;
      lua_getinfo(L1, "Sn", &ar);
      if (lunar_pushglobalname(L, &ar)) {
        lua_pushfstring(L, "\n\t[C]: in function '%s'", lua_tostring(L, -1));
        lua_remove(L, -2);
      } else if (*ar.namewhat != '\0') {
        lua_pushfstring(L, "\n\t[C]: in %s '%s'", ar.namewhat, ar.name);
      } else if (push_method_name(L, &ar)) {
        lua_pushfstring(L, "\n\t[C]: in function '%s'", lua_tostring(L, -1));
        lua_remove(L, -2);
      } else {
        lua_pushliteral(L, "\n\t[C]: in ?");
      }
      luaL_addvalue(&b);
      shown++;
      continue;
    }
    lua_getinfo(L1, "Slnt", &ar);
    if (ar.currentline <= 0) lua_pushfstring(L, "\n\t%s: in ", ar.short_src);
    else lua_pushfstring(L, "\n\t%s:%d: in ", ar.short_src, ar.currentline);
    luaL_addvalue(&b);
    push_frame_name(L, &ar);
    luaL_addvalue(&b);
    if (ar.istailcall) luaL_addstring(&b, "\n\t(...tail calls...)");
    shown++;
  }
  luaL_pushresult(&b);
  return shown;
}

int lunar_userframe(lua_State *L1, int level, lua_Debug *ar) {
  for (; lua_getstack(L1, level, ar); level++) {
    lua_getinfo(L1, "Sl", ar);
    if (*ar->what != 'C' && !lunar_isinternalchunk(ar->source)) return 1;
  }
  return 0;
}

// caller(level): a C function, not a Swift host function, as a workflow
// definition calls it once per step.
int lunar_caller(lua_State *L) {
  lua_Integer level = luaL_checkinteger(L, 1);
  lua_Debug ar;
  if (level < 0 || level > INT_MAX || !lua_getstack(L, (int)level, &ar) || !lua_getinfo(L, "Sl", &ar)) return 0;
  lua_pushstring(L, ar.short_src);
  lua_pushinteger(L, ar.currentline);
  return 2;
}
