// A record of everything Lua code can reach in a state, and putting it back.
//
// A spec runner that reuses one state for many files must hand each file
// the state as it was before the first: the tables, upvalues, userdata
// metatables and user values reachable from the registry, the main
// thread's stack and the basic types' metatables. lunar_snapshotstate walks
// that graph once and keeps, in the registry, the identity of every
// mutable object with a copy of its contents. lunar_restorestate puts each
// one back (keys added, removed or changed; metatables; upvalues), so what
// a file created is no longer reachable from anything the next file can
// see, and is collected.
//
// The registry is not restored blindly: Swift keeps references in it
// (luaL_ref slots), and code outside Lua (a cache, a class made on first
// use) may add entries that Swift still relies on. Any change to its
// non-integer keys, to a slot live at the snapshot, or a slot live now that
// was not then, means the state cannot be restored: the caller discards it.
// Slots on luaL_ref's free list are put back as they were.
//
// Upvalues are put back by value; a closure whose upvalue was joined to
// another one's (debug.upvaluejoin) no longer shares it with its siblings,
// which no value can undo: the snapshot's `debug.upvaluejoin` notes a join
// on a recorded closure, and the state is then refused. So is a state that
// loaded a C library: closing it would unload the library (its static data
// with it), and a restored state would keep it loaded.
//
// Objects a script made that nothing reaches once the state is restored are
// collected before the next script, so their finalizers run then (as a
// state's close would run them), not during the next script. A finalizer
// written in Lua may change what it reaches, so the restore is checked
// again after that collection, but only when one may exist: the snapshot
// replaces `setmetatable` and `debug.setmetatable`, wherever it finds them,
// with copies of the stock functions that also note a metatable with
// `__gc` (Lua can make a finalizer no other way; C functions such as
// Lunar's userdata have C ones), and a changed `__gc` field counts too.
//
// Every call that may allocate (and so raise a memory error) runs inside a
// protected call: nothing here unwinds through the caller.
#include "CLuaShim.h"

#include <math.h>
#include <string.h>

static const char snapshot_key = 0;
#define SNAPSHOT_KEY ((void *)&snapshot_key)
// Stands for nil (and for "no metatable") in the snapshot's arrays.
static const char none_key = 0;
#define NONE ((void *)&none_key)

// luaL_ref's free-list header in the registry (lauxlib.c: slot 0 before
// Lua 5.4.3, the slot after the predefined ones since).
#if LUA_VERSION_RELEASE_NUM < 50403
#define FREELIST 0
#else
#define FREELIST (LUA_RIDX_LAST + 1)
#endif

// The snapshot's fields: each an array, index by index in step.
enum {
  F_TABLES = 1,      // tables reached
  F_COPIES,          // a copy of each table's contents
  F_METAS,           // each table's metatable, or NONE
  F_COUNTS,          // how many entries each copy holds (until the index has them)
  F_FUNCTIONS,       // for each upvalue cell: a function that has it
  F_UPINDEXES,       // its index in that function (until the index has them)
  F_UPVALUES,        // its value, or NONE
  F_USERDATA,        // full userdata reached
  F_USERMETAS,       // each one's metatable, or NONE
  F_USERVALUES,      // each one's user values, as an array (NONE for nil)
  F_THREADS,         // coroutines reached (never the main thread)
  F_THREADSTACKS,    // each one's status and stack: { status, v1, ..., vn } (NONE for nil)
  F_TYPEMETAS,       // the metatable of each basic type (by LUA_T* + 1), or NONE
  F_STACK,           // the main thread's stack, { n, v1, ..., vn }
  F_LIVESLOTS,       // registry slots in use: slot -> true
  F_NONINTEGERS,     // how many non-integer keys the registry holds
  F_HOOK,            // the main thread's hook: { hook, mask, count }
  F_INDEX,           // an Index (below), as a full userdata
  F_WATCH,           // the Watch (below), as a full userdata
  F_CLIBS,           // the registry's _CLIBS table (C libraries loaded), or NONE
  F_FIELDCOUNT = F_CLIBS
};

// What the restore reads for every table and upvalue, kept as C arrays so
// the common case (nothing changed) costs no calls into Lua for it.
typedef struct Index {
  lua_Integer tables, upvalues;
  lua_Integer registry;  // the registry's position among the tables
  // then, for each table: its entry count and its metatable's address
  // (NULL: none); for each upvalue cell: its index in the function.
} Index;

static lua_Integer *index_counts(Index *x) { return (lua_Integer *)(x + 1); }
static const void **index_metas(Index *x) { return (const void **)(index_counts(x) + x->tables); }
static int *index_upindexes(Index *x) { return (int *)(index_metas(x) + x->tables); }

// MARK: - Values

static void push_or_none(lua_State *L, int idx) {
  if (lua_isnil(L, idx)) lua_pushlightuserdata(L, NONE);
  else lua_pushvalue(L, idx);
}

