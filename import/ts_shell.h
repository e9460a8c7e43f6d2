/*
 * ts_shell.h - a launch script read the way bash would, for the parts
 * that decide the training command; nothing is ever executed.
 *
 * Users keep their Megatron-LM runs as shell scripts: VAR=value lines,
 * "--flag value" blocks in strings or bash arrays, ${VAR:-default},
 * if/else on a DTYPE, and a torchrun (or deepspeed, srun, sbatch heredoc,
 * bash -c "...") line that ends in "pretrain_gpt.py ${ARGS[@]}".  This
 * module interprets that text: assignments, arrays, parameter expansion,
 * $((arithmetic)), quoting and word splitting, if/elif/else, case, for and
 * while loops, functions, && and ||, test / [ / [[ with string and integer
 * comparisons, eval, bash -c strings and shell heredocs.  What it cannot
 * know without running something is never guessed:
 *   - a command's output ($(...), `...`) and a script argument ($1) are
 *     unknown values, and so is a variable the script never assigns;
 *   - a condition on a file or a command's status is not evaluated:
 *     neither branch is read, and a variable assigned only in one is
 *     remembered as such;
 *   - other files (source, bash train.sh) are not read.
 * An unknown value travels with the words made from it (a word knows why
 * it is unknown and where), so the importer can ignore it in a flag it
 * does not read and name it in a 400 when a flag it reads needs it.
 *
 * Every loop is bounded: the work (tokens run, characters expanded,
 * pattern steps), the variables, the length of a value, the nesting of
 * eval / bash -c / function calls.  Past a bound the answer is a 400
 * naming the line, never a stall (an expansion bomb, A=$A$A repeated,
 * stops at the value cap).
 *
 * The training command is the command that runs a *.py entry point with
 * the most --flags after it (torchrun, python -m torch.distributed.run,
 * deepspeed and srun keep their own options before it); a text without
 * one is an argument list (args.txt: the words of every command that
 * starts with a --flag).  Notes say which line was read and what was not
 * followed.
 */
#ifndef TS_SHELL_H
#define TS_SHELL_H

#include <stdbool.h>
#include <stddef.h>

#include "ts_api_int.h"

/* Largest text read (bytes); the importer's own cap is lower. */
#define TS_SHELL_TEXT_MAX 49152
/* Bounds on the work of one reading. */
#define TS_SHELL_WORK_MAX   4000000u /* tokens run + characters made + pattern steps */
#define TS_SHELL_VALUE_MAX  65536u   /* characters of one value or word */
#define TS_SHELL_CELLS_MAX  262144u  /* characters held by all variables */
#define TS_SHELL_VARS_MAX   512u     /* variables */
#define TS_SHELL_DEPTH_MAX  12u      /* eval / bash -c / heredoc / function calls, nested */
#define TS_SHELL_TOKENS_MAX 32768u   /* tokens of one text */
#define TS_SHELL_WORDS_MAX  4096u    /* words of the training command */

/* Why a word's text is not all the script's own. */
typedef enum ts_shell_why {
    TS_SHELL_KNOWN = 0,  /* every character is known */
    TS_SHELL_UNSET,      /* a variable the script never assigns */
    TS_SHELL_MAYBE,      /* a variable assigned only in a branch not read */
    TS_SHELL_ARG,        /* a script argument ($1...): none is given */
    TS_SHELL_COMMAND,    /* a command's output: $(...) or `...` */
    TS_SHELL_UNSUPPORTED /* an expansion this reader does not evaluate */
} ts_shell_why;

typedef struct ts_shell_word {
    char *text;    /* owned, NUL-terminated; "" for a ghost */
    unsigned line; /* where its first character was written */
    /* An unknown value that expanded to nothing: bash would drop it, so
     * "--num-layers $UNSET" would take the next word as the value.  The
     * ghost keeps its place, for the importer to name it. */
    bool ghost;
    ts_shell_why why;  /* KNOWN, or why the text is not (the first reason) */
    char why_name[48]; /* the variable ("NUM_LAYERS", "1") or construct */
    unsigned why_line; /* where it was expanded (MAYBE: assigned) */
    unsigned why_cond; /* MAYBE: the line of the condition not read */
} ts_shell_word;

/* A file the script writes from a heredoc (cat <<EOF > FILE, or cat >
 * FILE <<EOF), for an importer that reads a file by that name
 * (Megatron-DeepSpeed's --deepspeed_config): the path and the text as
 * bash would write them.  Each word's why says whether some of it is
 * unknown.  The last write of a path wins. */
#define TS_SHELL_FILES_MAX 4
typedef struct ts_shell_file {
    ts_shell_word path;
    ts_shell_word text; /* line: the cat command's */
} ts_shell_file;

typedef struct ts_shell_cmd {
    ts_shell_word *w; /* the training command, launchers first */
    size_t n;
    size_t entry;       /* index of the *.py word; n for an argument list */
    unsigned line;      /* the command's line */
    ts_shell_word *dir; /* words of #SBATCH lines (sbatch's directives) */
    size_t ndir;
    ts_shell_file files[TS_SHELL_FILES_MAX]; /* heredoc files, in the order first written */
    size_t nfiles;
} ts_shell_cmd;

/* Read text (len bytes, at most TS_SHELL_TEXT_MAX) into *cmd.  ptr is the
 * request member ("/megatron_args"): problems name it and the line.  1 =
 * a command found, 0 = none (then *cmd is empty and a note may say why),
 * -1 = error (err set: 400 for the text, 503 out of memory).  Notes are
 * prefixed with the member's name.  ts_shell_free() after 0 or 1. */
int ts_shell_read(const char *text, size_t len, const char *ptr, ts_shell_cmd *cmd,
                  ts_api_notes *notes, ts_api_err *err);
void ts_shell_free(ts_shell_cmd *cmd);

/* Why w is unknown, as a clause ("$NUM_LAYERS (line 57), which the script
 * never assigns"), into buf. */
void ts_shell_why_text(const ts_shell_word *w, char *buf, size_t size);

#endif /* TS_SHELL_H */
