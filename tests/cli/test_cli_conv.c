/*
 * test_cli_conv.c - the CLI's conventions: per-command help, -V, "-" for
 * standard input, "did you mean", and the completions and man page the
 * build generates from the option tables (cli/ts_cli_gen.c).
 *
 * No server: every run is --local.  The expected option lists come from
 * the tables themselves (ts_cli_cmds.h, ts_cli_opts.h, the API registry's
 * enum values), so a table row without its completion, man entry or help
 * line fails here.  Environment (tests/cli/meson.build): TS_CLI,
 * TRAINSIZE_SRCDIR, TS_CLI_BASH, TS_CLI_ZSH, TS_CLI_MAN, and GROFF, BASH,
 * ZSH when those programs are installed.
 */
#include "th_file.h"
#include "th_harness.h"
#include "th_json.h"
#include "ts_cli_cmds.h"
#include "ts_cli_opts.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static th_proc cli_sh(const char *const *args, const char *stdin_path)
{
    const char *argv[40] = { getenv("TS_CLI") };
    size_t n = 1;
    th_proc p;

    ck_assert_ptr_nonnull(argv[0]);
    for (size_t i = 0; args[i] != NULL; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    if (stdin_path != NULL) {
        char cmd[4096];
        size_t o = (size_t)snprintf(cmd, sizeof cmd, "exec");

        for (size_t i = 0; i < n; i++)
            o += (size_t)snprintf(cmd + o, sizeof cmd - o, " '%s'", argv[i]);
        snprintf(cmd + o, sizeof cmd - o, " < '%s'", stdin_path);
        ck_assert_int_eq(
            th_exec((const char *[]){ "sh", "-c", cmd, NULL }, NULL,
                    (const char *[]){ "TRAINSIZE_URL", "TRAINSIZE_PORT", "TRAINSIZE_LOCAL", NULL },
                    &p),
            0);
        return p;
    }
    ck_assert_int_eq(
        th_exec(argv, "TS_CLI_WRAP",
                (const char *[]){ "TRAINSIZE_URL", "TRAINSIZE_PORT", "TRAINSIZE_LOCAL", NULL }, &p),
        0);
    return p;
}

static th_proc cli(const char *const *args)
{
    return cli_sh(args, NULL);
}

static const char *src(const char *rel)
{
    static char bufs[4][1200];
    static unsigned k;
    char *b = bufs[k++ % 4];

    snprintf(b, sizeof bufs[0], "%s/%s", getenv("TRAINSIZE_SRCDIR"), rel);
    return b;
}

static char *gen_file(const char *env)
{
    const char *path = getenv(env);
    char *text;

    ck_assert_msg(path != NULL && *path != '\0', "%s not set", env);
    text = th_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    return text;
}

/* "micro_batch" -> "--micro-batch" */
static const char *opt_of(const char *json_name, bool no, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "--%s", no ? "no-" : "");

    for (const char *c = json_name; *c != '\0' && o + 1 < size; c++)
        buf[o++] = *c == '_' ? '-' : *c;
    buf[o] = '\0';
    return buf;
}

/* word appears in text as a whole word (not inside a longer option). */
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);

    for (const char *p = strstr(text, word); p != NULL; p = strstr(p + 1, word)) {
        char after = p[n];
        char before = p == text ? ' ' : p[-1];

        if ((after == '\0' || strchr(" \n\t\"'=[|)}", after) != NULL) &&
            strchr(" \n\t\"'(|{,)", before) != NULL)
            return true;
    }
    return false;
}

static bool cmd_takes(const ts_cli_opt *o, int c)
{
    if (o->cmds == 0)
        return true;
    if (o == &ts_cli_opts[TS_CLI_OPT_FORMAT])
        return ts_cli_cmds[c].formats != 0;
    return (o->cmds & TS_CMD_BIT(c)) != 0;
}

/* ---------- help, version ---------- */

