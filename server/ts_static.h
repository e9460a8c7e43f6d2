/*
 * ts_static.h - serve dashboard files from a web root.
 *
 * Paths are checked twice: lexically (no ".." or "." segment, no
 * dot-files; "a..b.js" is a name like any other; no
 * backslashes) and after realpath() (must stay under the root, so a
 * symlink cannot lead out).  Files are read whole; they are small.
 */
#ifndef TS_STATIC_H
#define TS_STATIC_H

#include <stddef.h>

#define TS_STATIC_FILE_MAX (4u * 1024u * 1024u)

typedef enum ts_static_status {
    TS_STATIC_OK = 0,
    TS_STATIC_NOTFOUND, /* missing, not a regular file, or refused path */
    TS_STATIC_TOOBIG,   /* over TS_STATIC_FILE_MAX */
    TS_STATIC_NOMEM
} ts_static_status;

typedef struct ts_static_file {
    char *data; /* malloc'd (possibly for 0 bytes) */
    size_t len;
    const char *content_type;  /* static */
    const char *cache_control; /* static */
    char etag[64];             /* strong validator from size and mtime */
} ts_static_file;

/* realpath() of dir, malloc'd; NULL when it does not exist. */
char *ts_static_root(const char *dir);

/* Load url_path ("/", "/app.js") below root (a ts_static_root() result). */
ts_static_status ts_static_load(const char *root, const char *url_path, ts_static_file *out);

/* Load one file by its path (the OpenAPI document). */
ts_static_status ts_static_load_file(const char *path, ts_static_file *out);

const char *ts_static_mime(const char *path);

#endif /* TS_STATIC_H */
