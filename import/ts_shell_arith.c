/*
 * ts_shell_arith.c - bash arithmetic ($((...)), (( )), [[ -eq ]]) over
 * int64, every operator checked.
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ts_ckd.h"
#include "ts_shell_int.h"

/* ------------------------------------------------------------------ */
/* Arithmetic ($((...)), (( )), [[ -eq ]]): C's integer operators over
 * int64, every one checked; an unknown operand makes the result unknown,
 * an assignment or a syntax this does not read makes it unsupported. */

typedef struct arith {
    run *r;
    const char *p;
    const char *end;
    uint16_t taint; /* set: the result is unknown, for this reason */
    bool bad;       /* unsupported or invalid */
    unsigned depth;
    unsigned line;
} arith;

static int64_t a_ternary(arith *a);

static void a_ws(arith *a)
{
    while (a->p < a->end && (*a->p == ' ' || *a->p == '\t' || *a->p == '\n' || *a->p == '\r'))
        a->p++;
}

static int64_t a_fail(arith *a)
{
    a->bad = true;
    return 0;
}

/* A number: decimal, 0x hexadecimal or 0 octal. */
static int64_t a_number(arith *a)
{
    int base = 10;
    int64_t v = 0;

    if (*a->p == '0' && a->p + 1 < a->end && (a->p[1] == 'x' || a->p[1] == 'X')) {
        base = 16;
        a->p += 2;
    } else if (*a->p == '0') {
        base = 8;
    }
    while (a->p < a->end && sh_name_char(*a->p)) {
        int d;
        char c = *a->p;

        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return a_fail(a);
        if (d >= base || ts_ckd_mul(&v, v, base) || ts_ckd_add(&v, v, d))
            return a_fail(a);
        a->p++;
    }
    return v;
}

/* A set variable's value, read as an arithmetic text in turn (as bash
 * does); an unknown one makes the result unknown. */
static int64_t a_var(arith *a, const var *v)
{
    field f = sh_var_elem(v, 0);
    uint16_t t = sh_first_taint(f.c, f.n);
    char *txt;
    int64_t r;
    bool bad = false;
    uint16_t sub = 0;

    if (t != 0) {
        if (a->taint == 0)
            a->taint = t;
        return 0;
    }
    if (sh_real_len(f.c, f.n) == 0)
        return 0; /* set and empty: 0, as bash */
    txt = sh_cells_text(a->r->sh, f.c, f.n);
    if (txt == NULL)
        return a_fail(a);
    if (a->depth >= 8) {
        free(txt);
        return a_fail(a);
    }
    r = sh_arith_text(a->r, txt, strlen(txt), a->line, a->depth + 1, &sub, &bad);
    free(txt);
    if (bad)
        return a_fail(a);
    if (sub != 0 && a->taint == 0)
        a->taint = sub;
    return r;
}

/* A variable's name; an unset one is unknown. */
static int64_t a_name(arith *a)
{
    const char *n0 = a->p;
    size_t nlen;
    var *v;

    while (a->p < a->end && sh_name_char(*a->p))
        a->p++;
    nlen = (size_t)(a->p - n0);
    a_ws(a);
    if (a->p < a->end &&
        (*a->p == '[' || (*a->p == '=' && !(a->p + 1 < a->end && a->p[1] == '=')) ||
         ((*a->p == '+' || *a->p == '-') && a->p + 1 < a->end && a->p[1] == *a->p)))
        return a_fail(a); /* arrays, assignments, ++ / --: not read */
    v = sh_var_find(a->r->sh, n0, nlen);
    if (v == NULL || !v->set) {
        if (a->taint == 0)
            a->taint =
                v != NULL && v->maybe
                    ? sh_taint_add(a->r->sh, TS_SHELL_MAYBE, n0, nlen, v->maybe_line, v->maybe_cond)
                    : sh_taint_add(a->r->sh, TS_SHELL_UNSET, n0, nlen, a->line, 0);
        return 0;
    }
    return a_var(a, v);
}

