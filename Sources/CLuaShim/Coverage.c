// Line coverage: which lines of the files a state loads hold code, and how
// often each ran.
//
// A file counts from the moment `require`, `dofile` or `loadfile` loads its
// main chunk (lunar_coverageregister). Its executable lines are the active
// lines of every function in the chunk, nested ones included, as
// ldebug.c's collectvalidlines computes them for one function: the C API
// reaches no nested prototype, so they are read from the chunk's own dump
// (lua_dump, Lua 5.4's format, ldump.c). Hits come from the line hook,
// which finds the running function's file by its source.
#include "Internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if LUA_VERSION_NUM != 504
#error "Coverage.c reads Lua 5.4's binary chunks"
#endif

typedef struct CoveredFile {
  char *source;              // the chunk's source ("@path"), a copy
  size_t length;
  int lines;                 // entries in hits and executable
  uint64_t *hits;            // by line
  unsigned char *executable; // by line: 1 if some instruction is on it
} CoveredFile;

// The line hook looks a source up on every new line. The source is the
// chunk's string, so its address usually settles the question; the bytes
// are compared too, as a string freed and another made at the same address
// must not be taken for it.
typedef struct SeenSource {
  const char *address;
  size_t length;
  char *bytes;  // a copy, compared on every hit
  int file;     // index in files, or -1: not a registered file
} SeenSource;

#define SEEN_SOURCES 64

struct lunar_Coverage {
  CoveredFile *files;
  int count, capacity;
  SeenSource seen[SEEN_SOURCES];
};

lunar_Coverage *lunar_coveragenew(void) { return calloc(1, sizeof(lunar_Coverage)); }

void lunar_coveragefree(lunar_Coverage *coverage) {
  if (coverage == NULL) return;
  for (int i = 0; i < coverage->count; i++) {
    free(coverage->files[i].source);
    free(coverage->files[i].hits);
    free(coverage->files[i].executable);
  }
  free(coverage->files);
  for (int i = 0; i < SEEN_SOURCES; i++) free(coverage->seen[i].bytes);
  free(coverage);
}

// Makes room for `line` in the file's arrays; 0 if out of memory.
static int reach_line(CoveredFile *file, int line) {
  if (line < file->lines) return 1;
  if (line < 0 || line >= INT32_MAX / 2) return 0;
  int lines = file->lines < 64 ? 64 : file->lines;
  while (lines <= line) lines *= 2;
  uint64_t *hits = realloc(file->hits, (size_t)lines * sizeof *hits);
  if (hits == NULL) return 0;
  file->hits = hits;
  unsigned char *executable = realloc(file->executable, (size_t)lines);
  if (executable == NULL) return 0;
  file->executable = executable;
  memset(hits + file->lines, 0, (size_t)(lines - file->lines) * sizeof *hits);
  memset(executable + file->lines, 0, (size_t)(lines - file->lines));
  file->lines = lines;
  return 1;
}

static int registered_file(lunar_Coverage *coverage, const char *source, size_t length) {
  for (int i = 0; i < coverage->count; i++)
    if (coverage->files[i].length == length && memcmp(coverage->files[i].source, source, length) == 0) return i;
  return -1;
}

static int file_of(lunar_Coverage *coverage, const char *source, size_t length) {
  SeenSource *seen = &coverage->seen[((uintptr_t)source >> 4) % SEEN_SOURCES];
  if (seen->address == source && seen->length == length && memcmp(seen->bytes, source, length) == 0)
    return seen->file;
  int file = registered_file(coverage, source, length);
  char *bytes = realloc(seen->bytes, length + 1);
  if (bytes == NULL) {
    seen->address = NULL;
    return file;
  }
  memcpy(bytes, source, length);
  *seen = (SeenSource){.address = source, .length = length, .bytes = bytes, .file = file};
  return file;
}

void lunar_coverageline(lunar_Coverage *coverage, lua_State *L, lua_Debug *ar) {
  if (coverage == NULL || ar->currentline < 0 || !lua_getinfo(L, "S", ar)) return;
  if (ar->source == NULL || ar->source[0] != '@') return;
  int index = file_of(coverage, ar->source, ar->srclen);
  if (index < 0) return;
  CoveredFile *file = &coverage->files[index];
  if (reach_line(file, ar->currentline)) file->hits[ar->currentline]++;
}

// MARK: - Executable lines, from the chunk's dump

typedef struct Dump {
  unsigned char *bytes;
  size_t size, capacity;
} Dump;

static int dump_writer(lua_State *L, const void *p, size_t size, void *ud) {
  (void)L;
  Dump *dump = ud;
  if (size > SIZE_MAX / 2 - dump->size) return 1;
  if (dump->size + size > dump->capacity) {
    size_t capacity = dump->capacity < 4096 ? 4096 : dump->capacity;
    while (capacity < dump->size + size) capacity *= 2;
    unsigned char *bytes = realloc(dump->bytes, capacity);
    if (bytes == NULL) return 1;
    dump->bytes = bytes;
    dump->capacity = capacity;
  }
  memcpy(dump->bytes + dump->size, p, size);
  dump->size += size;
  return 0;
}

