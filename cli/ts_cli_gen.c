/*
 * ts_cli_gen.c - build-time generator of the CLI's shell completions and
 * man page, from the tables the parser reads.
 *
 *   ts_cli_gen bash OUT   bash completion (complete -F _trainsize trainsize)
 *   ts_cli_gen zsh OUT    zsh completion (#compdef trainsize)
 *   ts_cli_gen man OUT    trainsize(1), roff (man -l OUT)
 *
 * The commands and the CLI's own options are ts_cli_cmds[] and
 * ts_cli_opts[] (ts_cli_cmds.c), the run options ts_cli_field_table[]
 * (generated from the API's field registry), their enum values the API's
 * (ts_cli_field_values()), and --model/--gpu complete to the catalogues'
 * ids (core): nothing here is a list kept by hand, so an option added to
 * a table is completed and documented at the next build.
 */
#include "ts_cli_cmds.h"
#include "ts_cli_opts.h"
#include "trainsize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "micro_batch" -> "--micro-batch" (no = "--no-micro-batch"). */
static const char *opt_name(const char *json_name, bool no)
{
    static char buf[96];
    size_t o = (size_t)snprintf(buf, sizeof buf, "--%s", no ? "no-" : "");

    for (const char *c = json_name; *c != '\0' && o + 1 < sizeof buf; c++)
        buf[o++] = *c == '_' ? '-' : *c;
    buf[o] = '\0';
    return buf;
}

/* Words for a run field's value: its enum values, or the catalogue's ids. */
static void field_words(FILE *out, const char *json_name)
{
    const char *const *v = ts_cli_field_values(json_name);
    const char *sep = "";

    if (strcmp(json_name, "model") == 0) {
        for (size_t i = 0; i < ts_preset_count(); i++, sep = " ")
            fprintf(out, "%s%s", sep, ts_preset_at(i)->id);
        return;
    }
    if (strcmp(json_name, "gpu") == 0) {
        for (size_t i = 0; i < ts_gpu_count(); i++, sep = " ")
            fprintf(out, "%s%s", sep, ts_gpu_at(i)->id);
        return;
    }
    for (; v != NULL && *v != NULL; v++, sep = " ")
        fprintf(out, "%s%s", sep, *v);
}

static bool field_has_words(const char *json_name)
{
    return ts_cli_field_values(json_name) != NULL || strcmp(json_name, "model") == 0 ||
           strcmp(json_name, "gpu") == 0;
}

static bool cmd_takes(const ts_cli_opt *o, int c)
{
    if (o->cmds == 0)
        return true;
    if (o == &ts_cli_opts[TS_CLI_OPT_FORMAT])
        return ts_cli_cmds[c].formats != 0;
    return (o->cmds & TS_CMD_BIT(c)) != 0;
}

static void format_words(FILE *out, int c)
{
    const char *sep = "";

    for (int f = 0; f < TS_CHECK_FORMAT_COUNT; f++)
        if (ts_cli_cmds[c].formats & TS_FORMAT_BIT(f)) {
            fprintf(out, "%s%s", sep, ts_check_format_names[f]);
            sep = " ";
        }
}

/* ---------------------------------------------------------------- */
/* bash                                                              */
/* ---------------------------------------------------------------- */

/* Every option word command c takes (NONE: the global ones). */
static void bash_words(FILE *out, int c)
{
    size_t n;
    const ts_cli_field *f = ts_cli_fields(&n);

    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++) {
        const ts_cli_opt *o = &ts_cli_opts[i];

        if (c == TS_CMD_NONE ? o->cmds == 0 : cmd_takes(o, c)) {
            fprintf(out, " %s", o->name);
            if (o->short_name != 0)
                fprintf(out, " -%c", o->short_name);
        }
    }
    if (c == TS_CMD_NONE || !ts_cli_cmds[c].run_options)
        return;
    fputs(" --set", out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, " %s", opt_name(f[i].name, false));
        if (f[i].kind == TS_CLI_BOOL)
            fprintf(out, " %s", opt_name(f[i].name, true));
    }
}

