/*
 * ts_catalogue.c - names and shapes of the model catalogue (ts_catalogue.h).
 *
 * Names compare by ts_name_same (core/ts_name.c), so "qwen2.5-72b",
 * "Qwen/Qwen2.5-72B" and "QWEN2.5_72B" are one model.  The shape is the
 * hf_config importer's reading of the entry's config.json, so a catalogue
 * model counts exactly what an uploaded copy of that file counts.
 */
#include <stdio.h>
#include <string.h>

#include "ts_catalogue.h"

size_t ts_catalogue_count(void)
{
    return ts_catalogue_table_n;
}

const ts_catalogue_entry *ts_catalogue_at(size_t i)
{
    return i < ts_catalogue_table_n ? &ts_catalogue_table[i] : NULL;
}

/* name against a Hub name, with or without its organisation. */
static bool hub_same(const char *hub, const char *name)
{
    const char *slash = strchr(hub, '/');

    return ts_name_same(hub, name) || (slash != NULL && ts_name_same(slash + 1, name));
}

const ts_catalogue_entry *ts_catalogue_find(const char *name)
{
    size_t i, k;

    if (name == NULL)
        return NULL;
    for (i = 0; i < ts_catalogue_table_n; i++)
        if (hub_same(ts_catalogue_table[i].id, name))
            return &ts_catalogue_table[i];
    for (i = 0; i < ts_catalogue_table_n; i++)
        for (k = 0; ts_catalogue_table[i].aliases[k] != NULL; k++)
            if (hub_same(ts_catalogue_table[i].aliases[k], name))
                return &ts_catalogue_table[i];
    return NULL;
}

int64_t ts_catalogue_vocab(const ts_catalogue_entry *e)
{
    json_t *cfg = json_loads(e->config, 0, NULL);
    const json_t *v;
    int64_t n = 0;

    if (cfg == NULL)
        return 0;
    v = json_object_get(cfg, "vocab_size");
    if (!json_is_integer(v))
        v = json_object_get(json_object_get(cfg, "text_config"), "vocab_size");
    if (json_is_integer(v) && json_integer_value(v) > 0)
        n = (int64_t)json_integer_value(v);
    json_decref(cfg);
    return n;
}

const ts_preset *ts_catalogue_shadow(const ts_catalogue_entry *e)
{
    return e != NULL ? ts_preset_find(e->id) : NULL;
}

/* Skips prefix (ASCII, any case) at *s; true when it was there. */
static bool skip_prefix(const char **s, const char *prefix)
{
    const char *t = *s;

    for (; *prefix != '\0'; prefix++, t++)
        if (*t != *prefix && !(*t >= 'A' && *t <= 'Z' && *t - 'A' + 'a' == *prefix))
            return false;
    *s = t;
    return true;
}

/* A Hub page below a repository: /tree/<rev>, /blob/<rev>/<file>, ... */
static bool page_word(const char *s)
{
    static const char *const words[] = { "tree",   "blob",    "resolve",     "raw",
                                         "commit", "commits", "discussions", "files" };
    size_t i, n = strcspn(s, "/?#");

    for (i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == n && strncmp(s, words[i], n) == 0)
            return true;
    return false;
}

/* The repository a Hub page's address names, into buf:
 * "https://huggingface.co/meta-llama/Llama-3.1-8B/tree/main" ->
 * "meta-llama/Llama-3.1-8B" (the first two path segments: the rest is a
 * revision or a file).  name itself when it is not such an address. */
