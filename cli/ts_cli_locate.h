/*
 * ts_cli_locate.h - the line of a file that a JSON pointer or a note
 * names, for annotations (`--format github`: file=...,line=...).
 *
 * The API names what it judged by JSON pointer into the request
 * ("/hf_config/torch_dtype"); a CI annotation needs the file and line
 * where the user wrote it: in a plan file, or in a config given on the
 * command line (--hf-config config.json: "/torch_dtype" in that file).
 */
#ifndef TS_CLI_LOCATE_H
#define TS_CLI_LOCATE_H

#include <stdbool.h>
#include <stddef.h>

/* 1-based line of the member (or array element) that pointer (RFC 6901)
 * names in the JSON text, of its name for a member; 0 when the text does
 * not hold it.  "" names the whole document: line 1. */
unsigned ts_loc_json(const char *text, const char *pointer);

/* The bytes of the value pointer names in the JSON text: *off and *len;
 * false when the text does not hold it. */
bool ts_loc_json_span(const char *text, const char *pointer, size_t *off, size_t *len);

/* 1-based line of the first "key:" at the start of a line (after
 * indentation) of a YAML text; 0 when none. */
unsigned ts_loc_yaml_key(const char *text, const char *key);

/* 1-based line of the first occurrence of word (not inside a longer
 * word: "--seq" does not match "--seq-length") in text; 0 when none. */
unsigned ts_loc_word(const char *text, const char *word);

#endif /* TS_CLI_LOCATE_H */
