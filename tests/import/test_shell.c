/*
 * test_shell.c - the launch-script reader (import/ts_shell.c) against bash.
 *
 * Every script in same[] was run by GNU bash 5.2.15 with no arguments, an
 * empty environment (env -i) and the launchers replaced by functions that
 * print their words one per line (torchrun() { printf '%s\n' torchrun
 * "$@"; }, likewise python, deepspeed, srun); the words the reader gives
 * are what bash printed (tests/api/shell_cases.sh reruns that check).
 * Where bash drops an unknown value (an unset variable, a script
 * argument, a command's output) the reader keeps a "ghost" in its place,
 * written here as {why:name@line}; a word that is partly unknown has the
 * same suffix.  '>' marks the entry point.  bounds[] are the limits (an
 * expansion bomb, a loop that does not end, recursion), each a 400 or a
 * note within the work cap, never a stall.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_import.h"
#include "ts_shell.h"

typedef struct shell_case {
    const char *name;
    const char *text;
    const char *want;    /* words joined by '|'; NULL: an error */
    const char *detail;  /* error: a part of the detail; else a part of a note, or NULL */
    const char *differs; /* where bash prints something else on purpose, why */
} shell_case;

static const shell_case same[] = {
    { "plain words", "torchrun pretrain_gpt.py --num-layers 2 --bf16",
      "torchrun|>pretrain_gpt.py|--num-layers|2|--bf16", NULL, NULL },
    { "assignments and quotes",
      "A=1\nB=\"x $A\"\nC='$A'\nD=\"a\\\"b\"\npython p.py --b \"$B\" --c \"$C\" --d $D --e \"\" "
      "--f",
      "python|>p.py|--b|x 1|--c|$A|--d|a\"b|--e||--f", NULL, NULL },
    { "string style with continuations",
      "GPT_ARGS=\"\n    --num-layers 24 \\\n    --hidden-size 1024 \\\n    --fp16\n\"\n"
      "torchrun pretrain_gpt.py \\\n    $GPT_ARGS \\\n    --save /x\n",
      "torchrun|>pretrain_gpt.py|--num-layers|24|--hidden-size|1024|--fp16|--save|/x", NULL, NULL },
    { "array style",
      "ARGS=(\n  --num-layers 96 # a comment\n  --lr 6.0e-5\n)\n"
      "MP=(--tensor-model-parallel-size 8)\ntorchrun pretrain_gpt.py ${ARGS[@]} ${MP[@]}",
      "torchrun|>pretrain_gpt.py|--num-layers|96|--lr|6.0e-5|--tensor-model-parallel-size|8", NULL,
      NULL },
    { "quoted array elements and +=",
      "A=(\"--fp8-format hybrid\" --x)\nA+=(\"--y 1\")\nB=()\n"
      "python p.py ${A[@]} \"${A[@]}\" \"${B[@]}\" ${#A[@]} ${A[1]}",
      "python|>p.py|--fp8-format|hybrid|--x|--y|1|--fp8-format hybrid|--x|--y 1|3|--x", NULL,
      NULL },
    { "array of itself", "T=(--a)\nT=(\"${T[@]}\" --b \"c d\")\npython p.py \"${T[@]}\"",
      "python|>p.py|--a|--b|c d", NULL, NULL },
    { "defaults",
      "A=${NOPE:-3}\nB=${EMPTY-x}\nEMPTY=\nC=${EMPTY:-y}\nD=${EMPTY-z}\n"
      ": ${E:=5}\nF=${A:+set}\npython p.py $A $B $C \"$D\" $E $F ${#F}",
      "python|>p.py|3|x|y||5|set|3", NULL, NULL },
    { "default of a script argument",
      "CK=${1:-\"checkpoints/x\"}\nTOK=${3:-MOCK}\n"
      "python p.py --save $CK --tok $TOK",
      "python|>p.py|--save|checkpoints/x|--tok|MOCK", NULL, NULL },
    { "pattern removal",
      "P=/data/models/llama-3.tar.gz\n"
      "python p.py ${P##*/} ${P#*/} ${P%.*} ${P%%.*} ${P%.[tg]z}",
      "python|>p.py|llama-3.tar.gz|data/models/llama-3.tar.gz|/data/models/llama-3.tar"
      "|/data/models/llama-3|/data/models/llama-3.tar",
      NULL, NULL },
    { "arithmetic",
      "G=8\nN=2\nW=$(($G*$N))\nX=$((W / 3 + 2 ** 3 - (7 % 4) ))\n"
      "python p.py $W $X $((G<<2)) $((N > 1 ? 10 : 20)) $((0x10))",
      "python|>p.py|16|10|32|10|16", NULL, NULL },
    { "exports and declare",
      "export A=1 B=\"2 3\"\ndeclare -a C=(x y)\ntypeset D=4\nreadonly E=5\n"
      "python p.py $A \"$B\" ${C[1]} $D $E",
      "python|>p.py|1|2 3|y|4|5", NULL, NULL },
    { "if elif else on strings",
      "DTYPE=fp8\nif [[ \"$DTYPE\" == \"bf16\" ]]; then X=1\nelif [ \"$DTYPE\" = fp8 ]; then X=2\n"
      "else X=3; fi\nif [[ $DTYPE == fp* && -n $X ]]; then Y=a; else Y=b; fi\n"
      "[ -z \"$NOPE\" ] && Z=yes || Z=no\npython p.py $X $Y $Z",
      "python|>p.py|2|a|yes", NULL, NULL },
    { "numeric tests and $#",
      "if [ 3 -gt 2 -a ! 1 -eq 2 ]; then A=t; fi\n"
      "while [[ $# -gt 0 ]]; do shift; done\nif (( 2 * 3 == 6 )); then B=u; fi\n"
      "python p.py $A $B $#",
      "python|>p.py|t|u|0", NULL, NULL },
    { "case",
      "M=llama3-8b\ncase $M in\n  gpt*) L=24 ;;\n  llama3-*|llama2-*) L=32 ;;\n"
      "  *) L=0 ;;\nesac\npython p.py $L",
      "python|>p.py|32", NULL, NULL },
    { "for loop",
      "A=()\nfor x in 1 2 \"3 4\"; do A+=(--l$x \"=$x\"); done\npython p.py \"${A[@]}\"",
      "python|>p.py|--l1|=1|--l2|=2|--l3|4|=3 4", NULL, NULL },
    { "function with arguments",
      "mk() {\n  local x=\"$1\"\n  R=\"--$x $2\"\n}\n"
      "mk tp 8\nfunction f { S=$#; }\nf a b c\npython p.py $R $S",
      "python|>p.py|--tp|8|3", NULL, NULL },
    /* bash reads unbraced $12 as ${1} then "2"; ${12} is the twelfth. */
    { "unbraced $12 is $1 then 2",
      "mk() {\n  R=\"$12 ${12}x\"\n}\n"
      "mk a b c d e f g h i j k l\npython p.py $R",
      "python|>p.py|a2|lx", NULL, NULL },
    { "torchrun through python -m and a prefix",
      "PRE=\"uv run\"\nPROF=()\n$PRE \"${PROF[@]}\" python -m torch.distributed.run "
      "--nproc_per_node 8 "
      "train.py --x 1",
      "uv|run|python|-m|torch.distributed.run|--nproc_per_node|8|>train.py|--x|1", NULL, NULL },
    { "the command with the most flags",
      "python3 tools/preprocess_data.py --input x\ntorchrun pretrain_gpt.py --a 1 --b 2\n",
      "torchrun|>pretrain_gpt.py|--a|1|--b|2", "2 commands run a Python script", NULL },
    { "an argument file", "# args\n--num-layers 2\n--hidden-size 8 --bf16\n",
      "--num-layers|2|--hidden-size|8|--bf16", NULL, NULL },
    { "bash -c of a string, wrapped by srun",
      "DIR=/w\nopts=\" --num-layers 4 \\\n  --fp16 \"\nrun_cmd=\"python -u ${DIR}/pretrain_gpt.py "
      "$@ ${opts}\"\n"
      "srun -l --container-image img sh -c \"${run_cmd}\"",
      "srun|-l|--container-image|img|python|-u|>/w/pretrain_gpt.py|--num-layers|4|--fp16",
      "line 5 (/w/pretrain_gpt.py)", NULL },
    { "sbatch heredoc with directives",
      "ARGS=(--num-layers 61)\nCMD=\"cd /tmp; python /m/pretrain_gpt.py ${ARGS[@]}\"\nsbatch "
      "<<EOF\n"
      "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\nsrun bash -c \"${CMD}\" 2>&1 | "
      "tee \\${X}.log\n"
      "EOF\n",
      "srun|python|>/m/pretrain_gpt.py|--num-layers|61", NULL, NULL },
    { "eval", "eval \"A=7\"\nS='python p.py --a $A'\neval \"$S\"", "python|>p.py|--a|7", NULL,
      NULL },
    { "redirections and placeholders",
      "CK=<Specify path>\nLOG=/tmp/x\n"
      "torchrun pretrain_gpt.py --a 1 2>&1 < /dev/null | cat &\nwait",
      "torchrun|>pretrain_gpt.py|--a|1", NULL,
      "bash refuses a '>' with no file after it; Megatron-LM's examples have such "
      "<Specify path> placeholders, so here the redirection is skipped" },
    { "unset variable", "torchrun pretrain_gpt.py --num-layers $NL --x \"${DATA}/y\"",
      "torchrun|>pretrain_gpt.py|--num-layers|{unset:NL@1}|--x|/y{unset:DATA@1}", NULL, NULL },
    { "script argument", "CK=$1\npython p.py --load $CK", "python|>p.py|--load|{arg:1@1}", NULL,
      NULL },
    { "command output", "D=`pwd`\nH=$(hostname)\npython $D/p.py --h $H",
      "python|>/p.py{command:`pwd`@1}|--h|{command:$(hostname)@2}", NULL,
      "a command's output is not known here" },
    { "arithmetic on an unset variable", "W=$((G * 2))\npython p.py $W", "python|>p.py|{unset:G@1}",
      NULL, "bash counts an unset variable as 0 in arithmetic; here it stays unknown" },
    { "assigned only in a branch not read",
      "if [ -f /etc/cluster.env ]; then\n  TP=8\nfi\npython p.py --tp $TP",
      "python|>p.py|--tp|{maybe:TP@2}", "conditions at line 1", NULL },
    { "exit before the command", "echo no\nexit 1\ntorchrun pretrain_gpt.py --a 1", "",
      "exits at line 2", NULL },
    { "exit in a branch not taken", "if [ -n \"$X\" ]; then exit 1; fi\npython p.py --a",
      "python|>p.py|--a", NULL, NULL },
    { "mkdir || exit", "mkdir -p /x || { echo fail; exit 1; }\npython p.py --a", "python|>p.py|--a",
      NULL, NULL },
    { "other files", "source env.sh\nbash other.sh\npython p.py", "python|>p.py",
      "other files are not read: source env.sh (line 1), bash other.sh (line 2)", NULL },
};