// Replaces NONE on top of the stack with nil.
static void none_to_nil(lua_State *L) {
  if (lua_type(L, -1) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == NONE) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
}

// The same value, as a program could tell: unlike lua_rawequal, an integer
// is not the same as the float of equal value, -0.0 is not 0.0, and a NaN is
// the same as itself (a table holding one is not changed on every restore).
static int same(lua_State *L, int a, int b) {
  if (lua_type(L, a) != LUA_TNUMBER) return lua_rawequal(L, a, b);
  if (lua_type(L, b) != LUA_TNUMBER || lua_isinteger(L, a) != lua_isinteger(L, b)) return 0;
  if (lua_isinteger(L, a)) return lua_tointeger(L, a) == lua_tointeger(L, b);
  lua_Number x = lua_tonumber(L, a), y = lua_tonumber(L, b);
  return memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y));
}

static int collectable(int type) {
  return type == LUA_TTABLE || type == LUA_TFUNCTION || type == LUA_TUSERDATA || type == LUA_TTHREAD;
}

static void append(lua_State *L, int array) {
  lua_rawseti(L, array, (lua_Integer)lua_rawlen(L, array) + 1);
}

// A value standing for basic type `type`, to read or set its metatable.
static void push_sample(lua_State *L, int type) {
  switch (type) {
  case LUA_TNIL: lua_pushnil(L); break;
  case LUA_TBOOLEAN: lua_pushboolean(L, 0); break;
  case LUA_TLIGHTUSERDATA: lua_pushlightuserdata(L, NULL); break;
  case LUA_TNUMBER: lua_pushinteger(L, 0); break;
  case LUA_TSTRING: lua_pushliteral(L, ""); break;
  case LUA_TFUNCTION: lua_pushcfunction(L, lunar_tablesort); break;
  default: lua_pushthread(L); break;
  }
}

static const int BASIC_TYPES[] = {
  LUA_TNIL, LUA_TBOOLEAN, LUA_TLIGHTUSERDATA, LUA_TNUMBER, LUA_TSTRING, LUA_TFUNCTION, LUA_TTHREAD,
};
#define BASIC_TYPE_COUNT ((int)(sizeof BASIC_TYPES / sizeof BASIC_TYPES[0]))

// MARK: - The watch

// What the watched stock functions (upvalue 1 of each) saw since the last
// restore.
typedef struct Watch {
  const void *tag;  // &watch_tag: debug.setupvalue may put another value in its place
  int finalizers;   // a metatable with __gc was set
  int joined;       // an upvalue of a recorded closure was joined to another
} Watch;

static const char watch_tag = 0;

// The watch, or an error if debug.setupvalue replaced it (or, for
// upvaluejoin, its table of closures).
static Watch *watch_of(lua_State *L) {
  int w = lua_upvalueindex(1);
  Watch *watch = lua_type(L, w) == LUA_TUSERDATA && lua_rawlen(L, w) == sizeof(Watch) ? (Watch *)lua_touserdata(L, w) : NULL;
  if (watch == NULL || watch->tag != &watch_tag)
    luaL_error(L, "this function of Lunar's was changed with debug.setupvalue and cannot run");
  return watch;
}

// Notes whether the metatable at `mt` has __gc, which is when setting it
// makes an object finalizable (lgc.c).
static void note_finalizer(lua_State *L, int mt) {
  if (lua_type(L, mt) != LUA_TTABLE) return;
  lua_pushliteral(L, "__gc");
  if (lua_rawget(L, mt) != LUA_TNIL) watch_of(L)->finalizers = 1;
  lua_pop(L, 1);
}

// lbaselib.c's luaB_setmetatable (Lua 5.4), noting finalizers.
static int watched_setmetatable(lua_State *L) {
  int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL) return luaL_error(L, "cannot change a protected metatable");
  note_finalizer(L, 2);
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

// ldblib.c's db_setmetatable (Lua 5.4), noting finalizers.
static int watched_debugsetmetatable(lua_State *L) {
  int t = lua_type(L, 2);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  note_finalizer(L, 2);
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

// ldblib.c's checkupval (Lua 5.4).
static int check_upvalue(lua_State *L, int argf, int argnup) {
  int nup = (int)luaL_checkinteger(L, argnup);
  luaL_checktype(L, argf, LUA_TFUNCTION);
  luaL_argcheck(L, lua_upvalueid(L, argf, nup) != NULL, argnup, "invalid upvalue index");
  return nup;
}

// ldblib.c's db_upvaluejoin (Lua 5.4), noting a join on a recorded closure
// (upvalue 2: the set of them).
static int watched_upvaluejoin(lua_State *L) {
  int n1 = check_upvalue(L, 1, 2);
  int n2 = check_upvalue(L, 3, 4);
  luaL_argcheck(L, !lua_iscfunction(L, 1), 1, "Lua function expected");
  luaL_argcheck(L, !lua_iscfunction(L, 3), 3, "Lua function expected");
  Watch *watch = watch_of(L);
  if (lua_type(L, lua_upvalueindex(2)) != LUA_TTABLE)
    return luaL_error(L, "this function of Lunar's was changed with debug.setupvalue and cannot run");
  lua_pushvalue(L, 1);
  if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) watch->joined = 1;
  lua_pop(L, 1);
  lua_upvaluejoin(L, 1, n1, 3, n2);
  return 0;
}