/* case $prev: the values of the option before the cursor. */
static void bash_values(FILE *out)
{
    size_t n;
    const ts_cli_field *f = ts_cli_fields(&n);

    fputs("    case $prev in\n", out);
    fputs("    --format)\n        case $cmd in\n", out);
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++) {
        if (ts_cli_cmds[c].formats == 0)
            continue;
        fprintf(out, "        %s) COMPREPLY=($(compgen -W \"", ts_cli_cmds[c].name);
        format_words(out, c);
        fputs("\" -- \"$cur\")) ;;\n", out);
    }
    fputs("        esac\n        return ;;\n", out);
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++) {
        const ts_cli_opt *o = &ts_cli_opts[i];

        if (o->arg == TS_ARG_ENUM && i != TS_CLI_OPT_FORMAT) {
            fprintf(out, "    %s) COMPREPLY=($(compgen -W \"", o->name);
            for (const char *const *v = o->values; *v != NULL; v++)
                fprintf(out, "%s%s", v == o->values ? "" : " ", *v);
            fputs("\" -- \"$cur\")); return ;;\n", out);
        } else if (o->arg == TS_ARG_FILE) {
            fprintf(out, "    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", o->name);
        } else if (o->arg == TS_ARG_WORD) {
            fprintf(out, "    %s) return ;;\n", o->name);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (f[i].kind == TS_CLI_BOOL)
            continue;
        if (field_has_words(f[i].name)) {
            fprintf(out, "    %s) COMPREPLY=($(compgen -W \"", opt_name(f[i].name, false));
            field_words(out, f[i].name);
            fputs("\" -- \"$cur\")); return ;;\n", out);
        } else {
            fprintf(out, "    %s) return ;;\n", opt_name(f[i].name, false));
        }
    }
    fputs("    --set) return ;;\n    esac\n", out);
}

static void gen_bash(FILE *out)
{
    fputs("# bash completion for trainsize, generated by cli/ts_cli_gen.c from the\n"
          "# CLI's option tables and the API's field registry: do not edit.\n"
          "_trainsize()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local cmd= opts= i\n"
          "    # --name=value: bash splits at '='\n"
          "    if [[ $cur == = ]]; then cur=; fi\n"
          "    if [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        case ${COMP_WORDS[i]} in\n            ",
          out);
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++)
        fprintf(out, "%s%s", c > TS_CMD_NONE + 1 ? "|" : "", ts_cli_cmds[c].name);
    fputs(") cmd=${COMP_WORDS[i]}; break ;;\n        esac\n    done\n", out);

    bash_values(out);

    /* the option words of the command */
    fputs("    case $cmd in\n    '')\n        opts=\"", out);
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++)
        fprintf(out, "%s%s", c > TS_CMD_NONE + 1 ? " " : "", ts_cli_cmds[c].name);
    bash_words(out, TS_CMD_NONE);
    fputs("\" ;;\n", out);
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++) {
        fprintf(out, "    %s)\n        opts=\"", ts_cli_cmds[c].name);
        if (c == TS_CMD_HELP) {
            for (int k = TS_CMD_NONE + 1; k < TS_CMD_COUNT; k++)
                fprintf(out, "%s ", ts_cli_cmds[k].name);
        }
        bash_words(out, c);
        fputs("\" ;;\n", out);
    }
    fputs("    esac\n"
          "    if [[ $cur == -* || $cmd == '' || $cmd == help ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    elif [[ $cmd == estimate || $cmd == check ]]; then\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))   # plan files\n"
          "    fi\n"
          "}\n"
          "complete -F _trainsize trainsize\n",
          out);
}

/* ---------------------------------------------------------------- */
/* zsh                                                               */
/* ---------------------------------------------------------------- */

/* The first line of a help text, for an _arguments description: quotes
 * and the characters _arguments reads (: [ ] \) escaped. */
static void zsh_desc(FILE *out, const char *s)
{
    for (; *s != '\0' && *s != '\n'; s++) {
        if (*s == '\'')
            fputs("'\\''", out);
        else if (*s == ':' || *s == '[' || *s == ']' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else
            fputc(*s, out);
    }
}

static void zsh_table_opt(FILE *out, const ts_cli_opt *o, int c)
{
    fprintf(out, "        '%s%s[", o->name, o->arg != TS_ARG_NONE ? "=" : "");
    zsh_desc(out, o->help);
    fputc(']', out);
    if (o->arg == TS_ARG_FILE) {
        fprintf(out, ":%s:_files", o->metavar);
    } else if (o->arg == TS_ARG_ENUM) {
        fprintf(out, ":%s:(", o->metavar);
        if (o == &ts_cli_opts[TS_CLI_OPT_FORMAT]) {
            format_words(out, c);
        } else {
            for (const char *const *v = o->values; *v != NULL; v++)
                fprintf(out, "%s%s", v == o->values ? "" : " ", *v);
        }
        fputc(')', out);
    } else if (o->arg == TS_ARG_WORD) {
        fprintf(out, ":%s: ", o->metavar);
    }
    fputs("' \\\n", out);
}

static void zsh_command(FILE *out, int c)
{
    size_t n;
    const ts_cli_field *f = ts_cli_fields(&n);

    fprintf(out, "    %s)\n      _arguments \\\n", ts_cli_cmds[c].name);
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++)
        if (cmd_takes(&ts_cli_opts[i], c) && ts_cli_opts[i].short_name == 0)
            zsh_table_opt(out, &ts_cli_opts[i], c);
    fputs("        '(- *)--help[this command'\\''s options]' \\\n", out);
    if (ts_cli_cmds[c].run_options) {
        fputs("        '*--set=[any run field]:KEY=VALUE: ' \\\n", out);
        for (size_t i = 0; i < n; i++) {
            if (f[i].kind == TS_CLI_BOOL) {
                fprintf(out, "        '%s[", opt_name(f[i].name, false));
                zsh_desc(out, f[i].help);
                fprintf(out, "]' \\\n        '%s[", opt_name(f[i].name, true));
                zsh_desc(out, f[i].help);
                fputs("]' \\\n", out);
                continue;
            }
            fprintf(out, "        '%s=[", opt_name(f[i].name, false));
            zsh_desc(out, f[i].help);
            fprintf(out, "]:%s:", ts_cli_field_metavar(&f[i]));
            if (field_has_words(f[i].name)) {
                fputc('(', out);
                field_words(out, f[i].name);
                fputc(')', out);
            } else {
                fputc(' ', out);
            }
            fputs("' \\\n", out);
        }
    }
    if (c == TS_CMD_ESTIMATE || c == TS_CMD_CHECK)
        fputs("        '*:plan:_files'\n", out);
    else if (c == TS_CMD_HELP)
        fputs("        '1:command:->commands'\n", out);
    else
        fputs("        ''\n", out);
    fputs("      ;;\n", out);
}

