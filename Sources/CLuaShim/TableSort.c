// A yieldable table.sort: ltablib.c's quicksort (Lua 5.4.4), comparison for
// comparison, with the comparator called through lua_callk. A comparator
// that waits then yields its task instead of running the loop nested above
// everything beneath it. The recursion becomes an explicit stack of caller
// frames, and every step that follows a comparison is a label the
// continuation jumps back to; the values on the Lua stack are exactly the
// stock ones at each point.
#include "CLuaShim.h"

#include <limits.h>
#include <string.h>
#include <time.h>

typedef unsigned int IdxT;

// Arrays larger than this may use randomized pivots (as ltablib.c).
#define RANLIMIT 100u

// The recursion recurses on the smaller half only, so it is at most
// log2(INT_MAX) deep.
#define MAXDEPTH 40

// ltablib.c's l_randomizePivot: clock and time, summed as unsigned ints.
#define sof(e) (sizeof(e) / sizeof(unsigned int))
static unsigned int randomize_pivot(void) {
  clock_t c = clock();
  time_t t = time(NULL);
  unsigned int buff[sof(c) + sof(t)];
  unsigned int i, rnd = 0;
  memcpy(buff, &c, sof(c) * sizeof(unsigned int));
  memcpy(buff + sof(c), &t, sof(t) * sizeof(unsigned int));
  for (i = 0; i < sof(buff); i++) rnd += buff[i];
  return rnd;
}

enum Step { START, SORTED_ENDS, SORTED_PIVOT_LO, SORTED_PIVOT_UP, SCANNED_UP, SCANNED_DOWN };

// A call of auxsort waiting for the call it made on one half to return.
typedef struct Caller {
  IdxT lo, up, p;
  unsigned int rnd;
  int lower;  // it sorts the lower half first
} Caller;

// Everything auxsort and partition keep in locals, kept in a userdata at
// stack index 3 so it survives a yield.
typedef struct SortState {
  IdxT lo, up, p, i, j;
  unsigned int rnd;
  enum Step step;  // where a comparison's result is taken up
  int depth;
  Caller callers[MAXDEPTH];
} SortState;

static int sort_continue(lua_State *L, int status, lua_KContext ctx);

static void set2(lua_State *L, IdxT i, IdxT j) {
  lua_seti(L, 1, i);
  lua_seti(L, 1, j);
}

// ltablib.c's sort_comp: is the value at `a` less than the one at `b`? A
// comparator may yield; then sort_continue takes the result up at `next`.
static int less(lua_State *L, SortState *s, int a, int b, enum Step next) {
  if (lua_isnil(L, 2)) return lua_compare(L, a, b, LUA_OPLT);
  s->step = next;
  lua_pushvalue(L, 2);
  lua_pushvalue(L, a - 1);
  lua_pushvalue(L, b - 2);
  lua_callk(L, 2, 1, 0, sort_continue);
  int res = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return res;
}

static IdxT choose_pivot(IdxT lo, IdxT up, unsigned int rnd) {
  IdxT r4 = (up - lo) / 4;
  return rnd % (r4 * 2) + (lo + r4);
}