// MARK: - Taking the snapshot

typedef struct Walk {
  int seen;      // object -> true
  int queue;     // objects still to visit
  int cells;     // upvalue ids seen (a cell shared by closures is kept once)
  int snapshot;  // the snapshot table
  int originals; // stock function -> its watched replacement
  int closures;  // the Lua closures recorded (a set)
  lua_Integer head;
} Walk;

// Replaces the value on top by its watched version, if it is one of the
// stock functions the watch replaces; returns 1 if it did.
static int watched(lua_State *L, Walk *w) {
  if (lua_type(L, -1) != LUA_TFUNCTION) return 0;
  lua_pushvalue(L, -1);
  if (lua_rawget(L, w->originals) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  lua_replace(L, -2);
  return 1;
}

static int field(lua_State *L, int snapshot, int which) {
  lua_rawgeti(L, snapshot, which);
  return lua_gettop(L);
}

// Queues the value on top (popped) if it is an object not seen yet.
static void reach(lua_State *L, Walk *w) {
  if (!collectable(lua_type(L, -1))) {
    lua_pop(L, 1);
    return;
  }
  lua_pushvalue(L, -1);
  if (lua_rawget(L, w->seen) != LUA_TNIL) {
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  lua_pushvalue(L, -1);
  lua_pushboolean(L, 1);
  lua_rawset(L, w->seen);
  append(L, w->queue);
}

static void record_table(lua_State *L, Walk *w, int t) {
  luaL_checkstack(L, 8, NULL);
  lua_newtable(L);
  int copy = lua_gettop(L);
  lua_Integer count = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (watched(L, w)) {
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_rawset(L, t);  // an existing field changes: allowed while traversing
    }
    lua_pushvalue(L, -2);
    lua_pushvalue(L, -2);
    lua_rawset(L, copy);
    count++;
    lua_pushvalue(L, -2);
    reach(L, w);
    reach(L, w);
  }
  int base = lua_gettop(L);
  int tables = field(L, w->snapshot, F_TABLES);
  lua_pushvalue(L, t);
  append(L, tables);
  field(L, w->snapshot, F_COPIES);
  lua_pushvalue(L, copy);
  append(L, -2);
  field(L, w->snapshot, F_METAS);
  if (lua_getmetatable(L, t)) {
    lua_pushvalue(L, -1);
    reach(L, w);
  } else {
    lua_pushlightuserdata(L, NONE);
  }
  append(L, -2);
  field(L, w->snapshot, F_COUNTS);
  lua_pushinteger(L, count);
  append(L, -2);
  lua_settop(L, base - 1);
}

static void record_function(lua_State *L, Walk *w, int f) {
  luaL_checkstack(L, 8, NULL);
  if (!lua_iscfunction(L, f)) {
    lua_pushvalue(L, f);
    lua_pushboolean(L, 1);
    lua_rawset(L, w->closures);
  }
  for (int i = 1;; i++) {
    if (lua_getupvalue(L, f, i) == NULL) return;
    lua_pushlightuserdata(L, lua_upvalueid(L, f, i));
    if (lua_rawget(L, w->cells) != LUA_TNIL) {
      lua_pop(L, 2);
      continue;
    }
    lua_pop(L, 1);
    lua_pushlightuserdata(L, lua_upvalueid(L, f, i));
    lua_pushboolean(L, 1);
    lua_rawset(L, w->cells);
    if (watched(L, w)) {
      lua_pushvalue(L, -1);
      lua_setupvalue(L, f, i);
    }
    int value = lua_gettop(L);
    field(L, w->snapshot, F_FUNCTIONS);
    lua_pushvalue(L, f);
    append(L, -2);
    field(L, w->snapshot, F_UPINDEXES);
    lua_pushinteger(L, i);
    append(L, -2);
    field(L, w->snapshot, F_UPVALUES);
    push_or_none(L, value);
    append(L, -2);
    lua_settop(L, value);
    reach(L, w);
  }
}

static void record_userdata(lua_State *L, Walk *w, int u) {
  luaL_checkstack(L, 8, NULL);
  int base = lua_gettop(L);
  field(L, w->snapshot, F_USERDATA);
  lua_pushvalue(L, u);
  append(L, -2);
  field(L, w->snapshot, F_USERMETAS);
  if (lua_getmetatable(L, u)) {
    lua_pushvalue(L, -1);
    reach(L, w);
  } else {
    lua_pushlightuserdata(L, NONE);
  }
  append(L, -2);
  lua_newtable(L);
  int values = lua_gettop(L);
  for (int n = 1; lua_getiuservalue(L, u, n) != LUA_TNONE; n++) {
    push_or_none(L, -1);
    lua_rawseti(L, values, n);
    reach(L, w);
  }
  lua_pop(L, 1);  // the LUA_TNONE's nil
  field(L, w->snapshot, F_USERVALUES);
  lua_pushvalue(L, values);
  append(L, -2);
  lua_settop(L, base);
}

static int is_main_thread(lua_State *L, lua_State *co) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  int main = lua_tothread(L, -1) == co;
  lua_pop(L, 1);
  return main;
}