static const shell_case bounds[] = {
    { "expansion bomb",
      "A=xxxxxxxxxxxxxxxx\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\n"
      "A=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\n",
      NULL, "line 14: an expansion is longer than 65536 characters", NULL },
    { "bomb in an array",
      "A=(a a a a a a a a)\nfor i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do "
      "A=(\"${A[@]}\" \"${A[@]}\"); done\n",
      NULL, "more than", NULL },
    { "a loop that does not end", "while true; do X=1; done\npython p.py", "python|>p.py",
      "loop past 1000 rounds (line 1)", NULL },
    { "recursion", "f() { f; }\nf\n", NULL, "nest more than 12 deep", NULL },
    { "eval recursion", "S='eval \"$S\"'\neval \"$S\"\n", NULL, "nest more than 12 deep", NULL },
    { "unterminated quote", "A=1\nB=\"abc\npython p.py", NULL, "line 2: unterminated \" quote",
      NULL },
    { "unterminated substitution", "A=$(date\n", NULL, "unterminated $( command substitution",
      NULL },
    { "control character", "A=1\nB=\x01\n", NULL, "line 2: control character U+0001", NULL },
    { "syntax", "if true; then\nA=1\n", NULL, "syntax error: the text ends where fi", NULL },
    { "bad substitution", "A=${}\n", NULL, "bad substitution", NULL },
};