// Reads a dump as lundump.c does; `ok` turns 0 at the first thing that is
// not as expected, and everything read after that is ignored.
typedef struct Reader {
  const unsigned char *at, *end;
  int ok;
} Reader;

static void skip(Reader *r, size_t n) {
  if (!r->ok || (size_t)(r->end - r->at) < n) {
    r->ok = 0;
    return;
  }
  r->at += n;
}

static int read_byte(Reader *r) {
  if (!r->ok || r->at >= r->end) {
    r->ok = 0;
    return 0;
  }
  return *r->at++;
}

// lundump.c's loadUnsigned: seven bits a byte, most significant first, the
// last byte marked by its high bit.
static size_t read_size(Reader *r) {
  size_t x = 0;
  int b;
  do {
    b = read_byte(r);
    if (x > (SIZE_MAX >> 7)) r->ok = 0;
    if (!r->ok) return 0;
    x = (x << 7) | (size_t)(b & 0x7f);
  } while ((b & 0x80) == 0);
  return x;
}

static int read_int(Reader *r) {
  size_t x = read_size(r);
  if (x > INT32_MAX) r->ok = 0;
  return r->ok ? (int)x : 0;
}

static void skip_string(Reader *r) {
  size_t size = read_size(r);
  if (size > 0) skip(r, size - 1);
}

// Constant tags of Lua 5.4 (lobject.h's makevariant).
enum { TAG_NIL = 0, TAG_FALSE = 1, TAG_TRUE = 17, TAG_INT = 3, TAG_FLOAT = 19, TAG_SHORTSTR = 4, TAG_LONGSTR = 20 };

// ldebug.c's ABSLINEINFO: the line of this instruction is in abslineinfo.
#define ABSLINEINFO (-0x80)

// The deepest nesting of functions read (the parser allows about 200).
#define MAX_NESTING 1000

static void mark(CoveredFile *file, int line, Reader *r) {
  if (line < 0 || !reach_line(file, line)) {
    r->ok = 0;
    return;
  }
  file->executable[line] = 1;
}

// lundump.c's loadFunction; marks the function's active lines and those of
// the functions inside it.
static void read_function(Reader *r, CoveredFile *file, int depth) {
  if (depth > MAX_NESTING) r->ok = 0;
  skip_string(r);  // source
  int linedefined = read_int(r);
  read_int(r);                  // lastlinedefined
  skip(r, 1);                   // numparams
  int is_vararg = read_byte(r);
  skip(r, 1);                   // maxstacksize
  int code = read_int(r);
  skip(r, (size_t)code * 4);
  int constants = read_int(r);
  for (int i = 0; i < constants && r->ok; i++) {
    switch (read_byte(r)) {
      case TAG_NIL: case TAG_FALSE: case TAG_TRUE: break;
      case TAG_INT: case TAG_FLOAT: skip(r, 8); break;
      case TAG_SHORTSTR: case TAG_LONGSTR: skip_string(r); break;
      default: r->ok = 0;
    }
  }
  int upvalues = read_int(r);
  skip(r, (size_t)upvalues * 3);
  int protos = read_int(r);
  for (int i = 0; i < protos && r->ok; i++) read_function(r, file, depth + 1);
  int lineinfos = read_int(r);
  const signed char *lineinfo = (const signed char *)r->at;
  skip(r, (size_t)lineinfos);
  int absolutes = read_int(r);
  const unsigned char *absolute = r->at;
  for (int i = 0; i < absolutes && r->ok; i++) {
    read_int(r);
    read_int(r);
  }
  int locals = read_int(r);
  for (int i = 0; i < locals && r->ok; i++) {
    skip_string(r);
    read_int(r);
    read_int(r);
  }
  int upvaluenames = read_int(r);
  for (int i = 0; i < upvaluenames && r->ok; i++) skip_string(r);
  if (!r->ok) return;
  // ldebug.c's collectvalidlines and nextline. A vararg function's first
  // instruction (OP_VARARGPREP) is skipped: no line hook reports it.
  Reader pairs = {.at = absolute, .end = r->end, .ok = 1};
  int pairsleft = absolutes, pairpc = -1, pairline = 0;
  int line = linedefined;
  for (int pc = 0; pc < lineinfos && r->ok; pc++) {
    if (lineinfo[pc] != ABSLINEINFO) {
      line += lineinfo[pc];
    } else {
      while (pairpc < pc && pairsleft > 0) {
        pairpc = read_int(&pairs);
        pairline = read_int(&pairs);
        pairsleft--;
      }
      if (pairpc != pc || !pairs.ok) {
        r->ok = 0;
        return;
      }
      line = pairline;
    }
    if (pc > 0 || !is_vararg) mark(file, line, r);
  }
}

// Marks every active line of the chunk a dump holds; 0 if the dump is not
// in the format this file reads.
static int read_chunk(const Dump *dump, CoveredFile *file) {
  static const unsigned char header[] = {0x1b, 'L', 'u', 'a', 0x54, 0, 0x19, 0x93, '\r', '\n', 0x1a, '\n', 4, 8, 8};
  Reader r = {.at = dump->bytes, .end = dump->bytes + dump->size, .ok = 1};
  if (dump->size < sizeof header + 17 || memcmp(dump->bytes, header, sizeof header) != 0) return 0;
  skip(&r, sizeof header + 8 + 8);  // then a test integer and a test float
  skip(&r, 1);                      // the main function's upvalue count
  read_function(&r, file, 0);
  return r.ok;
}

