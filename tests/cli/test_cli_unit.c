/*
 * test_cli_unit.c - the CLI's option parser, the option table against the
 * API's request schema, and the estimate table's rows against the API's
 * output-terms table.
 *
 * Expected values are worked out by hand next to each case.  The schema
 * and terms tests read the api layer's tables (the CLI's answers come from
 * its ts_api_handle(), in process or on a server): every request field the API accepts must have a CLI option of the same
 * JSON type, every row the CLI prints must be the terms table's, and the
 * CLI must print the answer's texts, so the two cannot drift.
 */
#include "ts_api.h"
#include "ts_cli_http.h"
#include "ts_cli_opts.h"
#include "ts_cli_report.h"
#include "ts_cli_terms.h"
#include "ts_terms.h"

#include <check.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Parse one option line ("--tp 8" as separate words) into a fresh object. */
static ts_cli_status parse1(const char *a, const char *b, json_t **out, ts_cli_error *err)
{
    char *argv[3] = { (char *)a, (char *)b, NULL };
    int argc = b ? 2 : 1, i = 0;
    ts_cli_status st;

    *out = json_object();
    ck_assert_ptr_nonnull(*out);
    st = ts_cli_parse_run_option(argc, argv, &i, *out, err);
    if (st == TS_CLI_OK)
        ck_assert_int_eq(i, argc - 1); /* consumed exactly what it needed */
    return st;
}

static const struct {
    const char *a, *b;
    const char *json; /* the object the option must produce */
} good[] = {
    { "--micro-batch", "4", "{\"micro_batch\":4}" },
    { "--micro-batch=4", NULL, "{\"micro_batch\":4}" },
    { "--tp", "-2", "{\"tp\":-2}" },                      /* ranges are the server's job */
    { "--tokens", "15T", "{\"tokens\":15000000000000}" }, /* 15 * 1e12 */
    { "--params", "7.5B", "{\"params\":7500000000}" },    /* 7.5 * 1e9 */
    { "--params", "7e9", "{\"params\":7000000000}" },
    { "--tokens", "1.5M", "{\"tokens\":1500000}" },
    { "--mfu", "0.45", "{\"mfu\":0.45}" },
    { "--hbm-gb=141", NULL, "{\"hbm_gb\":141}" },
    { "--gated", NULL, "{\"gated\":true}" },
    { "--no-gated", NULL, "{\"gated\":false}" },
    { "--gated=false", NULL, "{\"gated\":false}" },
    { "--offload-optimizer=yes", NULL, "{\"offload_optimizer\":true}" },
    { "--model", "llama3-70b", "{\"model\":\"llama3-70b\"}" },
    { "--recompute=full", NULL, "{\"recompute\":\"full\"}" },
    { "--set", "tp=8", "{\"tp\":8}" },
    { "--set=tp=8", NULL, "{\"tp\":8}" },
    { "--set", "mfu=0.5", "{\"mfu\":0.5}" },
    { "--set", "gated=true", "{\"gated\":true}" },
    { "--set", "gpu=h100-sxm", "{\"gpu\":\"h100-sxm\"}" }, /* not JSON -> string */
    { "--set", "model=\"8\"", "{\"model\":\"8\"}" },       /* quoted -> string */
    { "--set", "anything=1", "{\"anything\":1}" },         /* server rejects unknowns */
    { "--set", "gpu=", "{\"gpu\":\"\"}" },
};

START_TEST(parse_good)
{
    json_t *obj, *want;
    ts_cli_error err;
    ts_cli_status st = parse1(good[_i].a, good[_i].b, &obj, &err);

    ck_assert_msg(st == TS_CLI_OK, "%s %s: %s", good[_i].a, good[_i].b ? good[_i].b : "", err.text);
    want = json_loads(good[_i].json, 0, NULL);
    ck_assert_ptr_nonnull(want);
    {
        char *got = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
        ck_assert_msg(json_equal(obj, want), "%s: got %s want %s", good[_i].a, got, good[_i].json);
        free(got);
    }
    /* integers stay integers: the API rejects 4.0 for micro_batch */
    if (strchr(good[_i].json, '.') == NULL) {
        const char *k;
        json_t *v;
        json_object_foreach(obj, k, v) ck_assert(!json_is_real(v));
    }
    json_decref(want);
    json_decref(obj);
}
END_TEST