/* The words of c as the want strings write them. */
static void render(const ts_shell_cmd *c, char *buf, size_t size)
{
    size_t k, o = 0;

    buf[0] = '\0';
    for (k = 0; k < c->n && o < size; k++) {
        const ts_shell_word *w = &c->w[k];
        static const char *const why[] = { "", "unset", "maybe", "arg", "command", "unsupported" };
        int n =
            snprintf(buf + o, size - o, "%s%s%s", k ? "|" : "", k == c->entry ? ">" : "", w->text);

        if (n < 0)
            return;
        o += (size_t)n;
        if (w->why != TS_SHELL_KNOWN && o < size) {
            n = snprintf(buf + o, size - o, "{%s:%s@%u}", why[w->why], w->why_name, w->why_line);
            if (n < 0)
                return;
            o += (size_t)n;
        }
    }
}

static bool notes_have(const ts_api_notes *n, const char *part)
{
    size_t k;

    for (k = 0; k < n->n; k++)
        if (strstr(n->text[k], part) != NULL)
            return true;
    return false;
}

static void run_case(const shell_case *c)
{
    ts_api_notes notes;
    ts_api_err err;
    ts_shell_cmd cmd;
    char got[4096];
    int rc;

    memset(&notes, 0, sizeof notes);
    memset(&err, 0, sizeof err);
    rc = ts_shell_read(c->text, strlen(c->text), "/megatron_args", &cmd, &notes, &err);
    if (c->want == NULL) {
        ck_assert_msg(rc == -1, "%s: rc %d, want an error", c->name, rc);
        ck_assert_msg(err.status == 400, "%s: status %u", c->name, err.status);
        ck_assert_str_eq(err.field, "/megatron_args");
        ck_assert_msg(strstr(err.detail, c->detail) != NULL, "%s: detail '%s' lacks '%s'", c->name,
                      err.detail, c->detail);
        return;
    }
    ck_assert_msg(rc >= 0, "%s: error %s", c->name, err.detail);
    render(&cmd, got, sizeof got);
    ck_assert_msg(strcmp(got, c->want) == 0, "%s:\n got  %s\n want %s", c->name, got, c->want);
    if (c->detail != NULL) {
        size_t k;
        bool found = notes_have(&notes, c->detail);

        for (k = 0; !found && k < notes.n; k++)
            fprintf(stderr, "  note: %s\n", notes.text[k]);
        ck_assert_msg(found, "%s: no note contains '%s'", c->name, c->detail);
    }
    ts_shell_free(&cmd);
}

