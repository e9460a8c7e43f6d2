/*
 * ts_cli_search_out.c - `trainsize search`'s reports (see ts_cli_out.h):
 * jsonl (each ranked layout's bytes as the API sent them), csv (every
 * scalar member of the rows a column) and markdown (one table).
 */
#include "ts_cli_out.h"
#include "ts_cli_esc.h"
#include "ts_cli_locate.h"
#include "ts_cli_report.h"

#include <stdio.h>
#include <string.h>

/* The columns of the search CSV: every scalar member of the rows, and of
 * their objects one level down ("step.compute", "human.predicted_mfu"),
 * in the order they first appear: a member the API adds is a column
 * without an edit here. */
static json_t *search_columns(const json_t *rows)
{
    json_t *cols = json_array(), *seen = json_object(), *r, *v, *w;
    const char *k, *k2;
    size_t i;
    char name[160];

    if (cols == NULL || seen == NULL) {
        json_decref(cols);
        json_decref(seen);
        return NULL;
    }
    json_array_foreach(rows, i, r)
    {
        json_object_foreach(r, k, v)
        {
            if (json_is_object(v)) {
                json_object_foreach(v, k2, w)
                {
                    if (json_is_object(w) || json_is_array(w))
                        continue;
                    snprintf(name, sizeof name, "%s.%s", k, k2);
                    if (json_object_get(seen, name) == NULL) {
                        json_object_set_new(seen, name, json_true());
                        json_array_append_new(cols, json_string(name));
                    }
                }
            } else if (!json_is_array(v) && json_object_get(seen, k) == NULL) {
                json_object_set_new(seen, k, json_true());
                json_array_append_new(cols, json_string(k));
            }
        }
    }
    json_decref(seen);
    return cols;
}

static void csv_value(FILE *out, const json_t *v)
{
    if (json_is_number(v))
        ts_esc_csv_num(out, json_number_value(v));
    else if (json_is_string(v))
        ts_esc_csv_field(out, json_string_value(v));
    else if (json_is_boolean(v))
        fputs(json_is_true(v) ? "true" : "false", out);
}

static void search_csv(FILE *out, const json_t *rows)
{
    json_t *cols = search_columns(rows), *c, *r;
    size_t i, j;

    if (cols == NULL)
        return;
    json_array_foreach(cols, j, c)
    {
        if (j > 0)
            fputc(',', out);
        ts_esc_csv_field(out, json_string_value(c));
    }
    fputs("\r\n", out);
    json_array_foreach(rows, i, r)
    {
        json_array_foreach(cols, j, c)
        {
            const char *name = json_string_value(c);
            const char *dot = strchr(name, '.');
            const json_t *v;

            if (j > 0)
                fputc(',', out);
            if (dot != NULL) {
                char head[160];

                snprintf(head, sizeof head, "%.*s", (int)(dot - name), name);
                v = json_object_get(json_object_get(r, head), dot + 1);
            } else {
                v = json_object_get(r, name);
            }
            csv_value(out, v);
        }
        fputs("\r\n", out);
    }
    json_decref(cols);
}

static const char *search_cell(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(json_object_get(r, "human"), key);

    if (!json_is_string(v))
        v = json_object_get(r, key);
    return json_is_string(v) ? json_string_value(v) : "n/a";
}

static void search_markdown(FILE *out, const json_t *a, const json_t *rows)
{
    const json_t *in = json_object_get(a, "inputs"), *r;
    size_t i;

    fprintf(out, "trainsize search: %s on %.0f x %s\n---\n\n",
            json_string_value(json_object_get(in, "model")) != NULL
                ? json_string_value(json_object_get(in, "model"))
                : "custom model",
            ts_report_num(in, "gpus"),
            json_string_value(json_object_get(in, "gpu")) != NULL
                ? json_string_value(json_object_get(in, "gpu"))
                : "?");
    fprintf(out, "%.0f layouts tried, %.0f fit.\n\n", ts_report_num(a, "counts.tried"),
            ts_report_num(a, "counts.fitting"));
    if (!json_is_true(json_object_get(a, "found"))) {
        fputs("**Nothing fits**: ", out);
        ts_esc_md_cell(out, json_string_value(json_object_get(a, "reason")));
        fputc('\n', out);
        return;
    }
    fputs("| rank | tp | pp | cp | dp | ep | micro-batch | vpp | zero | recompute | step | MFU "
          "| tokens/GPU/s | memory | why |\n"
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n",
          out);
    json_array_foreach(rows, i, r)
    {
        fprintf(out, "| %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | ",
                ts_report_num(r, "rank"), ts_report_num(r, "tp"), ts_report_num(r, "pp"),
                ts_report_num(r, "cp"), ts_report_num(r, "dp"), ts_report_num(r, "ep"),
                ts_report_num(r, "micro_batch"), ts_report_num(r, "vpp"), ts_report_num(r, "zero"));
        ts_esc_md_cell(out, search_cell(r, "recompute"));
        fputs(" | ", out);
        ts_esc_md_cell(out, search_cell(r, "step_time_human"));
        fputs(" | ", out);
        ts_esc_md_cell(out, search_cell(r, "predicted_mfu"));
        fputs(" | ", out);
        ts_esc_md_cell(out, search_cell(r, "tokens_per_gpu_second"));
        fputs(" | ", out);
        ts_esc_md_cell(out, search_cell(r, "memory_total_human"));
        fputs(" | ", out);
        ts_esc_md_cell(out, json_string_value(json_object_get(r, "why")));
        fputs(" |\n", out);
    }
}

void ts_out_search(FILE *out, const json_t *answer, const char *raw, ts_check_format format)
{
    const json_t *rows = json_object_get(answer, "results");
    size_t i;

    switch (format) {
    case TS_CHECK_JSONL:
        /* each row's bytes as the API wrote them */
        for (i = 0; i < json_array_size(rows); i++) {
            char ptr[40];
            size_t off, len;

            snprintf(ptr, sizeof ptr, "/results/%zu", i);
            if (ts_loc_json_span(raw, ptr, &off, &len)) {
                fwrite(raw + off, 1, len, out);
                fputc('\n', out);
            }
        }
        break;
    case TS_CHECK_CSV:
        search_csv(out, rows);
        break;
    case TS_CHECK_MARKDOWN:
        search_markdown(out, answer, rows);
        break;
    default:
        break;
    }
}