// MARK: - Registering files

void lunar_coverageregister(lunar_Coverage *coverage, lua_State *L, int idx) {
  if (coverage == NULL || !lua_checkstack(L, 2)) return;
  idx = lua_absindex(L, idx);
  lua_Debug ar;
  lua_pushvalue(L, idx);
  if (!lua_getinfo(L, ">S", &ar) || ar.source[0] != '@' || strcmp(ar.what, "main") != 0) return;
  if (registered_file(coverage, ar.source, ar.srclen) >= 0) return;
  if (coverage->count == coverage->capacity) {
    int capacity = coverage->capacity == 0 ? 8 : coverage->capacity * 2;
    CoveredFile *files = realloc(coverage->files, (size_t)capacity * sizeof *files);
    if (files == NULL) return;
    coverage->files = files;
    coverage->capacity = capacity;
  }
  char *source = malloc(ar.srclen + 1);
  if (source == NULL) return;
  memcpy(source, ar.source, ar.srclen);
  CoveredFile *file = &coverage->files[coverage->count];
  *file = (CoveredFile){.source = source, .length = ar.srclen};
  coverage->count++;
  // Lookups made before may have found no file for this source.
  for (int i = 0; i < SEEN_SOURCES; i++) coverage->seen[i].address = NULL;
  Dump dump = {0};
  lua_pushvalue(L, idx);
  int failed = lua_dump(L, dump_writer, &dump, 0);
  lua_pop(L, 1);
  // A dump that cannot be read leaves only the lines that run counted: the
  // total is then too kind, never wrong about a line that ran.
  if (!failed) read_chunk(&dump, file);
  free(dump.bytes);
}

// MARK: - dofile and loadfile that register what they load

static int dofile_continued(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  return lua_gettop(L) - 1;
}

// lbaselib.c's luaB_dofile.
int lunar_coveragedofile(lua_State *L) {
  const char *name = luaL_optstring(L, 1, NULL);
  lua_settop(L, 1);
  if (luaL_loadfile(L, name) != LUA_OK) return lua_error(L);
  lunar_coverageregister(lunar_coveragestate(L), L, -1);
  lua_callk(L, 0, LUA_MULTRET, 0, dofile_continued);
  return dofile_continued(L, 0, 0);
}

// lbaselib.c's luaB_loadfile and load_aux.
static int coverage_loadfile(lua_State *L) {
  const char *name = luaL_optstring(L, 1, NULL);
  const char *mode = luaL_optstring(L, 2, NULL);
  int env = !lua_isnone(L, 3) ? 3 : 0;
  if (luaL_loadfilex(L, name, mode) != LUA_OK) {
    luaL_pushfail(L);
    lua_insert(L, -2);
    return 2;
  }
  lunar_coverageregister(lunar_coveragestate(L), L, -1);
  if (env != 0) {
    lua_pushvalue(L, env);
    if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
  }
  return 1;
}

// Raw sets: called from Swift, where nothing may raise.
void lunar_installcoverageloaders(lua_State *L) {
  lua_pushglobaltable(L);
  lua_pushliteral(L, "dofile");
  lua_pushcfunction(L, lunar_coveragedofile);
  lua_rawset(L, -3);
  lua_pushliteral(L, "loadfile");
  lua_pushcfunction(L, coverage_loadfile);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

// MARK: - Counting from now on

lunar_Coverage *lunar_coveragestate(lua_State *L) { return control(L)->coverage; }

int lunar_startcoverage(lua_State *L) {
  lunar_Control *c = control(L);
  if (c->coverage == NULL && (c->coverage = lunar_coveragenew()) == NULL) return 0;
  atomic_store(&c->linemask, LUA_MASKLINE);
  lunar_hookforcoverage(c, L);
  lunar_installcoverageloaders(L);
  return 1;
}

// MARK: - Reading the counts

static CoveredFile *covered(lua_State *L, int i) {
  lunar_Coverage *coverage = lunar_coveragestate(L);
  return coverage != NULL && i >= 0 && i < coverage->count ? &coverage->files[i] : NULL;
}

int lunar_coveragefilecount(lua_State *L) {
  lunar_Coverage *coverage = lunar_coveragestate(L);
  return coverage != NULL ? coverage->count : 0;
}

const char *lunar_coveragesource(lua_State *L, int i, size_t *length) {
  CoveredFile *file = covered(L, i);
  *length = file != NULL ? file->length : 0;
  return file != NULL ? file->source : "";
}

int lunar_coveragelines(lua_State *L, int i, const uint64_t **hits, const unsigned char **executable) {
  CoveredFile *file = covered(L, i);
  *hits = file != NULL ? file->hits : NULL;
  *executable = file != NULL ? file->executable : NULL;
  return file != NULL ? file->lines : 0;
}