START_TEST(test_same_as_bash)
{
    run_case(&same[_i]);
}
END_TEST

START_TEST(test_bounds)
{
    run_case(&bounds[_i]);
}
END_TEST

/* The #SBATCH directives come back as words, and the 175B-style
 * sbatch script's line of the training command is the heredoc's. */
START_TEST(test_directives)
{
    static const char text[] = "#!/bin/bash\n#SBATCH --nodes=128 --exclusive --ntasks-per-node=8\n"
                               "python -u pretrain_gpt.py --a 1\n";
    ts_api_notes notes;
    ts_api_err err;
    ts_shell_cmd cmd;

    memset(&notes, 0, sizeof notes);
    ck_assert_int_eq(ts_shell_read(text, strlen(text), "/megatron_args", &cmd, &notes, &err), 1);
    ck_assert_uint_eq(cmd.ndir, 3);
    ck_assert_str_eq(cmd.dir[0].text, "--nodes=128");
    ck_assert_str_eq(cmd.dir[2].text, "--ntasks-per-node=8");
    ck_assert_uint_eq(cmd.dir[0].line, 2);
    ck_assert_uint_eq(cmd.line, 3);
    ts_shell_free(&cmd);
}
END_TEST

/* cat <<EOF > FILE keeps FILE (its path and text as bash would write
 * them): the last write of a path wins, a quoted delimiter does not
 * expand, an unknown part is marked, and cat with other words (a
 * filter, cat a b > c) keeps nothing. */