static void record_thread(lua_State *L, Walk *w, int th) {
  luaL_checkstack(L, 8, NULL);
  lua_State *co = lua_tothread(L, th);
  if (is_main_thread(L, co)) return;  // its stack is recorded on its own
  int base = lua_gettop(L);
  field(L, w->snapshot, F_THREADS);
  lua_pushvalue(L, th);
  append(L, -2);
  lua_newtable(L);
  int stack = lua_gettop(L);
  lua_pushinteger(L, lua_status(co));
  lua_rawseti(L, stack, 1);
  int top = lua_gettop(co);
  if (!lua_checkstack(co, 1)) luaL_error(L, "stack overflow");
  for (int i = 1; i <= top; i++) {
    lua_pushvalue(co, i);
    lua_xmove(co, L, 1);
    push_or_none(L, -1);
    lua_rawseti(L, stack, i + 1);
    reach(L, w);
  }
  field(L, w->snapshot, F_THREADSTACKS);
  lua_pushvalue(L, stack);
  append(L, -2);
  lua_settop(L, base);
}

// The registry's slots in use: integer keys past the header that are not
// on luaL_ref's free list. Leaves a table slot -> true on the stack;
// returns 0 if the free list is not one (a loop, a key that is no slot).
static int push_live_slots(lua_State *L) {
  lua_newtable(L);
  int live = lua_gettop(L);
  lua_newtable(L);
  int free = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, FREELIST);
  lua_Integer next = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
  lua_pop(L, 1);
  while (next != 0) {
    if (next <= FREELIST || lua_rawgeti(L, free, next) != LUA_TNIL) return 0;  // not a slot, or a loop
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    lua_rawseti(L, free, next);
    if (lua_rawgeti(L, LUA_REGISTRYINDEX, next) != LUA_TNUMBER || !lua_isinteger(L, -1)) return 0;
    next = lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, LUA_REGISTRYINDEX)) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) <= FREELIST) continue;
    lua_pushvalue(L, -1);
    if (lua_rawget(L, free) == LUA_TNIL) {
      lua_pushvalue(L, -2);
      lua_pushboolean(L, 1);
      lua_rawset(L, live);
    }
    lua_pop(L, 1);
  }
  lua_settop(L, live);
  return 1;
}

