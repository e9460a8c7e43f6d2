/*
 * ts_cli_opts.c - run options parser.
 *
 * The table itself, ts_cli_field_table[], is generated at build time from
 * the api's field registry (tools/ts_gen_fields.c cli-c, into the build
 * dir as ts_cli_fields.c): one row per run field, with its JSON type and
 * help, so an input added to the API is an option here without an edit.
 */
#include "ts_cli_opts.h"
#include "ts_utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS_CLI_NFIELDS  ts_cli_field_count
#define TS_CLI_NAME_MAX 40

static ts_cli_status opt_fail(ts_cli_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static ts_cli_status opt_fail(ts_cli_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
    return TS_CLI_EUSAGE;
}

const ts_cli_field *ts_cli_fields(size_t *count)
{
    *count = TS_CLI_NFIELDS;
    return ts_cli_field_table;
}

const char *ts_cli_field_metavar(const ts_cli_field *f)
{
    switch (f->kind) {
    case TS_CLI_STR:
        return "NAME";
    case TS_CLI_INT:
        return "N";
    case TS_CLI_NUM:
        return "X";
    case TS_CLI_BOOL:
    default:
        return NULL;
    }
}

const ts_cli_field *ts_cli_field_find(const char *json_name)
{
    for (size_t i = 0; i < TS_CLI_NFIELDS; i++)
        if (strcmp(ts_cli_field_table[i].name, json_name) == 0)
            return &ts_cli_field_table[i];
    return NULL;
}

/* "micro-batch" (len bytes) -> "micro_batch"; false when it does not fit. */
static bool opt_to_json_name(const char *opt, size_t len, char *out, size_t cap)
{
    if (len == 0 || len >= cap)
        return false;
    for (size_t i = 0; i < len; i++)
        out[i] = opt[i] == '-' ? '_' : opt[i];
    out[len] = '\0';
    return true;
}

static bool parse_int(const char *s, json_int_t *out)
{
    char *end;
    long long v;

    if (*s == '\0')
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = (json_int_t)v;
    return true;
}

static bool parse_num(const char *s, bool suffix, double *out)
{
    char *end;
    double v, mul = 1.0;

    if (*s == '\0')
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s)
        return false;
    if (suffix && *end != '\0' && end[1] == '\0') {
        /* decimal multipliers, as model cards write them: 70B, 15T */
        switch (*end) {
        case 'k':
        case 'K':
            mul = 1e3;
            break;
        case 'm':
        case 'M':
            mul = 1e6;
            break;
        case 'b':
        case 'B':
        case 'g':
        case 'G':
            mul = 1e9;
            break;
        case 't':
        case 'T':
            mul = 1e12;
            break;
        default:
            return false;
        }
        end++;
    }
    if (*end != '\0')
        return false;
    v *= mul;
    if (!isfinite(v))
        return false;
    *out = v;
    return true;
}

static int parse_bool(const char *s)
{
    if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "on"))
        return 1;
    if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "off"))
        return 0;
    return -1;
}

json_t *ts_cli_typed_value(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);

    /* bare words (h100-sxm, bf16) are strings; "\"8\"" forces a string */
    if (!v)
        v = json_string(text);
    return v;
}

static ts_cli_status set_field(json_t *run, const char *name, json_t *v)
{
    if (!v)
        return TS_CLI_ENOMEM;
    if (json_object_set_new(run, name, v) != 0)
        return TS_CLI_ENOMEM;
    return TS_CLI_OK;
}

static ts_cli_status parse_set(const char *kv, json_t *run, ts_cli_error *err)
{
    const char *eq = strchr(kv, '=');
    char key[TS_CLI_NAME_MAX + 1];
    size_t klen;

    if (!eq)
        return opt_fail(err, "--set needs key=value, got '%s'", kv);
    klen = (size_t)(eq - kv);
    if (klen == 0)
        return opt_fail(err, "--set needs a key before '=', got '%s'", kv);
    if (klen > TS_CLI_NAME_MAX)
        return opt_fail(err, "--set key too long: '%.*s...'", ts_utf8_prec(kv, 20), kv);
    memcpy(key, kv, klen);
    key[klen] = '\0';
    /* unknown keys are sent as is: the server rejects them, naming the field */
    return set_field(run, key, ts_cli_typed_value(eq + 1));
}