static int64_t a_primary(arith *a)
{
    a_ws(a);
    if (sh_spend(a->r->sh, 1, a->line) != 0)
        return a_fail(a);
    if (a->p >= a->end)
        return a_fail(a);
    if (*a->p == '(') {
        int64_t v;

        a->p++;
        v = a_ternary(a);
        a_ws(a);
        if (a->p >= a->end || *a->p != ')')
            return a_fail(a);
        a->p++;
        return v;
    }
    if (*a->p >= '0' && *a->p <= '9')
        return a_number(a);
    if (sh_name_start(*a->p))
        return a_name(a);
    return a_fail(a);
}

static int64_t a_unary(arith *a)
{
    a_ws(a);
    if (a->p < a->end && (*a->p == '-' || *a->p == '+') &&
        !(a->p + 1 < a->end && a->p[1] == *a->p)) {
        char op = *a->p++;
        int64_t v = a_unary(a);

        if (op == '-') {
            if (v == INT64_MIN)
                return a_fail(a);
            return -v;
        }
        return v;
    }
    if (a->p < a->end && *a->p == '!' && !(a->p + 1 < a->end && a->p[1] == '=')) {
        a->p++;
        return !a_unary(a);
    }
    if (a->p < a->end && *a->p == '~') {
        a->p++;
        return ~a_unary(a);
    }
    return a_primary(a);
}

static int64_t a_pow(arith *a)
{
    int64_t b = a_unary(a);

    a_ws(a);
    if ((size_t)(a->end - a->p) >= 2 && a->p[0] == '*' && a->p[1] == '*') {
        int64_t e, r = 1;

        a->p += 2;
        e = a_pow(a); /* right-associative */
        if (e < 0)
            return a_fail(a);
        while (e-- > 0)
            if (ts_ckd_mul(&r, r, b) || sh_spend(a->r->sh, 1, a->line) != 0)
                return a_fail(a);
        return r;
    }
    return b;
}

static int64_t a_mul(arith *a)
{
    int64_t v = a_pow(a);

    for (;;) {
        int64_t w;

        a_ws(a);
        if (a->p + 1 < a->end && a->p[1] == '=' && (*a->p == '*' || *a->p == '/' || *a->p == '%'))
            return a_fail(a); /* *= /= %=: assignments, not read */
        if (a->p < a->end && *a->p == '*' && !(a->p + 1 < a->end && a->p[1] == '*')) {
            a->p++;
            w = a_pow(a);
            if (ts_ckd_mul(&v, v, w))
                return a_fail(a);
        } else if (a->p < a->end && (*a->p == '/' || *a->p == '%')) {
            char op = *a->p++;

            w = a_pow(a);
            if (w == 0 || (v == INT64_MIN && w == -1)) {
                if (a->taint != 0)
                    return 0; /* unknown anyway */
                return a_fail(a);
            }
            v = op == '/' ? v / w : v % w;
        } else {
            return v;
        }
    }
}

static int64_t a_add(arith *a)
{
    int64_t v = a_mul(a);

    for (;;) {
        a_ws(a);
        if (a->p < a->end && (*a->p == '+' || *a->p == '-') &&
            !(a->p + 1 < a->end && (a->p[1] == '=' || a->p[1] == *a->p))) {
            char op = *a->p++;
            int64_t w = a_mul(a);

            if (op == '+' ? ts_ckd_add(&v, v, w) : __builtin_sub_overflow(v, w, &v))
                return a_fail(a);
        } else {
            return v;
        }
    }
}