START_TEST(help_per_command)
{
    int c = _i + TS_CMD_NONE + 1;
    const char *name = ts_cli_cmds[c].name;
    th_proc a = cli((const char *[]){ "help", name, NULL });
    th_proc b = cli((const char *[]){ name, "--help", NULL });
    char usage[128];

    ck_assert_msg(a.code == 0, "help %s: exit %d %s", name, a.code, a.err);
    ck_assert_int_eq(b.code, 0);
    ck_assert_msg(strcmp(a.out, b.out) == 0, "help %s and %s --help differ", name, name);
    snprintf(usage, sizeof usage, "usage: trainsize [--url URL | --local] %s ", name);
    ck_assert_msg(strncmp(a.out, usage, strlen(usage)) == 0, "%.200s", a.out);
    ck_assert_ptr_nonnull(strstr(a.out, "\nexit status:\n"));
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++) {
        const ts_cli_opt *o = &ts_cli_opts[i];
        bool shown = has_word(a.out, o->name);

        if (c == TS_CMD_HELP && o->cmds != 0)
            continue;
        ck_assert_msg(shown == cmd_takes(o, c), "help %s: %s %s", name, o->name,
                      shown ? "shown but not taken" : "taken but not shown");
    }
    ck_assert(has_word(a.out, "--micro-batch") == ts_cli_cmds[c].run_options);
    th_proc_free(&a);
    th_proc_free(&b);
}
END_TEST

START_TEST(help_and_version)
{
    th_proc a = cli((const char *[]){ "help", NULL });
    th_proc b = cli((const char *[]){ "--help", NULL });

    ck_assert_int_eq(a.code, 0);
    ck_assert_msg(strcmp(a.out, b.out) == 0, "help and --help differ");
    th_proc_free(&a);
    th_proc_free(&b);
    a = cli((const char *[]){ "help", "chekc", NULL });
    ck_assert_int_eq(a.code, 2);
    ck_assert_ptr_nonnull(strstr(a.err, "did you mean check?"));
    th_proc_free(&a);
    for (int k = 0; k < 3; k++) {
        static const char *const forms[3][3] = { { "--version", NULL },
                                                 { "-V", NULL },
                                                 { "estimate", "-V", NULL } };

        a = cli(forms[k]);
        ck_assert_int_eq(a.code, 0);
        ck_assert_str_eq(a.out, "trainsize " TS_CLI_VERSION "\n");
        th_proc_free(&a);
    }
}
END_TEST

/* ---------- standard input ---------- */

START_TEST(stdin_dash)
{
    const char *plan = src("tests/data/plans/llama3-8b-zero3.json");
    th_proc f = cli((const char *[]){ "check", "--format", "json", plan, NULL });
    th_proc s = cli_sh((const char *[]){ "check", "--format", "json", "-", NULL }, plan);
    json_t *jf = th_json_parse(f.out, strlen(f.out)), *js;

    ck_assert_msg(s.code == 0, "exit %d: %s", s.code, s.err);
    js = th_json_parse(s.out, strlen(s.out));
    ck_assert_str_eq(th_json_str(js, "plans.0.file"), "-");
    ck_assert(json_equal(th_json_get(js, "plans.0.answer"), th_json_get(jf, "plans.0.answer")));
    json_decref(js);
    json_decref(jf);
    th_proc_free(&f);
    th_proc_free(&s);

    /* an import from standard input: the same answer as from its file */
    f = cli((const char *[]){ "estimate", "--json", "--hf-config",
                              src("tests/data/hf/llama3-8b.json"), "--gpus", "8", NULL });
    s = cli_sh((const char *[]){ "estimate", "--json", "--hf-config", "-", "--gpus", "8", NULL },
               src("tests/data/hf/llama3-8b.json"));
    ck_assert_int_eq(s.code, f.code);
    ck_assert_msg(strcmp(s.out, f.out) == 0, "--hf-config - answers otherwise than the file");
    th_proc_free(&f);
    th_proc_free(&s);

    /* once only */
    f = cli((const char *[]){ "check", "-", "--hf-config", "-", NULL });
    ck_assert_int_eq(f.code, 2);
    ck_assert_ptr_nonnull(strstr(f.err, "standard input"));
    th_proc_free(&f);
}
END_TEST

/* ---------- did you mean ---------- */

