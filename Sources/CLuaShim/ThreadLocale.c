// os.setlocale for one runtime: the locale of the thread the runtime runs
// on (uselocale), not the process's (setlocale). Runtimes run side by side
// in one process (lunar test's files, a workflow's scripts), and each
// starts in the process's locale ("C", as a fresh lua5.4) whatever another
// set; a runtime restored for another script goes back to it.
#define _GNU_SOURCE
#include "CLuaShim.h"

#include <langinfo.h>
#include <locale.h>
#include <string.h>


// The locale os.setlocale made for this thread, or 0 for the process's.
static _Thread_local locale_t thread_locale = (locale_t)0;

static const int categories[] = {LC_ALL, LC_COLLATE, LC_CTYPE, LC_MONETARY, LC_NUMERIC, LC_TIME};
static const int masks[] = {LC_ALL_MASK, LC_COLLATE_MASK, LC_CTYPE_MASK, LC_MONETARY_MASK, LC_NUMERIC_MASK, LC_TIME_MASK};
static const char *const category_names[] = {"all", "collate", "ctype", "monetary", "numeric", "time", NULL};

// The categories glibc names in a composite LC_ALL name, in its order.
static const int composite_order[] = {
  LC_CTYPE, LC_NUMERIC, LC_TIME, LC_COLLATE, LC_MONETARY, LC_MESSAGES, LC_PAPER, LC_NAME, LC_ADDRESS,
  LC_TELEPHONE, LC_MEASUREMENT, LC_IDENTIFICATION,
};
static const char *const composite_names[] = {
  "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_MESSAGES", "LC_PAPER", "LC_NAME",
  "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION",
};
#define COMPOSITE_COUNT ((int)(sizeof composite_order / sizeof composite_order[0]))

// Pushes the name of `category` in the thread's locale, as setlocale(category,
// NULL) names it: one name, or for LC_ALL of mixed categories glibc's
// composite `LC_CTYPE=...;LC_NUMERIC=...;...`.
static void push_name(lua_State *L, int category) {
  if (thread_locale == (locale_t)0) {
    lua_pushstring(L, setlocale(category, NULL));  // a query changes nothing
    return;
  }
  if (category != LC_ALL) {
    lua_pushstring(L, nl_langinfo_l(_NL_LOCALE_NAME(category), thread_locale));
    return;
  }
  const char *first = nl_langinfo_l(_NL_LOCALE_NAME(composite_order[0]), thread_locale);
  int same = 1;
  for (int i = 1; i < COMPOSITE_COUNT; i++)
    if (strcmp(first, nl_langinfo_l(_NL_LOCALE_NAME(composite_order[i]), thread_locale)) != 0) same = 0;
  if (same) {
    lua_pushstring(L, first);
    return;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; i < COMPOSITE_COUNT; i++) {
    if (i > 0) luaL_addchar(&b, ';');
    luaL_addstring(&b, composite_names[i]);
    luaL_addchar(&b, '=');
    luaL_addstring(&b, nl_langinfo_l(_NL_LOCALE_NAME(composite_order[i]), thread_locale));
  }
  luaL_pushresult(&b);
}

// loslib.c's os_setlocale, on the thread's locale.
static int thread_setlocale(lua_State *L) {
  const char *name = luaL_optstring(L, 1, NULL);
  int option = luaL_checkoption(L, 2, "all", category_names);
  if (name == NULL) {
    push_name(L, categories[option]);
    return 1;
  }
  locale_t base = thread_locale;
  if (base == (locale_t)0) {
    // The process's locale, copied: newlocale may change and return its base.
    base = duplocale(LC_GLOBAL_LOCALE);
    if (base == (locale_t)0) {
      lua_pushnil(L);
      return 1;
    }
  }
  locale_t next = newlocale(masks[option], name, base);
  if (next == (locale_t)0) {  // an unknown locale: nothing changes, as setlocale
    if (base != thread_locale) freelocale(base);
    lua_pushnil(L);
    return 1;
  }
  thread_locale = next;
  uselocale(next);
  push_name(L, categories[option]);
  return 1;
}

void lunar_installthreadlocale(lua_State *L) {
  int top = lua_gettop(L);
  if (lua_getglobal(L, "os") == LUA_TTABLE) {
    lua_pushcfunction(L, thread_setlocale);
    lua_setfield(L, -2, "setlocale");
  }
  lua_settop(L, top);
}

void lunar_resetthreadlocale(void) {
  if (thread_locale == (locale_t)0) return;
  uselocale(LC_GLOBAL_LOCALE);
  freelocale(thread_locale);
  thread_locale = (locale_t)0;
}