// Runs the sort from `s->step`; `res` is the result of the comparison that
// step waited for.
static int sort_run(lua_State *L, SortState *s, int res) {
  switch (s->step) {
    case START: break;
    case SORTED_ENDS: goto sorted_ends;
    case SORTED_PIVOT_LO: goto sorted_pivot_lo;
    case SORTED_PIVOT_UP: goto sorted_pivot_up;
    case SCANNED_UP: goto scanned_up;
    case SCANNED_DOWN: goto scanned_down;
  }
call:  // auxsort(L, s->lo, s->up, s->rnd)
  while (s->lo < s->up) {
    // Sort elements lo, p and up.
    lua_geti(L, 1, s->lo);
    lua_geti(L, 1, s->up);
    res = less(L, s, -1, -2, SORTED_ENDS);  // a[up] < a[lo]?
  sorted_ends:
    if (res) set2(L, s->lo, s->up);
    else lua_pop(L, 2);
    if (s->up - s->lo == 1) break;  // only 2 elements
    if (s->up - s->lo < RANLIMIT || s->rnd == 0) s->p = (s->lo + s->up) / 2;
    else s->p = choose_pivot(s->lo, s->up, s->rnd);
    lua_geti(L, 1, s->p);
    lua_geti(L, 1, s->lo);
    res = less(L, s, -2, -1, SORTED_PIVOT_LO);  // a[p] < a[lo]?
  sorted_pivot_lo:
    if (res) {
      set2(L, s->p, s->lo);
    } else {
      lua_pop(L, 1);
      lua_geti(L, 1, s->up);
      res = less(L, s, -1, -2, SORTED_PIVOT_UP);  // a[up] < a[p]?
    sorted_pivot_up:
      if (res) set2(L, s->p, s->up);
      else lua_pop(L, 2);
    }
    if (s->up - s->lo == 2) break;  // only 3 elements
    lua_geti(L, 1, s->p);  // the pivot P
    lua_pushvalue(L, -1);
    lua_geti(L, 1, s->up - 1);
    set2(L, s->p, s->up - 1);  // swap P (a[p]) with a[up - 1]
    // partition(L, lo, up), with P on top of the stack.
    s->i = s->lo;
    s->j = s->up - 1;
    for (;;) {
      for (;;) {  // repeat ++i while a[i] < P
        lua_geti(L, 1, ++s->i);
        res = less(L, s, -1, -2, SCANNED_UP);
      scanned_up:
        if (!res) break;
        if (s->i == s->up - 1) return luaL_error(L, "invalid order function for sorting");
        lua_pop(L, 1);
      }
      for (;;) {  // repeat --j while P < a[j]
        lua_geti(L, 1, --s->j);
        res = less(L, s, -3, -1, SCANNED_DOWN);
      scanned_down:
        if (!res) break;
        if (s->j < s->i) return luaL_error(L, "invalid order function for sorting");
        lua_pop(L, 1);
      }
      if (s->j < s->i) {  // no elements out of place
        lua_pop(L, 1);
        set2(L, s->up - 1, s->i);
        break;
      }
      set2(L, s->i, s->j);
    }
    s->p = s->i;
    // Sort the smaller half first (a call), then the larger (the loop).
    if (s->depth == MAXDEPTH) return luaL_error(L, "sort too deep");
    Caller *caller = &s->callers[s->depth++];
    caller->lo = s->lo;
    caller->up = s->up;
    caller->p = s->p;
    caller->rnd = s->rnd;
    caller->lower = s->p - s->lo < s->up - s->p;
    if (caller->lower) s->up = s->p - 1;
    else s->lo = s->p + 1;
    goto call;
  }
  // This call of auxsort returns.
  if (s->depth == 0) return 0;
  {
    Caller caller = s->callers[--s->depth];
    IdxT n;
    s->lo = caller.lo;
    s->up = caller.up;
    s->rnd = caller.rnd;
    if (caller.lower) {
      n = caller.p - s->lo;
      s->lo = caller.p + 1;
    } else {
      n = s->up - caller.p;
      s->up = caller.p - 1;
    }
    if ((s->up - s->lo) / 128 > n) s->rnd = randomize_pivot();  // too imbalanced
  }
  goto call;
}

static int sort_continue(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  int res = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return sort_run(L, (SortState *)lua_touserdata(L, 3), res);
}

// ltablib.c's checktab for read, write and length.
static void check_table(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE) return;
  int n = 1;
  if (lua_getmetatable(L, 1) && (lua_pushliteral(L, "__index"), ++n, lua_rawget(L, -n) != LUA_TNIL) &&
      (lua_pushliteral(L, "__newindex"), ++n, lua_rawget(L, -n) != LUA_TNIL) &&
      (lua_pushliteral(L, "__len"), ++n, lua_rawget(L, -n) != LUA_TNIL)) {
    lua_pop(L, n);
  } else {
    luaL_checktype(L, 1, LUA_TTABLE);  // raises
  }
}

int lunar_tablesort(lua_State *L) {
  check_table(L);
  lua_Integer n = luaL_len(L, 1);
  if (n > 1) {
    luaL_argcheck(L, n < INT_MAX, 1, "array too big");
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    SortState *s = (SortState *)lua_newuserdatauv(L, sizeof(SortState), 0);
    s->lo = 1;
    s->up = (IdxT)n;
    s->rnd = 0;
    s->step = START;
    s->depth = 0;
    return sort_run(L, s, 0);
  }
  return 0;
}