static const struct {
    const char *a, *b;
    ts_cli_status st;
    const char *mention; /* the message must name the option */
} bad[] = {
    { "--tp", "1.5", TS_CLI_EUSAGE, "--tp" },
    { "--tp", "8x", TS_CLI_EUSAGE, "--tp" },
    { "--tp", "", TS_CLI_EUSAGE, "--tp" },
    { "--tp", "99999999999999999999", TS_CLI_EUSAGE, "--tp" }, /* > 2^63 */
    { "--tp", NULL, TS_CLI_EUSAGE, "--tp" },                   /* missing */
    { "--micro-batch=", NULL, TS_CLI_EUSAGE, "--micro-batch" },
    { "--mfu", "inf", TS_CLI_EUSAGE, "--mfu" },
    { "--mfu", "nan", TS_CLI_EUSAGE, "--mfu" },
    { "--mfu", "1e999", TS_CLI_EUSAGE, "--mfu" }, /* overflows */
    { "--mfu", "0.4B", TS_CLI_EUSAGE, "--mfu" },  /* no suffix here */
    { "--tokens", "5X", TS_CLI_EUSAGE, "--tokens" },
    { "--tokens", "5TT", TS_CLI_EUSAGE, "--tokens" },
    { "--gated=maybe", NULL, TS_CLI_EUSAGE, "--gated" },
    { "--no-gated=1", NULL, TS_CLI_EUSAGE, "--no-gated" },
    { "--model", "", TS_CLI_EUSAGE, "--model" },
    { "--set", "noequals", TS_CLI_EUSAGE, "--set" },
    { "--set", "=1", TS_CLI_EUSAGE, "--set" },
    { "--set", NULL, TS_CLI_EUSAGE, "--set" },
    { "--frobnicate", "1", TS_CLI_NOMATCH, NULL },
    { "--no-tp", NULL, TS_CLI_NOMATCH, NULL }, /* not a flag */
    { "--json", NULL, TS_CLI_NOMATCH, NULL },  /* main's, not a field */
    { "tp", "8", TS_CLI_NOMATCH, NULL },
    { "--", NULL, TS_CLI_NOMATCH, NULL },
};

START_TEST(parse_bad)
{
    json_t *obj;
    ts_cli_error err;
    ts_cli_status st;

    err.text[0] = '\0';
    st = parse1(bad[_i].a, bad[_i].b, &obj, &err);
    ck_assert_msg(st == bad[_i].st, "%s: status %d, want %d", bad[_i].a, st, bad[_i].st);
    if (bad[_i].mention)
        ck_assert_msg(strstr(err.text, bad[_i].mention) != NULL, "%s: message '%s'", bad[_i].a,
                      err.text);
    ck_assert_int_eq(json_object_size(obj), 0); /* nothing half-set */
    json_decref(obj);
}
END_TEST

/* Every API request field has a CLI option of the same type, and the
 * other way round: but solve (/v1/fit's, which the CLI does not call; the
 * other fit extras bound the search too) and margin (the CLI's own
 * --margin, "10%" or 0.1, which search sends as it). */
START_TEST(fields_match_api_schema)
{
    size_t n_api = ts_api_request_field_count(), n_cli, seen = 0;
    const ts_cli_field *cli = ts_cli_fields(&n_cli);

    ck_assert_int_gt(n_api, 0);
    for (size_t i = 0; i < n_api; i++) {
        const ts_api_field *f = ts_api_request_field(i);
        const ts_cli_field *c;
        ts_cli_kind want = TS_CLI_STR;

        ck_assert_ptr_nonnull(f);
        if (strcmp(f->name, "solve") == 0 || strcmp(f->name, "margin") == 0) {
            ck_assert_ptr_null(ts_cli_field_find(f->name));
            continue;
        }
        c = ts_cli_field_find(f->name);
        ck_assert_msg(c != NULL, "API field '%s' has no CLI option", f->name);
        switch (f->type) {
        case TS_FT_INTEGER:
            want = TS_CLI_INT;
            break;
        case TS_FT_NUMBER:
            want = TS_CLI_NUM;
            break;
        case TS_FT_BOOLEAN:
            want = TS_CLI_BOOL;
            break;
        case TS_FT_STRING:
            want = TS_CLI_STR;
            break;
        }
        ck_assert_msg(c->kind == want, "field '%s': CLI kind %d, API type %d", f->name, c->kind,
                      f->type);
        seen++;
    }
    for (size_t k = 0; k < n_cli; k++) {
        bool found = false;
        for (size_t i = 0; i < n_api && !found; i++)
            found = strcmp(ts_api_request_field(i)->name, cli[k].name) == 0;
        ck_assert_msg(found, "CLI option for '%s' is not an API run field", cli[k].name);
    }
    ck_assert_int_eq(seen, n_cli);
}
END_TEST

/* --help lists the generated table: line k is option k, its flag the JSON
 * name with '-' for '_', then the argument word and the field's help. */