// Arguments: the main thread's stack, copied. Pushes nothing.
static int take_snapshot(lua_State *L) {
  int n = lua_gettop(L);
  lua_createtable(L, F_FIELDCOUNT, 0);
  int snapshot = lua_gettop(L);
  for (int i = 1; i <= F_FIELDCOUNT; i++) {
    lua_newtable(L);
    lua_rawseti(L, snapshot, i);
  }
  lua_newtable(L);
  int seen = lua_gettop(L);
  lua_newtable(L);
  int queue = lua_gettop(L);
  lua_newtable(L);
  int cells = lua_gettop(L);

  // The watch, and the stock functions it replaces wherever the walk finds
  // them (the globals, the debug library, a local a module kept).
  lua_newtable(L);
  int originals = lua_gettop(L);
  lua_newtable(L);
  int closures = lua_gettop(L);
  Watch *watching = (Watch *)lua_newuserdatauv(L, sizeof(Watch), 0);
  watching->tag = &watch_tag;
  watching->finalizers = watching->joined = 0;
  int watch = lua_gettop(L);
  lua_pushvalue(L, watch);
  lua_rawseti(L, snapshot, F_WATCH);
  // The watch's own objects are not part of the state it watches.
  lua_pushvalue(L, watch);
  lua_pushboolean(L, 1);
  lua_rawset(L, seen);
  lua_pushvalue(L, closures);
  lua_pushboolean(L, 1);
  lua_rawset(L, seen);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  if (lua_getfield(L, -1, "setmetatable") == LUA_TFUNCTION && lua_iscfunction(L, -1)) {
    lua_pushvalue(L, watch);
    lua_pushcclosure(L, watched_setmetatable, 1);
    lua_rawset(L, originals);
  } else {
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) == LUA_TTABLE && lua_getfield(L, -1, "debug") == LUA_TTABLE) {
    int debug = lua_gettop(L);
    if (lua_getfield(L, debug, "setmetatable") == LUA_TFUNCTION && lua_iscfunction(L, -1)) {
      lua_pushvalue(L, watch);
      lua_pushcclosure(L, watched_debugsetmetatable, 1);
      lua_rawset(L, originals);
    }
    lua_settop(L, debug);
    if (lua_getfield(L, debug, "upvaluejoin") == LUA_TFUNCTION && lua_iscfunction(L, -1)) {
      lua_pushvalue(L, watch);
      lua_pushvalue(L, closures);
      lua_pushcclosure(L, watched_upvaluejoin, 2);
      lua_rawset(L, originals);
    }
  }
  lua_settop(L, watch);
  if (lua_getfield(L, LUA_REGISTRYINDEX, "_CLIBS") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_pushlightuserdata(L, NONE);
  }
  lua_rawseti(L, snapshot, F_CLIBS);

  Walk w = { seen, queue, cells, snapshot, originals, closures, 1 };

  // Roots: the registry, the main thread's stack, the basic types' metatables.
  lua_pushvalue(L, LUA_REGISTRYINDEX);
  reach(L, &w);
  int stack = field(L, snapshot, F_STACK);
  lua_pushinteger(L, n);
  lua_rawseti(L, stack, 1);
  for (int i = 1; i <= n; i++) {
    push_or_none(L, i);
    lua_rawseti(L, stack, i + 1);
    lua_pushvalue(L, i);
    reach(L, &w);
  }
  lua_pop(L, 1);
  int typemetas = field(L, snapshot, F_TYPEMETAS);
  for (int i = 0; i < BASIC_TYPE_COUNT; i++) {
    push_sample(L, BASIC_TYPES[i]);
    if (lua_getmetatable(L, -1)) {
      lua_pushvalue(L, -1);
      lua_rawseti(L, typemetas, BASIC_TYPES[i] + 1);
      reach(L, &w);
    } else {
      lua_pushlightuserdata(L, NONE);
      lua_rawseti(L, typemetas, BASIC_TYPES[i] + 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);

  while (w.head <= (lua_Integer)lua_rawlen(L, queue)) {
    lua_rawgeti(L, queue, w.head++);
    int object = lua_gettop(L);
    switch (lua_type(L, object)) {
    case LUA_TTABLE: record_table(L, &w, object); break;
    case LUA_TFUNCTION: record_function(L, &w, object); break;
    case LUA_TUSERDATA: record_userdata(L, &w, object); break;
    case LUA_TTHREAD: record_thread(L, &w, object); break;
    }
    lua_settop(L, object - 1);
  }

  // The registry's slots in use, and how many other keys it has.
  if (!push_live_slots(L)) return luaL_error(L, "the registry's free list is broken");
  lua_rawseti(L, snapshot, F_LIVESLOTS);
  lua_Integer others = 0;
  lua_pushnil(L);
  while (lua_next(L, LUA_REGISTRYINDEX)) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1)) others++;
  }
  lua_pushinteger(L, others + 1);  // and the snapshot's own key, set below
  lua_rawseti(L, snapshot, F_NONINTEGERS);

  int hook = field(L, snapshot, F_HOOK);
  lua_pushlightuserdata(L, (void *)lua_gethook(L));
  lua_rawseti(L, hook, 1);
  lua_pushinteger(L, lua_gethookmask(L));
  lua_rawseti(L, hook, 2);
  lua_pushinteger(L, lua_gethookcount(L));
  lua_rawseti(L, hook, 3);
  lua_pop(L, 1);

  lua_Integer tables = (lua_Integer)(lua_rawgeti(L, snapshot, F_TABLES), lua_rawlen(L, -1));
  lua_Integer upvalues = (lua_Integer)(lua_rawgeti(L, snapshot, F_FUNCTIONS), lua_rawlen(L, -1));
  lua_pop(L, 2);
  Index *x = (Index *)lua_newuserdatauv(
    L, sizeof(Index) + (size_t)tables * (sizeof(lua_Integer) + sizeof(void *)) + (size_t)upvalues * sizeof(int), 0);
  x->tables = tables;
  x->upvalues = upvalues;
  x->registry = 1;  // the first object reached
  lua_rawseti(L, snapshot, F_INDEX);
  int counts = field(L, snapshot, F_COUNTS);
  int metas = field(L, snapshot, F_METAS);
  for (lua_Integer i = 1; i <= tables; i++) {
    lua_rawgeti(L, counts, i);
    index_counts(x)[i - 1] = lua_tointeger(L, -1);
    lua_rawgeti(L, metas, i);
    index_metas(x)[i - 1] = lua_type(L, -1) == LUA_TTABLE ? lua_topointer(L, -1) : NULL;
    lua_pop(L, 2);
  }
  int indexes = field(L, snapshot, F_UPINDEXES);
  for (lua_Integer i = 1; i <= upvalues; i++) {
    lua_rawgeti(L, indexes, i);
    index_upindexes(x)[i - 1] = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 3);
  // Kept in the index now: the collector need not walk them again.
  lua_pushnil(L);
  lua_rawseti(L, snapshot, F_COUNTS);
  lua_pushnil(L);
  lua_rawseti(L, snapshot, F_UPINDEXES);

  lua_pushvalue(L, snapshot);
  lua_rawsetp(L, LUA_REGISTRYINDEX, SNAPSHOT_KEY);
  // The registry's copy (recorded first) lacks the snapshot's key; the
  // restore leaves that key alone.
  return 0;
}