static int64_t a_shift(arith *a)
{
    int64_t v = a_add(a);

    for (;;) {
        a_ws(a);
        if ((size_t)(a->end - a->p) >= 2 && (a->p[0] == '<' || a->p[0] == '>') &&
            a->p[1] == a->p[0] && !((size_t)(a->end - a->p) >= 3 && a->p[2] == '=')) {
            char op = a->p[0];
            int64_t w;

            a->p += 2;
            w = a_add(a);
            if (w < 0 || w > 62 || v < 0)
                return a_fail(a);
            if (op == '<') {
                if (v > (INT64_MAX >> w))
                    return a_fail(a);
                v <<= w;
            } else {
                v >>= w;
            }
        } else {
            return v;
        }
    }
}

static int64_t a_rel(arith *a)
{
    int64_t v = a_shift(a);

    for (;;) {
        a_ws(a);
        if (a->p < a->end && (*a->p == '<' || *a->p == '>') &&
            !(a->p + 1 < a->end && a->p[1] == *a->p)) {
            char op = *a->p++;
            bool eq = a->p < a->end && *a->p == '=';
            int64_t w;

            if (eq)
                a->p++;
            w = a_shift(a);
            v = op == '<' ? (eq ? v <= w : v < w) : (eq ? v >= w : v > w);
        } else {
            return v;
        }
    }
}

static int64_t a_eq(arith *a)
{
    int64_t v = a_rel(a);

    for (;;) {
        a_ws(a);
        if ((size_t)(a->end - a->p) >= 2 && (a->p[0] == '=' || a->p[0] == '!') && a->p[1] == '=') {
            bool ne = a->p[0] == '!';
            int64_t w;

            a->p += 2;
            w = a_rel(a);
            v = ne ? v != w : v == w;
        } else {
            return v;
        }
    }
}

static int64_t a_bits(arith *a, int level)
{
    static const char opc[3] = { '&', '^', '|' };
    int64_t v = level == 0 ? a_eq(a) : a_bits(a, level - 1);

    for (;;) {
        char op = opc[level];

        a_ws(a);
        if (a->p < a->end && *a->p == op &&
            !(a->p + 1 < a->end && (a->p[1] == op || a->p[1] == '='))) {
            int64_t w;

            a->p++;
            w = level == 0 ? a_eq(a) : a_bits(a, level - 1);
            v = op == '&' ? (v & w) : op == '^' ? (v ^ w) : (v | w);
        } else {
            return v;
        }
    }
}

static int64_t a_logic(arith *a, bool or)
{
    int64_t v = or ? a_logic(a, false) : a_bits(a, 2);
    const char *op = or ? "||" : "&&";

    for (;;) {
        a_ws(a);
        if ((size_t)(a->end - a->p) >= 2 && memcmp(a->p, op, 2) == 0) {
            int64_t w;

            a->p += 2;
            w = or ? a_logic(a, false) : a_bits(a, 2);
            v = or ? (v || w) : (v && w);
        } else {
            return v;
        }
    }
}

static int64_t a_ternary(arith *a)
{
    int64_t c;

    if (++a->depth > 64)
        return a_fail(a);
    c = a_logic(a, true);
    a_ws(a);
    if (a->p < a->end && *a->p == '?') {
        int64_t x, y;

        a->p++;
        x = a_ternary(a);
        a_ws(a);
        if (a->p >= a->end || *a->p != ':')
            return a_fail(a);
        a->p++;
        y = a_ternary(a);
        c = c ? x : y;
    }
    a->depth--;
    return c;
}

int64_t sh_arith_text(run *r, const char *txt, size_t n, unsigned line, unsigned depth,
                      uint16_t *taint, bool *bad)
{
    arith a;
    int64_t v;

    memset(&a, 0, sizeof a);
    a.r = r;
    a.p = txt;
    a.end = txt + n;
    a.line = line;
    a.depth = depth;
    a_ws(&a);
    if (a.p >= a.end) {
        *taint = 0;
        *bad = false;
        return 0;
    }
    v = a_ternary(&a);
    a_ws(&a);
    if (a.p != a.end)
        a.bad = true;
    *taint = a.taint;
    *bad = a.bad;
    return v;
}