static const char *hub_repo(const char *name, char *buf, size_t size)
{
    const char *s = name, *end;
    size_t n;

    if (!skip_prefix(&s, "https://"))
        skip_prefix(&s, "http://");
    skip_prefix(&s, "www.");
    if (!skip_prefix(&s, "huggingface.co/") && !skip_prefix(&s, "hf.co/"))
        return name;
    /* the query or fragment is not the repository's */
    n = strcspn(s, "?#");
    end = memchr(s, '/', n);
    /* "gpt2/tree/main": a repository without an organisation, then a page */
    if (end != NULL && !page_word(end + 1))
        end = memchr(end + 1, '/', n - (size_t)(end + 1 - s));
    if (end != NULL)
        n = (size_t)(end - s);
    if (n == 0 || n >= size)
        return name;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

/* Another organisation's copy of a catalogue model (unsloth,
 * NousResearch, ... re-upload the publishers' checkpoints under the same
 * name): the name after the organisation's slash, or NULL. */
static const char *org_tail(const char *name)
{
    const char *slash = strchr(name, '/');

    return slash != NULL && slash[1] != '\0' && strchr(slash + 1, '/') == NULL ? slash + 1 : NULL;
}

/* A quantised copy's name: the model's and a suffix saying how the same
 * tensors are stored, the longest first: bitsandbytes' (unsloth's
 * "-bnb-4bit", "-unsloth-bnb-4bit") and FP8's ("-FP8", "-FP8-Dynamic"),
 * which keep every shape.  Not AWQ or GPTQ: their checkpoints may pad a
 * shape for their kernels (Qwen2.5-72B-Instruct-AWQ's intermediate_size
 * 29696, where the model has 29568).  The name without it into buf, or
 * NULL when it has none. */
static const char *quant_base(const char *name, char *buf, size_t size)
{
    static const char *const suffix[] = { "-unsloth-bnb-4bit", "-bnb-4bit", "-bnb-8bit",
                                          "-fp8-dynamic", "-fp8" };
    size_t n = strlen(name), i;

    for (i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        size_t k = strlen(suffix[i]);
        const char *t;

        if (n <= k || n - k >= size || name[n - k - 1] == '/')
            continue;
        t = name + n - k;
        if (!skip_prefix(&t, suffix[i]))
            continue;
        memcpy(buf, name, n - k);
        buf[n - k] = '\0';
        return buf;
    }
    return NULL;
}

static int resolve_as(const char *name, const ts_preset **p, const ts_catalogue_entry **e)
{
    *p = ts_preset_find(name);
    *e = NULL;
    if (*p != NULL)
        return 1;
    *e = ts_catalogue_find(name);
    if (*e == NULL)
        return 0;
    /* A preset's checkpoint keeps the preset's answers (and its paper's
     * context and tokens), by any of the entry's names. */
    if ((*p = ts_catalogue_shadow(*e)) != NULL)
        *e = NULL;
    return 1;
}

/* The entry name means: its own names, or a preset's (a preset's aliases
 * name its checkpoint, "meta-llama/Llama-3.1-8B-Instruct"), whose entry
 * is the one the preset shadows. */
static const ts_catalogue_entry *entry_named(const char *name)
{
    const ts_catalogue_entry *e = ts_catalogue_find(name);
    const ts_preset *p;
    size_t i;

    if (e != NULL || (p = ts_preset_find(name)) == NULL)
        return e;
    for (i = 0; i < ts_catalogue_table_n; i++)
        if (ts_catalogue_shadow(&ts_catalogue_table[i]) == p)
            return &ts_catalogue_table[i];
    return NULL;
}

/* The entry name or another organisation's copy of it names; *how as
 * ts_catalogue_lookup's. */
static const ts_catalogue_entry *entry_or_copy(const char *name, int *how)
{
    const ts_catalogue_entry *e;
    const char *tail;

    if ((e = entry_named(name)) != NULL) {
        *how = 1;
        return e;
    }
    if ((tail = org_tail(name)) == NULL || (e = entry_named(tail)) == NULL)
        return NULL;
    *how = TS_CATALOGUE_OTHER_ORG;
    return e;
}

const ts_catalogue_entry *ts_catalogue_lookup(const char *name, int *how)
{
    char buf[TS_NAME_KEY_MAX], qbuf[TS_NAME_KEY_MAX];
    const ts_catalogue_entry *e;
    const char *base;

    *how = 0;
    if (name == NULL)
        return NULL;
    name = hub_repo(name, buf, sizeof buf);
    if ((e = entry_or_copy(name, how)) != NULL)
        return e;
    if ((base = quant_base(name, qbuf, sizeof qbuf)) == NULL ||
        (e = entry_or_copy(base, how)) == NULL)
        return NULL;
    *how = TS_CATALOGUE_QUANT;
    return e;
}

/* The preset or entry name or another organisation's copy of it names:
 * 1, TS_CATALOGUE_OTHER_ORG, or 0 (entry_or_copy's twin for presets). */
static int resolve_or_copy(const char *name, const ts_preset **p, const ts_catalogue_entry **e)
{
    const char *tail;

    if (resolve_as(name, p, e))
        return 1;
    if ((tail = org_tail(name)) != NULL && resolve_as(tail, p, e))
        return TS_CATALOGUE_OTHER_ORG;
    return 0;
}

int ts_catalogue_resolve(const char *name, const ts_preset **p, const ts_catalogue_entry **e)
{
    char buf[TS_NAME_KEY_MAX], qbuf[TS_NAME_KEY_MAX];
    const char *base;
    int how;

    *p = NULL;
    *e = NULL;
    if (name == NULL)
        return 0;
    name = hub_repo(name, buf, sizeof buf);
    if ((how = resolve_or_copy(name, p, e)) != 0)
        return how;
    if ((base = quant_base(name, qbuf, sizeof qbuf)) != NULL && resolve_or_copy(base, p, e) != 0)
        return TS_CATALOGUE_QUANT;
    return 0;
}

static void try_hub(ts_name_suggest *s, const char *hub)
{
    const char *slash = strchr(hub, '/');

    ts_name_suggest_try(s, hub);
    if (slash != NULL)
        ts_name_suggest_try(s, slash + 1);
}

const char *ts_catalogue_suggest(const char *typed)
{
    ts_name_suggest s;
    const ts_preset *p;
    const ts_catalogue_entry *e;
    const char *best, *a;
    size_t i, k;

    ts_name_suggest_init(&s, typed);
    /* Presets first: on a tie their short id wins. */
    for (i = 0; i < ts_preset_count(); i++) {
        ts_name_suggest_try(&s, ts_preset_at(i)->id);
        for (k = 0; (a = ts_preset_alias(ts_preset_at(i)->id, k)) != NULL; k++)
            try_hub(&s, a);
    }
    for (i = 0; i < ts_catalogue_table_n; i++) {
        try_hub(&s, ts_catalogue_table[i].id);
        for (k = 0; ts_catalogue_table[i].aliases[k] != NULL; k++)
            try_hub(&s, ts_catalogue_table[i].aliases[k]);
    }
    best = ts_name_suggest_best(&s);
    if (best == NULL || !ts_catalogue_resolve(best, &p, &e))
        return NULL;
    return p != NULL ? p->id : e->id;
}

int ts_catalogue_import(ts_import *im, const ts_catalogue_entry *e, ts_api_err *err)
{
    return ts_catalogue_import_at(im, e, "/model", err);
}

int ts_catalogue_import_at(ts_import *im, const ts_catalogue_entry *e, const char *member,
                           ts_api_err *err)
{
    char base[TS_IMPORT_BASE_LEN];
    const char *who;
    json_error_t je;
    json_t *cfg;
    int rc;

    /* Decoded as a request's hf_config is (ts_json_in.c). */
    cfg = json_loads(e->config, JSON_DECODE_INT_AS_REAL, &je);
    if (cfg == NULL) {
        if (json_error_code(&je) == json_error_out_of_memory)
            ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory parsing the request");
        else
            ts_api_err_set(err, TS_PROB_INTERNAL_ERROR, member,
                           "catalogue entry %s: config is not JSON (%s)", e->id, je.text);
        return -1;
    }
    /* "/model (Qwen/Qwen2.5-72B)": an error or note names the member
     * and the entry; blame_import() keeps the pointer up to the space. */
    snprintf(base, sizeof base, "%s (%s)", member, e->id);
    /* "model" as the notes always said it; another member by its pointer */
    who = strcmp(member, "/model") == 0 ? "model" : member;
    if (e->params_exact)
        ts_import_note(im->notes,
                       "%s \"%s\": the shape of the catalogue's "
                       "config.json (%s); published count %.0f",
                       who, e->id, e->file, e->params_published);
    else
        ts_import_note(im->notes,
                       "%s \"%s\": the shape of the catalogue's "
                       "config.json (%s); published count %s (rounded)",
                       who, e->id, e->file, e->params_published_as);
    rc = ts_import_hf_from(im, cfg, base, TS_SRC_CATALOGUE, err);
    json_decref(cfg);
    return rc;
}

int ts_catalogue_import_named(ts_import *im, const char *id, const char *ptr, ts_api_err *err)
{
    int how = 0;
    const ts_catalogue_entry *e = ts_catalogue_lookup(id, &how);

    if (e != NULL && im->vals[TS_FI_LAYERS] == NULL && !im->req_has[TS_FI_MODEL] &&
        !im->req_has[TS_FI_LAYERS] && !im->req_has[TS_FI_PARAMS]) {
        if (how == TS_CATALOGUE_OTHER_ORG)
            ts_import_note(im->notes, "%s \"%.*s\": " TS_CATALOGUE_COPY_NOTE, ptr,
                           ts_utf8_prec(id, 80), id, e->id);
        else if (how == TS_CATALOGUE_QUANT)
            ts_import_note(im->notes, "%s \"%.*s\": " TS_CATALOGUE_QUANT_NOTE, ptr,
                           ts_utf8_prec(id, 80), id, e->id);
        return ts_catalogue_import_at(im, e, ptr, err);
    }
    if (e == NULL)
        ts_import_note(im->notes,
                       "%s \"%.*s\": its shape is not fetched (not in the catalogue, GET "
                       "/v1/presets); send its config.json as hf_config (or a model preset)",
                       ptr, ts_utf8_prec(id, 80), id);
    else
        ts_import_note(im->notes,
                       "%s \"%.*s\": its shape is not fetched: the request's model, shape or "
                       "hf_config gives it",
                       ptr, ts_utf8_prec(id, 80), id);
    return 0;
}

int ts_catalogue_run(const ts_catalogue_entry *e, ts_api_req *req, ts_api_err *err)
{
    char body[TS_NAME_KEY_MAX + 16];
    int n;

    /* Ids are [A-Za-z0-9._-/] (tools/ts_gen_catalogue.c): no escaping. */
    n = snprintf(body, sizeof body, "{\"model\":\"%s\"}", e->id);
    if (n < 0 || (size_t)n >= sizeof body) {
        ts_api_err_set(err, TS_PROB_INTERNAL_ERROR, "/model", "catalogue id too long: %s", e->id);
        return -1;
    }
    return ts_json_parse_run(body, (size_t)n, false, req, err);
}