START_TEST(help_lines_follow_table)
{
    size_t n_cli, k = 0;
    const ts_cli_field *cli = ts_cli_fields(&n_cli);

    for (const char *const *line = ts_cli_run_options_help; *line != NULL; line++, k++) {
        char flag[64] = "  --";
        size_t j = strlen(flag);

        ck_assert_uint_lt(k, n_cli);
        for (const char *c = cli[k].name; *c != '\0' && j + 1 < sizeof flag; c++)
            flag[j++] = *c == '_' ? '-' : *c;
        flag[j] = '\0';
        ck_assert_msg(
            strncmp(*line, flag, j) == 0 &&
                ((*line)[j] == ' ' && (cli[k].kind != TS_CLI_BOOL || (*line)[j + 1] == ' ')),
            "help line %zu '%s' is not for %s", k, *line, flag + 2);
        ck_assert_msg(strstr(*line, cli[k].help) != NULL, "%s: help text missing", flag + 2);
        /* the man page and completions name the value as the help does */
        if (ts_cli_field_metavar(&cli[k]) != NULL) {
            const char *mv = ts_cli_field_metavar(&cli[k]);

            ck_assert_msg(strncmp(*line + j + 1, mv, strlen(mv)) == 0 &&
                              (*line)[j + 1 + strlen(mv)] == ' ',
                          "%s: value word is not %s", flag + 2, mv);
        }
        ck_assert_msg(strchr(*line, '\n') == strrchr(*line, '\n') &&
                          (*line)[strlen(*line) - 1] == '\n',
                      "%s: one line", flag + 2);
    }
    ck_assert_uint_eq(k, n_cli);
}
END_TEST

/* Every CLI row is the terms table's row: object, key, where the text is,
 * unit, label, formula; and every row the table marks for the CLI is one. */
START_TEST(rows_are_the_terms_table)
{
    size_t n = 0;

    for (size_t i = 0; i < TS_T_COUNT; i++) {
        const ts_term_def *d = &ts_terms[i];
        const ts_cli_term *t;

        if (d->cli == TS_TERM_CLI_NO)
            continue;
        ck_assert_uint_lt(n, ts_cli_term_count);
        t = &ts_cli_terms[n++];
        ck_assert_str_eq(t->obj, ts_term_objs[d->obj].path);
        ck_assert_str_eq(t->key, d->key);
        ck_assert_int_eq((int)t->shape, (int)d->shape);
        ck_assert_str_eq(t->unit, d->unit);
        ck_assert_str_eq(t->label, d->label);
        ck_assert(strlen(t->label) <= TS_REPORT_LABEL_W);
        ck_assert((t->formula == NULL) == (d->formula == NULL));
        if (t->formula != NULL)
            ck_assert_str_eq(t->formula, d->formula);
        ck_assert(t->nonzero == (d->cli == TS_TERM_CLI_NONZERO));
    }
    ck_assert_uint_eq(n, ts_cli_term_count);
}
END_TEST

/* A hand-made answer whose texts no formatter would write ("<w>" for
 * 1 byte of weights): the table shows exactly those texts, so it prints
 * the API's strings and formats nothing itself.  host_bytes_per_gpu is
 * 0, a nonzero-only row: absent from the table. */
START_TEST(plan_prints_the_answers_texts)
{
    static const char answer[] =
        "{\"inputs\":{\"model\":\"m\",\"gpus\":8,\"gpu\":\"g\"},"
        "\"params\":{\"total\":8e9,\"active\":8e9,\"human\":{\"total\":\"<P>\",\"active\":\"<Pa>\"}"
        "},"
        "\"memory\":{\"weights\":{\"value\":1,\"human\":\"<w>\",\"formula\":\"<f "
        "w>\",\"assumptions\":\"\"},"
        "\"hbm_bytes\":80e9,\"headroom_bytes\":-2147483648,\"host_bytes_per_gpu\":0,\"fits\":false,"
        "\"human\":{\"hbm_bytes\":\"<hbm>\",\"headroom_bytes\":\"-<room>\",\"host_bytes_per_gpu\":"
        "\"<host>\"}},"
        "\"compute\":{\"tokens\":1e12,\"human\":{\"tokens\":\"<T>\"},"
        "\"step\":{\"compute\":1.5,\"human\":{\"compute\":\"<c>\"}}},"
        "\"checkpoint\":{}}";
    json_error_t je;
    json_t *a = json_loads(answer, 0, &je);
    char *text = NULL;
    size_t len = 0;
    FILE *out;
    bool fits = true;

    ck_assert_msg(a != NULL, "%s", je.text);
    out = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(out);
    ts_report_plan(out, a, true);
    ck_assert(ts_report_check(out, a, &fits));
    fclose(out);
    ck_assert(!fits);
    /* "  <label padded to 32> <text right-aligned in 16>   <exact>" */
    ck_assert_msg(strstr(text, "  Weights                                       <w>   1 B\n") !=
                      NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "      = <f w>\n") != NULL, "the answer's formula: %s", text);
    ck_assert_msg(
        strstr(text, "  GPU HBM                                     <hbm>   80000000000 B\n") !=
            NULL,
        "%s", text);
    ck_assert_msg(strstr(text, "      = the catalogue's HBM") != NULL, "the table's formula: %s",
                  text);
    ck_assert_msg(strstr(text, "  Compute                                       <c>   1.5 s\n") !=
                      NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "<P> params (<Pa> active)") != NULL &&
                      strstr(text, "<T> tokens") != NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "<host>") == NULL, "a 0 host RAM row is not printed: %s", text);
    ck_assert_msg(strstr(text, "needs n/a per GPU but HBM is <hbm>, short by <room>\n") != NULL,
                  "%s", text);
    free(text);
    json_decref(a);
}
END_TEST