int lunar_snapshotstate(lua_State *L) {
  int n = lua_gettop(L);
  if (!lua_checkstack(L, n + 2)) return LUA_ERRMEM;
  lua_pushcfunction(L, take_snapshot);
  for (int i = 1; i <= n; i++) lua_pushvalue(L, i);
  int status = lua_pcall(L, n, 0, 0);
  if (status != LUA_OK) lua_pop(L, 1);
  return status;
}

// MARK: - Restoring

typedef struct Restore {
  lua_Integer changes;
  int mode;                // LUNAR_RESTORE_*
  int finalizers;          // a finalizer in Lua may exist
  int refused;             // the state cannot be restored
  const void *clibs;       // the _CLIBS table
} Restore;

// A change to field __gc may leave a finalizer in Lua behind; a change to
// the table of C libraries refuses the state.
static void note_change(lua_State *L, Restore *r, int t, int key) {
  r->changes++;
  if (lua_topointer(L, t) == r->clibs) r->refused = 1;
  else if (!r->finalizers && lua_type(L, key) == LUA_TSTRING && strcmp(lua_tostring(L, key), "__gc") == 0)
    r->finalizers = 1;
}

// Puts table t's contents back from copy c (count entries).
static void restore_table(lua_State *L, Restore *r, int t, int c, lua_Integer count) {
  lua_Integer kept = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    // k v
    lua_pushvalue(L, -2);
    if (lua_rawget(L, c) == LUA_TNIL) {
      // k v nil: a key the file added (clearing a field while traversing is allowed)
      lua_pop(L, 2);
      note_change(L, r, t, lua_gettop(L));
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, t);
      continue;
    }
    kept++;
    // k v pv
    if (!same(L, -1, -2)) {
      note_change(L, r, t, lua_gettop(L) - 2);
      lua_pushvalue(L, -3);
      lua_insert(L, -2);
      lua_rawset(L, t);  // an existing field changes: allowed while traversing
      lua_pop(L, 1);
    } else {
      lua_pop(L, 2);
    }
  }
  if (kept == count) return;
  // Keys the file removed.
  lua_pushnil(L);
  while (lua_next(L, c)) {
    lua_pushvalue(L, -2);
    if (lua_rawget(L, t) == LUA_TNIL) {
      lua_pop(L, 1);
      note_change(L, r, t, lua_gettop(L) - 1);
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, t);
    } else {
      lua_pop(L, 2);
    }
  }
}

// Checks the registry against its copy c; puts its slots back when
// r->checkslots. Returns 0 when it cannot be restored.
static int restore_registry(lua_State *L, Restore *r, int snapshot, int c) {
  lua_Integer others = 0;
  lua_pushnil(L);
  while (lua_next(L, LUA_REGISTRYINDEX)) {
    // k v
    if (lua_isinteger(L, -2)) {
      lua_pop(L, 1);
      continue;
    }
    others++;
    if (lua_type(L, -2) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -2) == SNAPSHOT_KEY) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushvalue(L, -2);
    lua_rawget(L, c);
    if (!same(L, -1, -2)) return 0;
    lua_pop(L, 2);
  }
  lua_rawgeti(L, snapshot, F_NONINTEGERS);
  if (lua_tointeger(L, -1) != others) return 0;
  lua_pop(L, 1);
  if (r->mode == LUNAR_RESTORE_ALL) return 1;

  // The slots in use must be those in use at the snapshot, holding the
  // same values; a slot in use now that was not then belongs to a Swift
  // object that outlived the file.
  if (!push_live_slots(L)) return 0;
  int live = lua_gettop(L);
  int pristine = field(L, snapshot, F_LIVESLOTS);
  lua_pushnil(L);
  while (lua_next(L, live)) {
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, pristine) == LUA_TNIL) return 0;
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, pristine)) {
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, live) == LUA_TNIL) return 0;
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -2);
    lua_rawget(L, c);
    if (!same(L, -1, -2)) return 0;
    lua_pop(L, 2);
  }
  // Free slots and the header as they were: slots freed since are dropped.
  // (Bookkeeping of references, not a change a script made: not counted.)
  lua_newtable(L);
  int extra = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, LUA_REGISTRYINDEX)) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1)) continue;
    lua_pushvalue(L, -1);
    if (lua_rawget(L, c) == LUA_TNIL) {
      lua_pushvalue(L, -2);
      append(L, extra);
    }
    lua_pop(L, 1);
  }
  for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, extra); i <= n; i++) {
    lua_rawgeti(L, extra, i);
    lua_pushnil(L);
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  lua_pushnil(L);
  while (lua_next(L, c)) {
    if (!lua_isinteger(L, -2)) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushvalue(L, -2);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!same(L, -1, -2)) {
      lua_pop(L, 1);
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, LUA_REGISTRYINDEX);
    } else {
      lua_pop(L, 2);
    }
  }
  lua_settop(L, live - 1);
  return 1;
}

