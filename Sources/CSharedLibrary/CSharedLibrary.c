#include "CSharedLibrary.h"

#include <dlfcn.h>
#include <stdio.h>

int lunar_openlibrary(const char *soname, const lunar_symbol *symbols, int count, char *error, size_t size) {
  void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    snprintf(error, size, "cannot load %s: %s", soname, dlerror());
    return 0;
  }
  for (int i = 0; i < count; i++) {
    *symbols[i].slot = dlsym(library, symbols[i].name);
    if (*symbols[i].slot == NULL) {
      snprintf(error, size, "%s lacks %s", soname, symbols[i].name);
      dlclose(library);
      return 0;
    }
  }
  return 1;
}