static const struct {
    const char *args[6];
    const char *says;
} typos[] = {
    { { "estimate", "--micro-bach", "2", NULL },
      "unknown option '--micro-bach' (did you mean --micro-batch?)" },
    { { "check", "--margn", "10%", NULL }, "(did you mean --margin?)" },
    { { "search", "--formt", "csv", NULL }, "(did you mean --format?)" },
    { { "estimate", "--precision", "bf61", NULL },
      "--precision: unknown value 'bf61' (did you mean bf16?)" },
    { { "estimate", "--set", "recompute=selectve", NULL }, "(did you mean selective?)" },
    { { "check", "--format", "jsnl", NULL },
      "--format: unknown value 'jsnl' (did you mean jsonl?)" },
    { { "check", "--notes", "ofr", NULL }, "(did you mean off?)" },
    { { "chekc", NULL }, "unknown command 'chekc' (did you mean check?)" },
    { { "--lcoal", "gpus", NULL }, "(did you mean --local?)" },
    { { "estimate", "--model", "lama3-8b", NULL }, "did you mean \"llama3-8b\"?" },
    { { "search", "--format", "junit", NULL }, "search does not write --format junit" },
};

START_TEST(did_you_mean)
{
    th_proc p = cli(typos[_i].args);

    ck_assert_msg(p.code == 2, "%s: exit %d", typos[_i].args[1], p.code);
    ck_assert_msg(strstr(p.err, typos[_i].says) != NULL, "want '%s' in:\n%s", typos[_i].says,
                  p.err);
    th_proc_free(&p);
}
END_TEST

START_TEST(nothing_close)
{
    th_proc p = cli((const char *[]){ "estimate", "--zqxwv", NULL });

    ck_assert_int_eq(p.code, 2);
    ck_assert_ptr_null(strstr(p.err, "did you mean"));
    th_proc_free(&p);
}
END_TEST

/* ---------- completions and the man page ---------- */

/* Every command, option, run option (and --no- form), format and enum
 * value of the tables is in text; the man page writes - as \-. */
static void has_every_word(const char *what, const char *text, bool roff)
{
    size_t n;
    const ts_cli_field *f = ts_cli_fields(&n);
    char buf[128];

    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++)
        ck_assert_msg(strstr(text, ts_cli_cmds[c].name) != NULL, "%s: no %s", what,
                      ts_cli_cmds[c].name);
    for (size_t i = 0; i < TS_CLI_OPT_COUNT + n * 2; i++) {
        const char *w;
        char esc[256];
        size_t o = 0;

        if (i < TS_CLI_OPT_COUNT)
            w = ts_cli_opts[i].name;
        else if ((i - TS_CLI_OPT_COUNT) % 2 == 0)
            w = opt_of(f[(i - TS_CLI_OPT_COUNT) / 2].name, false, buf, sizeof buf);
        else if (f[(i - TS_CLI_OPT_COUNT) / 2].kind == TS_CLI_BOOL && !roff)
            w = opt_of(f[(i - TS_CLI_OPT_COUNT) / 2].name, true, buf, sizeof buf);
        else
            continue;
        for (const char *c = w; *c != '\0' && o + 3 < sizeof esc; c++) {
            if (roff && *c == '-')
                esc[o++] = '\\';
            esc[o++] = *c;
        }
        esc[o] = '\0';
        ck_assert_msg(has_word(text, esc) || (roff && strstr(text, esc) != NULL), "%s: no %s", what,
                      esc);
    }
    if (roff)
        return;
    for (int k = 0; ts_check_format_names[k] != NULL; k++)
        ck_assert_msg(has_word(text, ts_check_format_names[k]), "%s: no format %s", what,
                      ts_check_format_names[k]);
    for (size_t i = 0; i < n; i++)
        for (const char *const *v = ts_cli_field_values(f[i].name); v != NULL && *v != NULL; v++)
            ck_assert_msg(has_word(text, *v), "%s: no value %s of %s", what, *v, f[i].name);
}

