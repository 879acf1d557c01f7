// print, io.write and the write method of files as Lua 5.4's own (lbaselib.c,
// liolib.c), except that what they write to standard output or standard
// error is also handed to the state's output sink (lunar_setoutputsink):
// Lunar keeps a workflow step's output with the step. Replacing the
// functions, not the C streams, keeps stdio's buffering, so what the
// terminal shows does not change.
#include "Internal.h"

#include <stdio.h>

static void sink(lua_State *L, FILE *f, const char *bytes, size_t size) {
  lunar_Control *c = control(L);
  if (c->outputsink == NULL || size == 0) return;
  int stream = f == stdout ? 1 : f == stderr ? 2 : 0;
  if (stream != 0) c->outputsink(c->outputcontext, stream, bytes, size);
}

void lunar_setoutputsink(lua_State *L, lunar_OutputSink outputsink, void *context) {
  lunar_Control *c = control(L);
  c->outputsink = outputsink;
  c->outputcontext = context;
}

// luaB_print.
static int print(lua_State *L) {
  int n = lua_gettop(L);
  for (int i = 1; i <= n; i++) {
    size_t l;
    const char *s = luaL_tolstring(L, i, &l);
    if (i > 1) {
      lua_writestring("\t", 1);
      sink(L, stdout, "\t", 1);
    }
    lua_writestring(s, l);
    sink(L, stdout, s, l);
    lua_pop(L, 1);
  }
  lua_writeline();
  sink(L, stdout, "\n", 1);
  return 0;
}

// g_write: writes the values from `arg` on, the file already on top of the stack.
static int write_values(lua_State *L, FILE *f, int arg) {
  int nargs = lua_gettop(L) - arg;
  int status = 1;
  for (; nargs--; arg++) {
    if (lua_type(L, arg) == LUA_TNUMBER) {
      char buffer[64];  // "%.14g" and "%lld" need at most 25
      int len = lua_isinteger(L, arg)
                  ? snprintf(buffer, sizeof buffer, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, arg))
                  : snprintf(buffer, sizeof buffer, LUA_NUMBER_FMT, (LUAI_UACNUMBER)lua_tonumber(L, arg));
      if (len > 0 && (size_t)len < sizeof buffer) {
        int written = fwrite(buffer, 1, (size_t)len, f) == (size_t)len;
        status = status && written;
        if (written) sink(L, f, buffer, (size_t)len);
      } else {
        status = 0;
      }
    } else {
      size_t l;
      const char *s = luaL_checklstring(L, arg, &l);
      int written = fwrite(s, sizeof(char), l, f) == l;
      status = status && written;
      if (written) sink(L, f, s, l);
    }
  }
  if (status) return 1;
  return luaL_fileresult(L, status, NULL);
}

// io_write.
static int io_write(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "_IO_output");
  luaL_Stream *p = (luaL_Stream *)lua_touserdata(L, -1);
  if (p == NULL || p->closef == NULL) return luaL_error(L, "default %s file is closed", "output");
  return write_values(L, p->f, 1);
}

// f_write.
static int file_write(lua_State *L) {
  luaL_Stream *p = (luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  if (p->closef == NULL) return luaL_error(L, "attempt to use a closed file");
  lua_pushvalue(L, 1);
  return write_values(L, p->f, 2);
}

// os.execute and io.popen start a process that writes to the same standard
// output: what stdio still holds (progress lines wait up to 30 ms, see
// LazyFlush.c) goes out first, as it would have in order. The original runs
// in this function's own frame, so its errors name it as Lua's would.
static int flushing_call(lua_State *L) {
  lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(1));
  fflush(stdout);
  return original(L);
}

// Replaces the C function `name` of the table at the top by flushing_call.
static void flush_before(lua_State *L, const char *name) {
  if (lua_getfield(L, -1, name) == LUA_TFUNCTION && lua_tocfunction(L, -1) != NULL) {
    lua_pushcclosure(L, flushing_call, 1);
    lua_setfield(L, -2, name);
  } else {
    lua_pop(L, 1);
  }
}

static int install(lua_State *L) {
  lua_pushcfunction(L, print);
  lua_setglobal(L, "print");
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, LUA_OSLIBNAME) == LUA_TTABLE) flush_before(L, "execute");
  lua_pop(L, 1);
  if (lua_getfield(L, -1, LUA_IOLIBNAME) == LUA_TTABLE) {
    lua_pushcfunction(L, io_write);
    lua_setfield(L, -2, "write");
    flush_before(L, "popen");
  }
  if (luaL_getmetatable(L, LUA_FILEHANDLE) == LUA_TTABLE && lua_getfield(L, -1, "__index") == LUA_TTABLE) {
    lua_pushcfunction(L, file_write);
    lua_setfield(L, -2, "write");
  }
  return 0;
}

int lunar_installoutput(lua_State *L) {
  lua_pushcfunction(L, install);
  return lua_pcall(L, 0, 0, 0);
}
