// CSharedLibrary: opening a C library at run time and finding its
// functions, for the libraries only some commands need (libpq, libsqlite3,
// libcurl), so that starting `lunar` never loads them.
#ifndef CSHAREDLIBRARY_H
#define CSHAREDLIBRARY_H

#include <stddef.h>

/// One function to find: its symbol in the library, and where its address goes.
typedef struct lunar_symbol {
  const char *name;
  void **slot;
} lunar_symbol;

/// Opens `soname` (now, privately) and stores the address of each of the
/// `count` symbols in its slot. Returns 1 when every one was found; else 0,
/// with the library closed again and `error` (`size` bytes) saying why:
/// "cannot load SONAME: ..." or "SONAME lacks NAME".
int lunar_openlibrary(const char *soname, const lunar_symbol *symbols, int count, char *error, size_t size);

#endif