static void gen_zsh(FILE *out)
{
    fputs("#compdef trainsize\n"
          "# zsh completion for trainsize, generated by cli/ts_cli_gen.c from the\n"
          "# CLI's option tables and the API's field registry: do not edit.\n\n"
          "_trainsize() {\n  local curcontext=\"$curcontext\" state line ret=1\n"
          "  local -a commands\n  commands=(\n",
          out);
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++) {
        fprintf(out, "    '%s:", ts_cli_cmds[c].name);
        zsh_desc(out, ts_cli_cmds[c].summary);
        fputs("'\n", out);
    }
    fputs("  )\n  _arguments -C \\\n", out);
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++) {
        const ts_cli_opt *o = &ts_cli_opts[i];

        if (o->cmds != 0)
            continue;
        if (o->short_name != 0) {
            fprintf(out, "    '(- *)'{-%c,%s}'[", o->short_name, o->name);
            zsh_desc(out, o->help);
            fputs("]' \\\n", out);
        } else {
            fputs("  ", out);
            zsh_table_opt(out, o, TS_CMD_NONE);
        }
    }
    fputs("    '1:command:->commands' \\\n    '*::option:->options' && ret=0\n"
          "  case $state in\n"
          "  commands)\n    _describe -t commands 'trainsize command' commands && ret=0\n"
          "    ;;\n  options)\n    curcontext=\"${curcontext%:*}-$line[1]:\"\n"
          "    case $line[1] in\n",
          out);
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++)
        zsh_command(out, c);
    fputs("    esac\n"
          "    [[ $state == commands ]] && _describe -t commands 'trainsize command' commands\n"
          "    ret=0\n    ;;\n  esac\n  return ret\n}\n\n_trainsize \"$@\"\n",
          out);
}

/* ---------------------------------------------------------------- */
/* man                                                               */
/* ---------------------------------------------------------------- */

/* Text for roff: backslashes as \e, a line that would start with . or '
 * guarded by \&, line breaks kept (fill mode joins them). */
static void roff(FILE *out, const char *s)
{
    bool bol = true;

    for (; *s != '\0'; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", out);
        if (*s == '\\')
            fputs("\\e", out);
        else if (*s == '-')
            fputs("\\-", out);
        else
            fputc(*s, out);
        bol = *s == '\n';
    }
}

static void man_opt(FILE *out, const char *name, char short_name, const char *metavar,
                    const char *help)
{
    fputs(".TP\n", out);
    if (short_name != 0)
        fprintf(out, "\\fB\\-%c\\fR, ", short_name);
    fputs("\\fB", out);
    roff(out, name);
    fputs("\\fR", out);
    if (metavar != NULL) {
        fputs(" \\fI", out);
        roff(out, metavar);
        fputs("\\fR", out);
    }
    fputc('\n', out);
    roff(out, help);
    fputc('\n', out);
}

static void man_cmds_of(FILE *out, const ts_cli_opt *o)
{
    const char *sep = " (";

    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++)
        if (cmd_takes(o, c)) {
            fprintf(out, "%s%s", sep, ts_cli_cmds[c].name);
            sep = ", ";
        }
    fputs(")\n", out);
}