START_TEST(test_heredoc_files)
{
    static const char text[] =
        "CFG=ds.json\nS=3\ncat <<EOT > $CFG\n{\"zero_optimization\": {\"stage\": $S}}\nEOT\n"
        "cat > lit.json <<'EOF'\n{\"x\": \"$S\"}\nEOF\n"
        "cat <<EOT > ds.json\n{\"stage\": $S, \"t\": $TBS}\nEOT\n"
        "cat a.txt <<EOT > other.json\n1\nEOT\n"
        "cat <<EOT 2>/dev/null >> app.json\n1\nEOT\n"
        "deepspeed pretrain_gpt.py --deepspeed_config $CFG\n";
    ts_api_notes notes;
    ts_api_err err;
    ts_shell_cmd cmd;
    char why[256];

    memset(&notes, 0, sizeof notes);
    ck_assert_int_eq(ts_shell_read(text, strlen(text), "/megatron_args", &cmd, &notes, &err), 1);
    ck_assert_uint_eq(cmd.nfiles, 2);
    ck_assert_str_eq(cmd.files[0].path.text, "ds.json");
    ck_assert_str_eq(cmd.files[0].text.text, "{\"stage\": 3, \"t\": }\n");
    ck_assert_uint_eq(cmd.files[0].text.line, 9);
    ck_assert_int_eq(cmd.files[0].text.why, TS_SHELL_UNSET);
    ts_shell_why_text(&cmd.files[0].text, why, sizeof why);
    ck_assert_ptr_nonnull(strstr(why, "$TBS"));
    ck_assert_str_eq(cmd.files[1].path.text, "lit.json");
    ck_assert_str_eq(cmd.files[1].text.text, "{\"x\": \"$S\"}\n");
    ck_assert_int_eq(cmd.files[1].text.why, TS_SHELL_KNOWN);
    ts_shell_free(&cmd);
}
END_TEST

/* Only fd 1's target is the file (the lexer drops 2>'s IO number); a
 * text this reader refuses (${}: bad substitution) keeps the file as
 * unsupported instead of refusing the script; past TS_SHELL_FILES_MAX
 * paths a note says the rest were not kept. */
START_TEST(test_heredoc_files_edges)
{
    static const char text[] = "cat <<EOT > ds.json 2>/dev/null\n{}\nEOT\n"
                               "cat 1>one.json <<EOT\n1\nEOT\n"
                               "cat <<EOT > bad.json\n${}\nEOT\n"
                               "cat <<EOT > four.json\n4\nEOT\n"
                               "cat <<EOT > five.json\n5\nEOT\n"
                               "deepspeed pretrain_gpt.py --a 1\n";
    ts_api_notes notes;
    ts_api_err err;
    ts_shell_cmd cmd;
    size_t k;
    bool said = false;

    memset(&notes, 0, sizeof notes);
    ck_assert_int_eq(ts_shell_read(text, strlen(text), "/megatron_args", &cmd, &notes, &err), 1);
    ck_assert_uint_eq(cmd.nfiles, 4);
    ck_assert_str_eq(cmd.files[0].path.text, "ds.json");
    ck_assert_str_eq(cmd.files[1].path.text, "one.json");
    ck_assert_str_eq(cmd.files[2].path.text, "bad.json");
    ck_assert_int_eq(cmd.files[2].text.why, TS_SHELL_UNSUPPORTED);
    ck_assert_str_eq(cmd.files[3].path.text, "four.json");
    for (k = 0; k < notes.n; k++)
        said = said || strstr(notes.text[k], "more than 4 files from heredocs") != NULL;
    ck_assert(said);
    ts_shell_free(&cmd);
}
END_TEST

