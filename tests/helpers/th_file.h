/*
 * th_file.h - whole-file reads and writes for the tests (data files,
 * temporary web roots, CLI inputs).
 */
#ifndef TH_FILE_H
#define TH_FILE_H

#include <stddef.h>

/* A whole file into a malloc'd NUL-terminated buffer (*len without the
 * NUL; len may be NULL); NULL when it cannot be read. */
char *th_read_file(const char *path, size_t *len);

/* dir/name (name NULL: dir is the path) := text; fails the running Check
 * test when it cannot be written. */
void th_write_file(const char *dir, const char *name, const char *text);

#endif /* TH_FILE_H */
