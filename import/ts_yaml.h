/*
 * ts_yaml.h - YAML text -> a jansson tree, as PyYAML's safe_load reads it
 * (import/ts_yaml.c says which rules).  Built with libyaml only
 * (TS_HAVE_YAML).
 */
#ifndef TS_YAML_H
#define TS_YAML_H

#include <stddef.h>

#include <jansson.h>

#include "ts_api_int.h"

/* The document in text[0..len) (no NUL in it) as a JSON object, new
 * reference; NULL with err set (a 400 whose pointer starts with base,
 * "/axolotl_config", or out of memory).  The document must be one YAML
 * mapping of at most TS_IMPORT_NODES_MAX values nested at most
 * TS_IMPORT_DEPTH_MAX deep. */
json_t *ts_yaml_read(const char *text, size_t len, const char *base, ts_api_err *err);

struct ts_import;
/* An importer's mapping of its document (cfg), proposing into im. */
typedef int (*ts_yaml_map_fn)(struct ts_import *im, const json_t *cfg, ts_api_err *err);

/* A YAML member's text (member "axolotl_config") read and mapped: at most
 * TS_IMPORT_ARGS_MAX bytes, no NUL, one mapping within the import caps
 * (ts_import_check_size), then map.  0, or -1 with a 400 at /member. */
int ts_yaml_import(struct ts_import *im, const char *text, size_t len, const char *member,
                   ts_yaml_map_fn map, ts_api_err *err);

#endif /* TS_YAML_H */