/* A one-shot HTTP server on 127.0.0.1 that answers any request with a
 * body of `len` bytes: the response cap of ts_cli_http.c (its one capped
 * buffer, lib/ts_buf.c). */
typedef struct big_server {
    int fd;
    unsigned port;
    size_t len;
} big_server;

static void *big_serve(void *arg)
{
    big_server *b = arg;
    static char chunk[65536];
    char req[4096], head[128];
    int c = accept(b->fd, NULL, NULL);

    if (c < 0)
        return NULL;
    (void)recv(c, req, sizeof req, 0);
    memset(chunk, 'x', sizeof chunk);
    snprintf(head, sizeof head,
             "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
             "Content-Length: %zu\r\n\r\n",
             b->len);
    if (send(c, head, strlen(head), MSG_NOSIGNAL) > 0)
        for (size_t sent = 0; sent < b->len;) {
            size_t n = b->len - sent < sizeof chunk ? b->len - sent : sizeof chunk;
            ssize_t w = send(c, chunk, n, MSG_NOSIGNAL);
            if (w <= 0)
                break; /* the client gave up: what the cap is for */
            sent += (size_t)w;
        }
    close(c);
    return NULL;
}

static void big_start(big_server *b, pthread_t *t, size_t len)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;

    b->len = len;
    b->fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(b->fd, 0);
    ck_assert_int_eq(bind(b->fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(b->fd, 1), 0);
    ck_assert_int_eq(getsockname(b->fd, (struct sockaddr *)&a, &al), 0);
    b->port = ntohs(a.sin_port);
    ck_assert_int_eq(pthread_create(t, NULL, big_serve, b), 0);
}

START_TEST(response_cap)
{
    static const size_t lens[] = { TS_HTTP_BODY_MAX, TS_HTTP_BODY_MAX + 1 };

    for (size_t i = 0; i < 2; i++) {
        big_server b;
        pthread_t t;
        char url[64];
        ts_http_response r;
        ts_http_error e;

        big_start(&b, &t, lens[i]);
        snprintf(url, sizeof url, "http://127.0.0.1:%u", b.port);
        ts_http_client c = { .base_url = url };
        ts_http_status st = ts_http_request(&c, "GET", "/v1/gpus", NULL, &r, &e);
        pthread_join(t, NULL);
        close(b.fd);
        if (i == 0) {
            /* exactly the cap: kept whole, NUL-terminated */
            ck_assert_int_eq(st, TS_HTTP_OK);
            ck_assert_uint_eq(r.len, TS_HTTP_BODY_MAX);
            ck_assert_int_eq(r.body[r.len], '\0');
            ts_http_response_free(&r);
        } else {
            ck_assert_int_eq(st, TS_HTTP_ETOOBIG);
            ck_assert_ptr_nonnull(strstr(e.text, "larger than"));
            ck_assert_ptr_null(r.body);
        }
    }
}
END_TEST

static Suite *unit_suite(void)
{
    Suite *s = suite_create("cli-unit");
    TCase *tc = tcase_create("opts");

    tcase_add_loop_test(tc, parse_good, 0, (int)(sizeof good / sizeof good[0]));
    tcase_add_loop_test(tc, parse_bad, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, fields_match_api_schema);
    tcase_add_test(tc, help_lines_follow_table);
    suite_add_tcase(s, tc);
    tc = tcase_create("terms");
    tcase_add_test(tc, rows_are_the_terms_table);
    tcase_add_test(tc, plan_prints_the_answers_texts);
    tcase_add_test(tc, response_cap);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(unit_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
