// Line coverage, the part CLuaShim.c calls (its hook, require, the
// yield-passing check). The part Swift calls is in include/CLuaShim.h.
#ifndef LUNAR_COVERAGE_H
#define LUNAR_COVERAGE_H

#include "CLuaShim.h"

/// The state's record, or NULL when coverage is off (CLuaShim.c).
lunar_Coverage *lunar_coveragestate(lua_State *L);
/// A new, empty record of files and line hits; NULL when out of memory.
lunar_Coverage *lunar_coveragenew(void);
/// Frees a record made by lunar_coveragenew (NULL is ignored).
void lunar_coveragefree(lunar_Coverage *coverage);
/// Counts the line a line hook reports in `ar` if it is in a registered
/// file; any other line costs a lookup and is ignored.
void lunar_coverageline(lunar_Coverage *coverage, lua_State *L, lua_Debug *ar);
/// Registers the function at `idx` if it is the main chunk of a file
/// (source `@path`): its lines become the file's executable lines, and its
/// hits (and those of every chunk with the same source) are counted from
/// now on. Never raises.
void lunar_coverageregister(lunar_Coverage *coverage, lua_State *L, int idx);
/// Replaces the global `dofile` and `loadfile` with versions that behave as
/// lbaselib's and register the chunk they load.
void lunar_installcoverageloaders(lua_State *L);
/// The `dofile` lunar_installcoverageloaders installs (it passes yields).
int lunar_coveragedofile(lua_State *L);

#endif