// Sets the metatable of the value at idx to the recorded one on top
// (NONE: none), popping it, if it differs.
static void restore_metatable(lua_State *L, Restore *r, int idx) {
  none_to_nil(L);
  int recorded = lua_gettop(L);
  if (!lua_getmetatable(L, idx)) lua_pushnil(L);
  if (!lua_rawequal(L, -1, recorded)) {
    lua_pushvalue(L, recorded);
    lua_setmetatable(L, idx);
    r->changes++;
  }
  lua_settop(L, recorded - 1);
}

// Argument 1: a light userdata, the Restore. Returns true, or false when
// the state cannot be restored.
static int restore_snapshot(lua_State *L) {
  Restore *r = (Restore *)lua_touserdata(L, 1);
  luaL_checkstack(L, 24, NULL);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, SNAPSHOT_KEY) != LUA_TTABLE) return luaL_error(L, "no snapshot");
  int snapshot = lua_gettop(L);
  // The snapshot sits in the registry, which debug.getregistry reaches:
  // what is read from it is checked before it is trusted.
  Index *x = lua_rawgeti(L, snapshot, F_INDEX) == LUA_TUSERDATA && lua_rawlen(L, -1) >= sizeof(Index)
    ? (Index *)lua_touserdata(L, -1) : NULL;
  Watch *watch = lua_rawgeti(L, snapshot, F_WATCH) == LUA_TUSERDATA && lua_rawlen(L, -1) == sizeof(Watch)
    ? (Watch *)lua_touserdata(L, -1) : NULL;
  if (x == NULL || watch == NULL || watch->tag != &watch_tag) {
    lua_pushboolean(L, 0);
    return 1;
  }
  int joined = watch->joined;
  if (watch->finalizers) r->finalizers = 1;
  watch->finalizers = watch->joined = 0;
  if (joined) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_rawgeti(L, snapshot, F_CLIBS);
  r->clibs = lua_topointer(L, -1);
  int tables = field(L, snapshot, F_TABLES);
  int copies = field(L, snapshot, F_COPIES);
  int metas = field(L, snapshot, F_METAS);
  int base = lua_gettop(L);
  const void *registry = lua_topointer(L, LUA_REGISTRYINDEX);

  if (r->mode == LUNAR_RESTORE_SLOTS) {
    lua_rawgeti(L, copies, x->registry);
    lua_pushboolean(L, restore_registry(L, r, snapshot, base + 1));
    return 1;
  }
  for (lua_Integer i = 1; i <= x->tables; i++) {
    lua_rawgeti(L, tables, i);
    int t = base + 1;
    lua_rawgeti(L, copies, i);
    int c = base + 2;
    if (lua_topointer(L, t) == registry) {
      if (!restore_registry(L, r, snapshot, c)) {
        lua_pushboolean(L, 0);
        return 1;
      }
    } else {
      restore_table(L, r, t, c, index_counts(x)[i - 1]);
    }
    // The metatable, by its address (no call into Lua when unchanged).
    const void *meta = lua_getmetatable(L, t) ? lua_topointer(L, -1) : NULL;
    if (meta != index_metas(x)[i - 1]) {
      lua_rawgeti(L, metas, i);
      restore_metatable(L, r, t);
    }
    lua_settop(L, base);
  }

  int functions = field(L, snapshot, F_FUNCTIONS);
  int upvalues = field(L, snapshot, F_UPVALUES);
  base = lua_gettop(L);
  for (lua_Integer i = 1; i <= x->upvalues; i++) {
    lua_rawgeti(L, functions, i);
    int f = base + 1;
    int index = index_upindexes(x)[i - 1];
    lua_getupvalue(L, f, index);
    lua_rawgeti(L, upvalues, i);
    none_to_nil(L);
    if (!same(L, -1, -2)) {
      lua_setupvalue(L, f, index);
      r->changes++;
    }
    lua_settop(L, base);
  }

  int userdata = field(L, snapshot, F_USERDATA);
  int usermetas = field(L, snapshot, F_USERMETAS);
  int uservalues = field(L, snapshot, F_USERVALUES);
  base = lua_gettop(L);
  for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, userdata); i <= n; i++) {
    lua_rawgeti(L, userdata, i);
    int u = lua_gettop(L);
    lua_rawgeti(L, usermetas, i);
    restore_metatable(L, r, u);
    lua_rawgeti(L, uservalues, i);
    int values = lua_gettop(L);
    for (int k = 1, count = (int)lua_rawlen(L, values); k <= count; k++) {
      lua_getiuservalue(L, u, k);
      lua_rawgeti(L, values, k);
      none_to_nil(L);
      if (!same(L, -1, -2)) {
        lua_setiuservalue(L, u, k);
        r->changes++;
      }
      lua_settop(L, values);
    }
    lua_settop(L, base);
  }

  // A coroutine alive at the snapshot cannot be put back once it ran.
  int threads = field(L, snapshot, F_THREADS);
  int stacks = field(L, snapshot, F_THREADSTACKS);
  base = lua_gettop(L);
  for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, threads); i <= n; i++) {
    lua_State *co = (lua_rawgeti(L, threads, i), lua_tothread(L, -1));
    lua_rawgeti(L, stacks, i);
    int stack = lua_gettop(L);
    lua_rawgeti(L, stack, 1);
    int unchanged = lua_tointeger(L, -1) == lua_status(co) && (lua_Integer)lua_rawlen(L, stack) == lua_gettop(co) + 1;
    lua_pop(L, 1);
    if (!lua_checkstack(co, 1)) luaL_error(L, "stack overflow");
    for (int k = 1; unchanged && k <= lua_gettop(co); k++) {
      lua_pushvalue(co, k);
      lua_xmove(co, L, 1);
      lua_rawgeti(L, stack, k + 1);
      none_to_nil(L);
      unchanged = same(L, -1, -2);
      lua_pop(L, 2);
    }
    if (!unchanged) {
      lua_pushboolean(L, 0);
      return 1;
    }
    lua_settop(L, base);
  }

  int typemetas = field(L, snapshot, F_TYPEMETAS);
  for (int i = 0; i < BASIC_TYPE_COUNT; i++) {
    push_sample(L, BASIC_TYPES[i]);
    lua_rawgeti(L, typemetas, BASIC_TYPES[i] + 1);
    restore_metatable(L, r, lua_gettop(L) - 1);
    lua_pop(L, 1);
  }
  lua_pushboolean(L, !r->refused);
  return 1;
}