/* Why-texts name the variable and the line. */
START_TEST(test_why_text)
{
    static const char text[] = "A=1\n\ntorchrun pretrain_gpt.py --num-layers $NUM_LAYERS\n";
    ts_api_notes notes;
    ts_api_err err;
    ts_shell_cmd cmd;
    char why[256];

    memset(&notes, 0, sizeof notes);
    ck_assert_int_eq(ts_shell_read(text, strlen(text), "/megatron_args", &cmd, &notes, &err), 1);
    ck_assert_uint_eq(cmd.n, 4);
    ck_assert(cmd.w[3].ghost);
    ts_shell_why_text(&cmd.w[3], why, sizeof why);
    ck_assert_str_eq(why, "$NUM_LAYERS (line 3), which the script never assigns (assign it, "
                          "or give a default: ${NUM_LAYERS:-value})");
    ts_shell_free(&cmd);
}
END_TEST

/* A text past the cap is a 400 before any work. */
START_TEST(test_text_cap)
{
    size_t n = TS_SHELL_TEXT_MAX + 1;
    char *t = malloc(n + 1);
    ts_api_notes notes;
    ts_api_err err;
    ts_shell_cmd cmd;

    ck_assert_ptr_nonnull(t);
    memset(t, ' ', n);
    t[n] = '\0';
    memset(&notes, 0, sizeof notes);
    ck_assert_int_eq(ts_shell_read(t, n, "/megatron_args", &cmd, &notes, &err), -1);
    ck_assert_uint_eq(err.status, 400);
    ck_assert_str_eq(err.slug, "import-too-large");
    free(t);
}
END_TEST

/* test_shell --emit DIR: each same[] case as DIR/N.sh, and DIR/N.want
 * with its words from the entry point on, ghosts left out (what bash
 * prints), for shell_cases.sh. */
static int emit(const char *dir)
{
    size_t k;

    for (k = 0; k < sizeof same / sizeof same[0]; k++) {
        char path[1024], want[4096];
        const char *p = strchr(same[k].want, '>');
        FILE *f;

        if (p == NULL || same[k].differs != NULL)
            continue; /* an argument list (not a command bash runs), or a known difference */
        snprintf(path, sizeof path, "%s/%zu.sh", dir, k);
        f = fopen(path, "w");
        if (f == NULL)
            return 1;
        fputs(same[k].text, f);
        fputc('\n', f);
        fclose(f);
        snprintf(want, sizeof want, "%s", p + 1);
        snprintf(path, sizeof path, "%s/%zu.want", dir, k);
        f = fopen(path, "w");
        if (f == NULL)
            return 1;
        for (p = want;;) {
            const char *e = strchr(p, '|');
            size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
            const char *g = memchr(p, '{', n);
            size_t keep = g != NULL ? (size_t)(g - p) : n;

            if (keep > 0 || g == NULL)
                fprintf(f, "%.*s\n", (int)keep, p);
            if (e == NULL)
                break;
            p = e + 1;
        }
        fclose(f);
    }
    return 0;
}

int main(int argc, char **argv)
{
    Suite *s;
    TCase *tc;
    SRunner *sr;
    int failed;

    if (argc == 3 && strcmp(argv[1], "--emit") == 0)
        return emit(argv[2]);
    s = suite_create("shell");
    tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_same_as_bash, 0, (int)(sizeof same / sizeof same[0]));
    tcase_add_loop_test(tc, test_bounds, 0, (int)(sizeof bounds / sizeof bounds[0]));
    tcase_add_test(tc, test_directives);
    tcase_add_test(tc, test_why_text);
    tcase_add_test(tc, test_heredoc_files);
    tcase_add_test(tc, test_heredoc_files_edges);
    tcase_add_test(tc, test_text_cap);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
