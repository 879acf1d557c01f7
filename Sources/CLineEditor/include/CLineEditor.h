// CLineEditor: line editing and history from Debian's libedit, opened on
// first use (the REPL) so that `lunar run` never pays for loading it.
#ifndef CLINEEDITOR_H
#define CLINEEDITOR_H

/// Loads libedit; returns 0 if it is unavailable (then read plainly).
int lunar_editor_open(void);
/// Reads a line with editing; NULL at end of input. Free the result.
char *lunar_editor_readline(const char *prompt);
/// Adds a line to the history.
void lunar_editor_add_history(const char *line);
/// Loads and saves the history file.
void lunar_editor_read_history(const char *path);
void lunar_editor_write_history(const char *path);

/// Supplies completions: called with the word before the cursor and an
/// index (0, 1, ...); returns a malloc'd candidate or NULL when done.
typedef char *(*lunar_completer)(const char *text, int state);
/// Installs the completer for Tab.
void lunar_editor_set_completer(lunar_completer completer);

#endif