START_TEST(completions_have_every_option)
{
    char *bash = gen_file("TS_CLI_BASH"), *zsh = gen_file("TS_CLI_ZSH");
    const char *bash_exe = getenv("BASH"), *zsh_exe = getenv("ZSH");

    has_every_word("bash completion", bash, false);
    has_every_word("zsh completion", zsh, false);
    ck_assert_ptr_nonnull(strstr(bash, "\ncomplete -F _trainsize trainsize\n"));
    ck_assert_int_eq(strncmp(zsh, "#compdef trainsize\n", 19), 0);
    if (bash_exe != NULL && *bash_exe != '\0') {
        /* it parses, and completes as a user types: the options of the
         * command, the values of the option before the cursor */
        static const struct {
            const char *words, *want;
        } cases[] = {
            { "trainsize es", "estimate" },
            { "trainsize estimate --micro-b", "--micro-batch" },
            { "trainsize search --format ''", "csv" },
            { "trainsize check --format ''", "junit" },
            { "trainsize estimate --precision b", "bf16" },
            { "trainsize estimate --model llama3-7", "llama3-70b" },
            { "trainsize check --no-gat", "--no-gated" },
            { "trainsize help ch", "check" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char script[1024];
            th_proc p;

            snprintf(script, sizeof script,
                     "set -e; source '%s'; COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]}-1));"
                     " _trainsize; printf '%%s\\n' \"${COMPREPLY[@]}\"",
                     getenv("TS_CLI_BASH"), cases[i].words);
            ck_assert_int_eq(
                th_exec((const char *[]){ bash_exe, "-c", script, NULL }, NULL, NULL, &p), 0);
            ck_assert_msg(p.code == 0, "%s: %s", cases[i].words, p.err);
            ck_assert_msg(has_word(p.out, cases[i].want), "%s: no %s in\n%s", cases[i].words,
                          cases[i].want, p.out);
            th_proc_free(&p);
        }
    }
    if (zsh_exe != NULL && *zsh_exe != '\0') {
        th_proc p;

        ck_assert_int_eq(
            th_exec((const char *[]){ zsh_exe, "-n", getenv("TS_CLI_ZSH"), NULL }, NULL, NULL, &p),
            0);
        ck_assert_msg(p.code == 0, "zsh -n: %s", p.err);
        th_proc_free(&p);
    }
    free(bash);
    free(zsh);
}
END_TEST

START_TEST(man_page_builds)
{
    char *man = gen_file("TS_CLI_MAN");
    const char *groff = getenv("GROFF");
    static const char *const sections[] = { ".TH TRAINSIZE 1 ",       "\n.SH NAME\n",
                                            "\n.SH SYNOPSIS\n",       "\n.SH COMMANDS\n",
                                            "\n.SH COMMON OPTIONS\n", "\n.SH RUN OPTIONS\n",
                                            "\n.SH EXIT STATUS\n",    "\n.SH ENVIRONMENT\n" };

    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        ck_assert_msg(strstr(man, sections[i]) != NULL, "no %s", sections[i]);
    has_every_word("man page", man, true);
    for (const ts_cli_exit *e = ts_cli_exits; e->code >= 0; e++) {
        char tag[16];

        snprintf(tag, sizeof tag, "\n.B %d\n", e->code);
        ck_assert_msg(strstr(man, tag) != NULL, "exit %d not in the man page", e->code);
    }
    if (groff != NULL && *groff != '\0') {
        /* all warnings on, no output: a clean page renders without one */
        th_proc p;

        ck_assert_int_eq(th_exec((const char *[]){ groff, "-man", "-Tutf8", "-ww", "-z",
                                                   getenv("TS_CLI_MAN"), NULL },
                                 NULL, NULL, &p),
                         0);
        ck_assert_msg(p.code == 0 && p.err[0] == '\0', "groff: exit %d: %s", p.code, p.err);
        th_proc_free(&p);
        /* -P -cbou: plain text, no bold or underline sequences */
        ck_assert_int_eq(th_exec((const char *[]){ groff, "-man", "-Tutf8", "-P", "-cbou",
                                                   getenv("TS_CLI_MAN"), NULL },
                                 NULL, NULL, &p),
                         0);
        ck_assert_int_eq(p.code, 0);
        ck_assert_ptr_nonnull(strstr(p.out, "EXIT STATUS"));
        th_proc_free(&p);
    }
    free(man);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli-conv");
    TCase *tc = tcase_create("conventions");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, help_per_command, 0, TS_CMD_COUNT - 1);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, stdin_dash);
    tcase_add_loop_test(tc, did_you_mean, 0, (int)(sizeof typos / sizeof typos[0]));
    tcase_add_test(tc, nothing_close);
    tcase_add_test(tc, completions_have_every_option);
    tcase_add_test(tc, man_page_builds);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