static void gen_man(FILE *out)
{
    size_t n;
    const ts_cli_field *f = ts_cli_fields(&n);

    fprintf(out,
            ".\\\" trainsize(1), generated by cli/ts_cli_gen.c from the CLI's option\n"
            ".\\\" tables and the API's field registry: do not edit.\n"
            ".TH TRAINSIZE 1 \"\" \"trainsize %s\" \"User Commands\"\n"
            ".SH NAME\ntrainsize \\- memory, step time, cost and checkpoints of a "
            "training run\n.SH SYNOPSIS\n.B trainsize\n[\\fB\\-\\-url\\fR \\fIURL\\fR | "
            "\\fB\\-\\-local\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n"
            ".SH DESCRIPTION\n"
            "Answers the trainsize API's questions: in this process (the default, and\n"
            "\\fB\\-\\-local\\fR), or from a server (\\fB\\-\\-url\\fR, "
            "\\fBTRAINSIZE_URL\\fR), with the same answers.\n"
            "A plan is the API's request JSON in a file.\n"
            ".SH COMMANDS\n",
            TS_CLI_VERSION);
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++) {
        fprintf(out, ".TP\n\\fB%s\\fR ", ts_cli_cmds[c].name);
        roff(out, ts_cli_cmds[c].synopsis);
        fputc('\n', out);
        roff(out, ts_cli_cmds[c].summary);
        fputs(".\n", out);
        roff(out, ts_cli_cmds[c].help);
        fputc('\n', out);
    }
    fputs(".SH COMMON OPTIONS\n", out);
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++)
        if (ts_cli_opts[i].cmds == 0)
            man_opt(out, ts_cli_opts[i].name, ts_cli_opts[i].short_name, ts_cli_opts[i].metavar,
                    ts_cli_opts[i].help);
    fputs(".SH COMMAND OPTIONS\n", out);
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++) {
        if (ts_cli_opts[i].cmds == 0)
            continue;
        man_opt(out, ts_cli_opts[i].name, 0, ts_cli_opts[i].metavar, ts_cli_opts[i].help);
        man_cmds_of(out, &ts_cli_opts[i]);
    }
    fputs(".SH RUN OPTIONS\nOf estimate, check and search: the API's request fields, "
          "\\fImicro_batch\\fR as \\fB\\-\\-micro\\-batch\\fR; flags also take "
          "\\fB\\-\\-no\\-\\fR\\fINAME\\fR.\n",
          out);
    man_opt(out, "--set", 0, "KEY=VALUE",
            "any run field; VALUE as JSON (8, 0.4, true, \"x\") "
            "else a string");
    for (size_t i = 0; i < n; i++)
        man_opt(out, opt_name(f[i].name, false), 0, ts_cli_field_metavar(&f[i]), f[i].help);
    fputs(".SH EXIT STATUS\n", out);
    for (const ts_cli_exit *e = ts_cli_exits; e->code >= 0; e++) {
        fprintf(out, ".TP\n.B %d\n", e->code);
        roff(out, e->meaning);
        fputc('\n', out);
    }
    fputs(".SH ENVIRONMENT\n"
          ".TP\n.B TRAINSIZE_URL\nask this server (\\fB\\-\\-url\\fR wins)\n"
          ".TP\n.B TRAINSIZE_PORT\nwithout TRAINSIZE_URL: ask http://127.0.0.1:$TRAINSIZE_PORT\n"
          ".TP\n.B TRAINSIZE_LOCAL\n1: answer in this process even when a server is named; "
          "0: ask one\n"
          ".SH EXAMPLES\n.nf\n"
          "trainsize estimate \\-\\-model llama3\\-70b \\-\\-gpu h100\\-sxm \\-\\-gpus 64 "
          "\\-\\-zero 3\n"
          "trainsize check \\-\\-margin 10% \\-\\-format github plans/*.json\n"
          "trainsize search \\-\\-model llama3\\-70b \\-\\-gpus 1024 \\-\\-limit 10\n"
          ".fi\n"
          ".SH SEE ALSO\ndocs/cli.md and docs/ci.md in the trainsize sources.\n",
          out);
}

int main(int argc, char **argv)
{
    FILE *out;

    if (argc != 3 || (strcmp(argv[1], "bash") != 0 && strcmp(argv[1], "zsh") != 0 &&
                      strcmp(argv[1], "man") != 0)) {
        fprintf(stderr, "usage: ts_cli_gen bash|zsh|man OUT\n");
        return 2;
    }
    out = fopen(argv[2], "w");
    if (out == NULL) {
        perror(argv[2]);
        return 1;
    }
    if (strcmp(argv[1], "bash") == 0)
        gen_bash(out);
    else if (strcmp(argv[1], "zsh") == 0)
        gen_zsh(out);
    else
        gen_man(out);
    if (fclose(out) != 0) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
