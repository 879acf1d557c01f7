// Loading a Lua source file that is already open: `--sandbox` opens the
// file first and checks where the descriptor it got leads, so a symlink
// flipped between a check of the name and the open cannot let a file from
// outside in. Reads as luaL_loadfilex does: a UTF-8 byte order mark and a
// first line starting with '#' are skipped (the line's end is kept, so line
// numbers stay), and the chunk is named "@filename".
#include "Internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct OpenedFile {
  FILE *file;
  int give_newline;  // the skipped '#' line's end, given before the rest
  char buffer[BUFSIZ];
} OpenedFile;

static const char *read_opened(lua_State *L, void *data, size_t *size) {
  (void)L;
  OpenedFile *f = (OpenedFile *)data;
  if (f->give_newline) {
    f->give_newline = 0;
    *size = 1;
    return "\n";
  }
  if (feof(f->file)) {
    *size = 0;
    return NULL;
  }
  *size = fread(f->buffer, 1, sizeof(f->buffer), f->file);
  return f->buffer;
}

// Skips a byte order mark and a '#' first line.
static void skip_prefix(OpenedFile *f) {
  int c = getc(f->file);
  if (c == 0xEF) {
    if (getc(f->file) != 0xBB || getc(f->file) != 0xBF) {
      rewind(f->file);  // not a byte order mark: read it as it is
      return;
    }
    c = getc(f->file);
  }
  if (c == '#') {
    while ((c = getc(f->file)) != EOF && c != '\n') {
    }
    f->give_newline = c == '\n';
    return;
  }
  if (c != EOF) ungetc(c, f->file);
}

int lunar_loadopened(lua_State *L, int fd, const char *filename, const char *mode) {
  OpenedFile f = {0};
  f.file = fdopen(fd, "r");
  if (f.file == NULL) {
    int error = errno;
    close(fd);
    lua_pushfstring(L, "cannot open %s: %s", filename, strerror(error));
    return LUA_ERRFILE;
  }
  skip_prefix(&f);
  lua_pushfstring(L, "@%s", filename);
  int status = lua_load(L, read_opened, &f, lua_tostring(L, -1), mode);
  int read_failed = ferror(f.file);
  int error = errno;
  fclose(f.file);
  lua_remove(L, -2);  // the chunk name
  if (read_failed) {
    lua_pop(L, 1);
    lua_pushfstring(L, "cannot read %s: %s", filename, strerror(error));
    return LUA_ERRFILE;
  }
  if (status == LUA_OK) {
    lunar_Coverage *coverage = lunar_coveragestate(L);
    if (coverage != NULL) lunar_coverageregister(coverage, L, -1);
  }
  return status;
}