// The main thread's stack and hook, checked and put back outside the
// protected call (nothing here allocates or raises).
static int restore_outside(lua_State *L, Restore *r) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, SNAPSHOT_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    return 0;
  }
  int snapshot = lua_gettop(L);
  lua_rawgeti(L, snapshot, F_STACK);
  lua_rawgeti(L, -1, 1);
  int n = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  int unchanged = n == snapshot - 1;
  for (int i = 1; unchanged && i <= n; i++) {
    lua_rawgeti(L, -1, i + 1);
    none_to_nil(L);
    unchanged = same(L, -1, i);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_rawgeti(L, snapshot, F_HOOK);
  lua_rawgeti(L, -1, 1);
  lua_Hook hook = (lua_Hook)lua_touserdata(L, -1);
  lua_rawgeti(L, -2, 2);
  int mask = (int)lua_tointeger(L, -1);
  lua_rawgeti(L, -3, 3);
  int count = (int)lua_tointeger(L, -1);
  lua_settop(L, snapshot - 1);
  if (lua_gethook(L) != hook || lua_gethookmask(L) != mask || lua_gethookcount(L) != count) {
    lua_sethook(L, hook, mask, count);
    r->changes++;
  }
  return unchanged;
}

long long lunar_restorestate(lua_State *L, int mode, int *finalizers) {
  Restore r = { 0, mode, 0, 0, NULL };
  if (!lua_checkstack(L, 8)) return -1;
  if (mode != LUNAR_RESTORE_SLOTS && !restore_outside(L, &r)) return -1;
  lua_pushcfunction(L, restore_snapshot);
  lua_pushlightuserdata(L, &r);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    return -1;
  }
  int restored = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (finalizers != NULL) *finalizers = r.finalizers;
  return restored ? (long long)r.changes : -1;
}

int lunar_gcreset(lua_State *L) {
  if (!lua_gc(L, LUA_GCISRUNNING)) lua_gc(L, LUA_GCRESTART);
  // Lua 5.4's defaults (lgc.h), which a new state starts with: a script may
  // have changed them with collectgarbage. Leaving incremental mode costs a
  // full collection, so the mode is changed only when it was.
  if (lua_gc(L, LUA_GCGEN, 20, 100) == LUA_GCINC) {
    lua_gc(L, LUA_GCINC, 200, 100, 13);
    lua_gc(L, LUA_GCGEN, 20, 100);
  }
  lua_gc(L, LUA_GCSETPAUSE, 200);
  lua_gc(L, LUA_GCSETSTEPMUL, 100);
  return 0;
}
