#include "CLineEditor.h"

#include <dlfcn.h>
#include <stddef.h>

static struct {
  char *(*readline)(const char *);
  void (*add_history)(const char *);
  int (*read_history)(const char *);
  int (*write_history)(const char *);
  void (*using_history)(void);
  char **(*completion_matches)(const char *, char *(*)(const char *, int));
  char **(**attempted_completion)(const char *, int, int);
  const char **word_break_characters;
  int loaded;
} edit;

static lunar_completer completer;

int lunar_editor_open(void) {
  if (edit.loaded) return 1;
  void *library = dlopen("libedit.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return 0;
  *(void **)(&edit.readline) = dlsym(library, "readline");
  *(void **)(&edit.add_history) = dlsym(library, "add_history");
  *(void **)(&edit.read_history) = dlsym(library, "read_history");
  *(void **)(&edit.write_history) = dlsym(library, "write_history");
  *(void **)(&edit.using_history) = dlsym(library, "using_history");
  *(void **)(&edit.completion_matches) = dlsym(library, "rl_completion_matches");
  edit.attempted_completion = dlsym(library, "rl_attempted_completion_function");
  edit.word_break_characters = dlsym(library, "rl_basic_word_break_characters");
  if (edit.readline == NULL || edit.add_history == NULL) return 0;
  if (edit.using_history) edit.using_history();
  edit.loaded = 1;
  return 1;
}

char *lunar_editor_readline(const char *prompt) { return edit.readline(prompt); }

void lunar_editor_add_history(const char *line) { edit.add_history(line); }

void lunar_editor_read_history(const char *path) {
  if (edit.read_history) edit.read_history(path);
}

void lunar_editor_write_history(const char *path) {
  if (edit.write_history) edit.write_history(path);
}

static char **attempt(const char *text, int start, int end) {
  (void)start;
  (void)end;
  if (completer == NULL || edit.completion_matches == NULL) return NULL;
  return edit.completion_matches(text, completer);
}

void lunar_editor_set_completer(lunar_completer function) {
  completer = function;
  // Dots and colons belong to the word, so `lunar.qu` completes as a whole.
  if (edit.word_break_characters) *edit.word_break_characters = " \t\n\"\\'`@$><=;|&{(+-*/%^#~,[]";
  if (edit.attempted_completion) *edit.attempted_completion = attempt;
}