static ts_cli_status set_typed(const ts_cli_field *f, const char *opt, const char *val, json_t *run,
                               ts_cli_error *err)
{
    json_int_t iv;
    double dv;
    int bv;

    switch (f->kind) {
    case TS_CLI_STR:
        if (*val == '\0')
            return opt_fail(err, "--%s needs a non-empty value", opt);
        return set_field(run, f->name, json_string(val));
    case TS_CLI_INT:
        if (!parse_int(val, &iv))
            return opt_fail(err, "--%s needs an integer, got '%s'", opt, val);
        return set_field(run, f->name, json_integer(iv));
    case TS_CLI_NUM:
        if (!parse_num(val, f->suffix, &dv))
            return opt_fail(err, "--%s needs a finite number%s, got '%s'", opt,
                            f->suffix ? " (suffix k, M, B, T allowed)" : "", val);
        /* whole numbers go out as integers so 7e9 reads as 7000000000 */
        if (dv == floor(dv) && fabs(dv) < 9e15)
            return set_field(run, f->name, json_integer((json_int_t)dv));
        return set_field(run, f->name, json_real(dv));
    case TS_CLI_BOOL:
        bv = parse_bool(val);
        if (bv < 0)
            return opt_fail(err, "--%s needs true or false, got '%s'", opt, val);
        return set_field(run, f->name, json_boolean(bv));
    }
    return opt_fail(err, "--%s: internal error", opt);
}

ts_cli_status ts_cli_parse_run_option(int argc, char **argv, int *i, json_t *run, ts_cli_error *err)
{
    const char *arg = argv[*i];
    const char *opt, *eq, *val = NULL;
    char name[TS_CLI_NAME_MAX + 1];
    const ts_cli_field *f;
    size_t len;
    bool negated = false;

    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
        return TS_CLI_NOMATCH;
    opt = arg + 2;
    eq = strchr(opt, '=');
    len = eq ? (size_t)(eq - opt) : strlen(opt);

    if (len == 3 && strncmp(opt, "set", 3) == 0) {
        if (eq)
            return parse_set(eq + 1, run, err);
        if (*i + 1 >= argc)
            return opt_fail(err, "--set needs key=value");
        return parse_set(argv[++*i], run, err);
    }

    if (!opt_to_json_name(opt, len, name, sizeof name))
        return TS_CLI_NOMATCH;
    f = ts_cli_field_find(name);
    if (!f && strncmp(name, "no_", 3) == 0) {
        f = ts_cli_field_find(name + 3);
        if (!f || f->kind != TS_CLI_BOOL)
            return TS_CLI_NOMATCH;
        if (eq)
            return opt_fail(err, "--%.*s takes no value", (int)len, opt);
        negated = true;
    }
    if (!f)
        return TS_CLI_NOMATCH;

    if (f->kind == TS_CLI_BOOL) {
        /* flags never eat the next argument: "--gated true" would be ambiguous */
        if (negated)
            return set_field(run, f->name, json_false());
        if (!eq)
            return set_field(run, f->name, json_true());
        return set_typed(f, name, eq + 1, run, err);
    }

    if (eq) {
        val = eq + 1;
    } else {
        if (*i + 1 >= argc)
            return opt_fail(err, "--%s needs a value", opt);
        val = argv[++*i];
    }
    /* report the option as typed (--micro-batch), not the JSON name */
    {
        char shown[TS_CLI_NAME_MAX + 1];
        memcpy(shown, opt, len);
        shown[len] = '\0';
        return set_typed(f, shown, val, run, err);
    }
}

void ts_cli_print_run_options(FILE *out)
{
    /* The lines are laid out by the generator (tools/ts_gen_fields.c). */
    for (const char *const *line = ts_cli_run_options_help; *line != NULL; line++)
        fputs(*line, out);
    fprintf(out, "  --set KEY=VALUE           any run field; VALUE as JSON (8, 0.4, true, \"x\") "
                 "else a string\n");
}
