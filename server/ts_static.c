/*
 * ts_static.c - static files from the web root (see ts_static.h).
 */
/* realpath() is an XSI extension of POSIX 2008. */
#define _XOPEN_SOURCE 700

#include "ts_static.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *ext;
    const char *type;
} mime_types[] = {
    { ".html", "text/html; charset=utf-8" },
    { ".js", "text/javascript; charset=utf-8" },
    { ".mjs", "text/javascript; charset=utf-8" },
    { ".css", "text/css; charset=utf-8" },
    { ".svg", "image/svg+xml" },
    { ".json", "application/json" },
    { ".png", "image/png" },
    { ".ico", "image/x-icon" },
    { ".txt", "text/plain; charset=utf-8" },
};

const char *ts_static_mime(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot != NULL && (slash == NULL || dot > slash))
        for (size_t i = 0; i < sizeof mime_types / sizeof mime_types[0]; i++)
            if (strcmp(dot, mime_types[i].ext) == 0)
                return mime_types[i].type;
    return "application/octet-stream";
}

char *ts_static_root(const char *dir)
{
    struct stat st;
    char *real = realpath(dir, NULL);
    if (real == NULL)
        return NULL;
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(real);
        return NULL;
    }
    return real;
}

/* Lexical check, per path segment: absolute; no segment that starts with
 * '.', which refuses the dot-segments "." and ".." (RFC 3986 5.2.4: the
 * ones that climb) and dot-files alike; no backslash or control bytes.
 * Only whole segments count: "/a..b.js" is a file name, not a climb (the
 * check was once strstr(p, ".."), which refused it).  Cheap, and it stops
 * traversal before any system call sees the path; realpath() below is
 * the second wall. */
static int path_ok(const char *p)
{
    if (p[0] != '/')
        return 0;
    for (const char *c = p; *c != '\0'; c++) {
        unsigned char u = (unsigned char)*c;
        if (u < 0x20 || u == 0x7f || u == '\\')
            return 0;
        if (*c == '/' && c[1] == '.')
            return 0;
    }
    return 1;
}

static ts_static_status read_file(const char *path, ts_static_file *out)
{
    /* O_NONBLOCK: opening a FIFO (or a device) for reading would block
     * this worker until a writer appears; with it, open returns at once
     * and fstat below turns away anything but a regular file.  Reads of
     * a regular file ignore the flag. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ENOMEM ? TS_STATIC_NOMEM : TS_STATIC_NOTFOUND;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return TS_STATIC_NOTFOUND;
    }
    if (st.st_size > (off_t)TS_STATIC_FILE_MAX) {
        close(fd);
        return TS_STATIC_TOOBIG;
    }
    size_t size = (size_t)st.st_size;
    char *data = malloc(size + 1);
    if (data == NULL) {
        close(fd);
        return TS_STATIC_NOMEM;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, data + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* truncated under us: serve what is there */
        got += (size_t)n;
    }
    close(fd);
    data[got] = '\0';
    out->data = data;
    out->len = got;
    out->content_type = ts_static_mime(path);
    /* HTML names the versioned assets, so it must be revalidated. */
    out->cache_control =
        strncmp(out->content_type, "text/html", 9) == 0 ? "no-cache" : "max-age=3600";
    snprintf(out->etag, sizeof out->etag, "\"%llx-%llx.%lx\"", (unsigned long long)st.st_size,
             (unsigned long long)st.st_mtim.tv_sec, (unsigned long)st.st_mtim.tv_nsec);
    return TS_STATIC_OK;
}

ts_static_status ts_static_load_file(const char *path, ts_static_file *out)
{
    memset(out, 0, sizeof *out);
    return read_file(path, out);
}

ts_static_status ts_static_load(const char *root, const char *url_path, ts_static_file *out)
{
    memset(out, 0, sizeof *out);
    if (root == NULL || !path_ok(url_path))
        return TS_STATIC_NOTFOUND;

    char joined[PATH_MAX];
    size_t ul = strlen(url_path);
    const char *index = url_path[ul - 1] == '/' ? "index.html" : "";
    int n = snprintf(joined, sizeof joined, "%s%s%s", root, url_path, index);
    if (n < 0 || (size_t)n >= sizeof joined)
        return TS_STATIC_NOTFOUND;

    char *real = realpath(joined, NULL);
    if (real == NULL)
        return errno == ENOMEM ? TS_STATIC_NOMEM : TS_STATIC_NOTFOUND;
    size_t rl = strlen(root);
    /* A symlink may point anywhere; only what resolves inside is served. */
    ts_static_status st = TS_STATIC_NOTFOUND;
    if (strncmp(real, root, rl) == 0 && (rl == 1 || real[rl] == '/'))
        st = read_file(real, out);
    free(real);
    return st;
}
