/*
 * test_api.c - the JSON layer through ts_api_handle(), as the server and
 * the fuzzer call it.
 *
 * Every response, good or bad, goes through send(), which checks the
 * invariants of the contract (api/CONTRACT.md): a body that is valid
 * JSON, the content type that matches the status, no bare NaN/Infinity
 * token and, for errors, a complete RFC 9457 problem object.
 *
 * Expected values cite their source next to them: docs/formulas.md,
 * /work/shared/oracles.md (copied into the repo as the oracles the core
 * tests use), or arithmetic done by hand in the comment.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_file.h"
#include "th_json.h"
#include "trainsize.h"
#include "ts_api.h"
#include "ts_api_int.h"

#define PROBLEM_BASE TH_PROBLEM_BASE

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

/* Every answer goes through the contract check (tests/helpers/th_json.c). */
static json_t *send(const char *method, const char *path, const char *ct, const char *body,
                    size_t len, ts_api_response *resp)
{
    ck_assert_int_eq(ts_api_handle(method, path, ct, body, len, resp), 0);
    ck_assert_ptr_nonnull(resp->body);
    ck_assert_ptr_nonnull(resp->route);
    /* Bad input is never a 5xx. */
    ck_assert_msg(resp->status == 200 || (resp->status >= 400 && resp->status < 500),
                  "status %u for %s %s: %s", resp->status, method, path, resp->body);
    return th_json_contract(resp->status, resp->content_type, resp->body, resp->body_len);
}

static json_t *post(const char *path, const char *body, ts_api_response *resp)
{
    return send("POST", path, "application/json", body, strlen(body), resp);
}

static void assert_rel(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * fabs(want), "%s: got %.17g, want %.17g (rel tol %g)",
                  what, got, want, tol);
}

/* ------------------------------------------------------------------ */
/* errors (the table of error classes is data: tests/data/api_cases,   */
/* run by tests/api/test_cases.c and over HTTP by tests/server)        */
/* ------------------------------------------------------------------ */

#define J "application/json"

/* The unknown-member detail only suggests a name within distance 2. */
START_TEST(test_suggestions)
{
    ck_assert_str_eq(ts_json_suggest("mfuu", false), "mfu");
    ck_assert_str_eq(ts_json_suggest("micro_bacth", false),
                     "micro_batch"); /* transposition = 2 edits */
    ck_assert_str_eq(ts_json_suggest("seq_len", false) == NULL ? "none" : "some", "none");
    ck_assert_ptr_null(ts_json_suggest("banana", false));
    /* fit extras only count on /v1/fit */
    ck_assert_str_eq(ts_json_suggest("max_gpu", true), "max_gpus");
    ck_assert_str_ne(ts_json_suggest("max_gpu", false) ? ts_json_suggest("max_gpu", false) : "",
                     "max_gpus");
}
END_TEST

/* Large and odd inputs: 4xx, never a crash. */
START_TEST(test_odd_inputs)
{
    ts_api_response r;
    json_t *j;
    size_t n, i;
    char *buf;

    /* (The cap itself, a NUL in the body and a non-ASCII key are cases
     * in tests/data/api_cases/transport.json and fields.json.) */
    buf = malloc(TS_API_BODY_MAX + 2);
    ck_assert_ptr_nonnull(buf);

    /* 30000 nested arrays: past jansson's depth limit (2048). */
    n = 30000;
    for (i = 0; i < n; i++)
        buf[i] = '[';
    for (i = 0; i < n; i++)
        buf[n + i] = ']';
    j = send("POST", "/v1/plan", J, buf, 2 * n, &r);
    ck_assert_uint_eq(r.status, 400);
    ck_assert_str_eq(th_json_str(j, "type"), PROBLEM_BASE "invalid-json");
    json_decref(j);
    ts_api_response_free(&r);

    /* 1000 nested arrays as a member value: parsed, then a type error. */
    n = (size_t)snprintf(buf, 16, "{\"tp\":");
    for (i = 0; i < 1000; i++)
        buf[n++] = '[';
    for (i = 0; i < 1000; i++)
        buf[n++] = ']';
    buf[n++] = '}';
    j = send("POST", "/v1/memory", J, buf, n, &r);
    ck_assert_uint_eq(r.status, 400);
    ck_assert_str_eq(th_json_str(j, "field"), "/tp");
    json_decref(j);
    ts_api_response_free(&r);

    /* A 5000-byte unknown key: reported, pointer truncated but valid. */
    n = 0;
    buf[n++] = '{';
    buf[n++] = '"';
    for (i = 0; i < 5000; i++)
        buf[n++] = 'k';
    memcpy(buf + n, "\":1}", 4);
    n += 4;
    j = send("POST", "/v1/memory", J, buf, n, &r);
    ck_assert_uint_eq(r.status, 400);
    ck_assert(strncmp(th_json_str(j, "field"), "/kkkk", 5) == 0);
    json_decref(j);
    ts_api_response_free(&r);
    free(buf);

    /* NULL body and NULL path do not crash. */
    j = send("POST", "/v1/memory", J, NULL, 0, &r);
    ck_assert_uint_eq(r.status, 400);
    json_decref(j);
    ts_api_response_free(&r);
    j = send("GET", NULL, NULL, NULL, 0, &r);
    ck_assert_uint_eq(r.status, 404);
    ck_assert_str_eq(r.route, "other");
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* successful requests                                                 */
/* ------------------------------------------------------------------ */

/* The contract's own example: preset + GPU + an override. */
START_TEST(test_preset_overrides)
{
    ts_api_response r;
    json_t *j = post("/v1/memory", "{\"model\":\"llama3-70b\",\"gpu\":\"h100-sxm\",\"dp\":64}", &r);

    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(r.route, "/v1/memory");
    ck_assert_str_eq(th_json_str(j, "inputs.model"), "llama3-70b");
    ck_assert_str_eq(th_json_str(j, "inputs.gpu"), "h100-sxm");
    /* gpus = dp * tp * pp * cp = 64 * 1 * 1 * 1 (trainsize.h) */
    ck_assert_int_eq((int)th_json_num(j, "inputs.dp"), 64);
    ck_assert_int_eq((int)th_json_num(j, "inputs.gpus"), 64);
    /* the preset's shape: Llama 3 70B has 80 layers, 64 heads, 8 KV heads
     * (Dubey et al. 2024, Table 3) */
    ck_assert_int_eq((int)th_json_num(j, "inputs.layers"), 80);
    ck_assert_int_eq((int)th_json_num(j, "inputs.kv_heads"), 8);
    ck_assert(json_is_null(th_json_at(j, "inputs.params")));
    /* H100 SXM: 81559 MiB as nvidia-smi reports it, 989 dense BF16
     * TFLOP/s (oracles.md) */
    ck_assert(th_json_num(j, "inputs.hbm_gb") == 81559.0 * 1048576 / 1e9);
    ck_assert(th_json_num(j, "inputs.hbm_gib") == 81559.0 / 1024);
    ck_assert(th_json_num(j, "inputs.peak_tflops") == 989.0);
    /* Megatron (the default framework) keeps fp32 main grads: 18 B/param
     * (oracles.md, Megatron-LM) rather than the ZeRO paper's 16. */
    ck_assert_str_eq(th_json_str(j, "inputs.framework"), "megatron");
    ck_assert_str_eq(th_json_str(j, "inputs.grad_precision"), "fp32");
    ck_assert(th_json_num(j, "memory.bytes_per_param.total") == 18.0);
    ck_assert(th_json_num(j, "memory.bytes_per_param.grads") == 4.0);
    ck_assert(th_json_num(j, "memory.bytes_per_param.weights") == 2.0);
    ck_assert(th_json_num(j, "memory.bytes_per_param.master") == 4.0);
    ck_assert(th_json_num(j, "memory.bytes_per_param.optimizer") == 8.0);
    /* model state = P * 18; both are doubles of exact integers < 2^53 */
    ck_assert(th_json_num(j, "memory.model_state_bytes") == 18.0 * th_json_num(j, "params.total"));
    /* ZeRO shards over the data-parallel group dp*cp = 64 */
    ck_assert_int_eq((int)th_json_num(j, "memory.shard_group"), 64);
    ck_assert(json_is_boolean(th_json_at(j, "memory.fits")));
    ck_assert_str_ne(th_json_str(j, "memory.total.human"), "");
    ck_assert_str_ne(th_json_str(j, "memory.total.formula"), "");
    ck_assert_str_ne(th_json_str(j, "memory.total.assumptions"), "");
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* seed 000 / oracles.md: 70B -> 1.12e12 B model state, 140 GB inference. */
START_TEST(test_memory_70b_oracle)
{
    ts_api_response r;
    json_t *j = post("/v1/memory", "{\"params\":70e9,\"grad_precision\":\"bf16\"}", &r);

    ck_assert_uint_eq(r.status, 200);
    ck_assert(json_is_null(th_json_at(j, "inputs.model")));
    ck_assert(th_json_num(j, "inputs.params") == 70e9);
    /* bf16 grads (the seed's setting): 16 * 70e9 = 1.12e12 and 2 * 70e9 =
     * 1.4e11 are exact in double */
    ck_assert(th_json_num(j, "memory.model_state_bytes") == 1.12e12);
    ck_assert(th_json_num(j, "memory.inference_bytes") == 1.4e11);
    /* Chinchilla default tokens: 20 * P = 1.4e12 (docs/formulas.md) */
    ck_assert(th_json_num(j, "inputs.tokens") == 1.4e12);
    json_decref(j);
    ts_api_response_free(&r);

    /* fp32 grads: 18 B/param (oracles.md, Megatron-LM) */
    j = post("/v1/memory", "{\"params\":70e9,\"grad_precision\":\"fp32\"}", &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert(th_json_num(j, "memory.bytes_per_param.total") == 18.0);
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* Members whose default follows precision (docs/formulas.md). */
START_TEST(test_precision_follows)
{
    ts_api_response r;
    json_t *j = post("/v1/memory", "{\"params\":7e9,\"precision\":\"fp32\"}", &r);

    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(th_json_str(j, "inputs.grad_precision"), "fp32");
    ck_assert_str_eq(th_json_str(j, "inputs.compute_precision"), "fp32");
    ck_assert(json_is_false(th_json_at(j, "inputs.master_weights")));
    /* fp32 weights 4 + fp32 grads 4 + no master + Adam 8 = 16 (formulas.md) */
    ck_assert(th_json_num(j, "memory.bytes_per_param.total") == 16.0);
    /* the time estimate now uses the TF32 peak: H100 SXM 494.7 (catalogue) */
    ck_assert(th_json_num(j, "inputs.peak_tflops") == 494.7);
    json_decref(j);
    ts_api_response_free(&r);

    /* An explicit grad_precision is kept. */
    j = post("/v1/memory", "{\"params\":7e9,\"precision\":\"fp16\",\"grad_precision\":\"fp32\"}",
             &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(th_json_str(j, "inputs.grad_precision"), "fp32");
    ck_assert_str_eq(th_json_str(j, "inputs.compute_precision"), "fp16");
    ck_assert(json_is_true(th_json_at(j, "inputs.master_weights")));
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

START_TEST(test_gpu_overrides)
{
    ts_api_response r;
    json_t *j = post("/v1/compute",
                     "{\"params\":7e9,\"gpu\":\"a100-80\",\"hbm_gb\":40,\"peak_tflops\":250}", &r);

    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(th_json_str(j, "inputs.gpu"), "a100-80");
    ck_assert(th_json_num(j, "inputs.hbm_gb") == 40.0);
    ck_assert(th_json_num(j, "inputs.peak_tflops") == 250.0);
    /* 250 TFLOP/s = 2.5e14 FLOP/s, exact */
    ck_assert(th_json_num(j, "compute.peak_flops") == 2.5e14);
    json_decref(j);
    ts_api_response_free(&r);

    j = post("/v1/memory", "{\"params\":7e9,\"gpu\":\"a100-80\",\"hbm_gb\":40}", &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert(th_json_num(j, "memory.hbm_bytes") == 40e9); /* decimal GB */
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* GPT-3: 6 P T = 3.14e23 FLOPs (oracles.md; Brown et al. 2020). */
START_TEST(test_compute_gpt3)
{
    ts_api_response r;
    json_t *j = post("/v1/compute", "{\"model\":\"gpt3-175b\",\"tokens\":300e9,\"mfu\":0.4}", &r);
    double flops, hours;

    ck_assert_uint_eq(r.status, 200);
    flops = th_json_num(j, "compute.model_flops.value");
    /* oracle given to 3 significant digits: +-0.005e23 -> 0.2% */
    assert_rel(flops, 3.14e23, 2e-3, "GPT-3 model FLOPs");
    ck_assert(th_json_num(j, "inputs.tokens") == 300e9);
    /* GPU-hours = FLOPs / (peak * MFU * 3600), H100 989e12, MFU 0.4
     * (oracles.md); only rounding of one division apart */
    hours = th_json_num(j, "compute.gpu_hours.value");
    assert_rel(hours, flops / (989e12 * 0.4 * 3600.0), 1e-12, "GPU-hours");
    ck_assert(strstr(th_json_str(j, "compute.model_flops.human"), "FLOP") != NULL);
    ck_assert(strstr(th_json_str(j, "compute.gpu_hours.human"), "GPU-hours") != NULL);
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* Resumable checkpoint: 14 B/param for mixed Adam (oracles.md). */
START_TEST(test_checkpoint)
{
    ts_api_response r;
    json_t *j = post("/v1/checkpoint", "{\"params\":70e9}", &r);
    json_t *tiers;

    ck_assert_uint_eq(r.status, 200);
    ck_assert(th_json_num(j, "checkpoint.bpp_full") == 14.0);
    ck_assert(th_json_num(j, "checkpoint.full_bytes.value") == 14.0 * 70e9); /* 9.8e11, exact */
    ck_assert(th_json_num(j, "checkpoint.weights_bytes.value") == 2.0 * 70e9);
    tiers = th_json_at(j, "checkpoint.tiers");
    ck_assert_uint_eq(json_array_size(tiers), 3);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tiers, 0), "name")), "nvme");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tiers, 2), "name")),
                     "object");
    ck_assert(json_object_get(j, "memory") == NULL);
    ck_assert(json_object_get(j, "params") != NULL);
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

START_TEST(test_plan)
{
    ts_api_response r;
    json_t *j = post("/v1/plan", "{\"model\":\"llama3-8b\",\"dp\":48}", &r);
    json_t *sweep, *p;
    size_t i;
    bool has_run_dp = false;
    double prev = 0;

    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(r.route, "/v1/plan");
    ck_assert(json_object_get(j, "memory") != NULL);
    ck_assert(json_object_get(j, "compute") != NULL);
    ck_assert(json_object_get(j, "checkpoint") != NULL);
    sweep = th_json_at(j, "sweep");
    ck_assert(json_array_size(sweep) > 1);
    /* dp = 1, 2, 4, ... and the run's dp, ascending (trainsize.h) */
    json_array_foreach(sweep, i, p)
    {
        double dp = json_number_value(json_object_get(p, "dp"));
        ck_assert(dp > prev);
        prev = dp;
        if (dp == 48) {
            /* the run's own point: the plan's time, step and MFU (the
             * sweep's time is the compute estimate at that dp) */
            has_run_dp = true;
            ck_assert(th_json_num(p, "wall_seconds") ==
                      th_json_num(j, "compute.wall_seconds.value"));
            ck_assert(th_json_num(p, "step_seconds") == th_json_num(j, "compute.step_time.value"));
            ck_assert(th_json_num(p, "mfu") == th_json_num(j, "compute.mfu"));
        }
        /* the tokens are fixed: more GPUs, fewer seconds */
        ck_assert(th_json_num(p, "wall_seconds") > 0);
        if (i > 0)
            ck_assert(th_json_num(p, "wall_seconds") <
                      th_json_num(json_array_get(sweep, i - 1), "wall_seconds"));
    }
    ck_assert(has_run_dp);
    /* The echo is a valid request that resolves to itself (CONTRACT.md). */
    {
        ts_api_response r2;
        char *b = json_dumps(th_json_at(j, "inputs"), JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_t *again = post("/v1/plan", b, &r2);
        ck_assert_uint_eq(r2.status, 200);
        ck_assert(json_equal(th_json_at(again, "inputs"), th_json_at(j, "inputs")));
        ck_assert(json_equal(th_json_at(again, "memory"), th_json_at(j, "memory")));
        json_decref(again);
        ts_api_response_free(&r2);
        free(b);
    }
    /* plan and memory agree on the same run */
    {
        ts_api_response r2;
        json_t *m = post("/v1/memory", "{\"model\":\"llama3-8b\",\"dp\":48}", &r2);
        ck_assert(th_json_num(m, "memory.total.value") == th_json_num(j, "memory.total.value"));
        ck_assert(json_equal(th_json_at(m, "inputs"), th_json_at(j, "inputs")));
        json_decref(m);
        ts_api_response_free(&r2);
    }
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* Numbers survive core double -> JSON text -> double unchanged. */
START_TEST(test_round_trip)
{
    static const char body[] =
        "{\"model\":\"mixtral-8x7b\",\"gpus\":16,\"ep\":8,\"mfu\":0.123456789012345678,"
        "\"fragmentation\":0.1,\"overhead_gib\":-0.0,\"tokens\":-0.0}";
    ts_api_response r;
    json_t *j = post("/v1/plan", body, &r);
    ts_run run;
    ts_plan *plan = malloc(sizeof *plan);
    ts_error err;
    const ts_preset *p = ts_preset_find("mixtral-8x7b");

    ck_assert_uint_eq(r.status, 200);
    ck_assert(th_json_num(j, "inputs.mfu") == strtod("0.123456789012345678", NULL));
    ck_assert(th_json_num(j, "inputs.fragmentation") == 0.1);
    /* -0 is accepted as 0 and never printed as "-0" */
    ck_assert(strstr(r.body, "\"overhead_gib\":0,") != NULL);
    ck_assert(strstr(r.body, "-0") == NULL || strstr(r.body, "-0.") != NULL ||
              strstr(r.body, "e-0") != NULL);

    /* The same run straight through the core. */
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(plan);
    ts_run_defaults(&run);
    ts_run_apply_preset(&run, p);
    run.grad_precision = TS_PREC_FP32; /* the api's Megatron default */
    run.gpus = 16;
    run.dp = 0;
    run.ep = 8;
    run.mfu = 0.123456789012345678;
    run.fragmentation = 0.1;
    run.overhead_gib = 0;
    ck_assert_int_eq(ts_plan_estimate(&run, plan, &err), TS_OK);
    /* bit-identical: 17 significant digits round-trip every double */
    ck_assert(th_json_num(j, "memory.total.value") == plan->memory.total.value);
    ck_assert(th_json_num(j, "memory.activations.value") == plan->memory.activations.value);
    ck_assert(th_json_num(j, "memory.overhead.value") == plan->memory.overhead.value);
    ck_assert(th_json_num(j, "compute.gpu_hours.value") == plan->compute.gpu_hours.value);
    ck_assert(th_json_num(j, "compute.hfu") == plan->compute.hfu);
    ck_assert(th_json_num(j, "checkpoint.daly_interval_s.value") ==
              plan->ckpt.daly_interval_s.value);
    ck_assert(th_json_num(j, "checkpoint.waste_fraction.value") == plan->ckpt.waste_fraction.value);
    /* Mixtral: 46.7e9 total / 12.9e9 active (formulas.md; 3 digits: 0.2%) */
    assert_rel(th_json_num(j, "params.total"), 46.7e9, 2e-3, "Mixtral total");
    assert_rel(th_json_num(j, "params.active"), 12.9e9, 2e-3, "Mixtral active");
    free(plan);

    /* Parse, dump with 17 digits, parse again: the same values. */
    {
        char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_t *again = json_loads(s, 0, NULL);
        ck_assert(json_equal(again, j));
        free(s);
        json_decref(again);
    }
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* POST /v1/budget's "request" posted to /v1/plan gives the same figures
 * (issue 28): params, memory, compute and checkpoint equal member by
 * member, numbers bit for bit; compute's assumptions aside (the budget
 * chose the global batch, the plan is given it).  Its GPU time held is
 * the budget, for each of the three modes. */
static void budget_round_trip(const char *body, double gpu_hours)
{
    static const char *const objs[] = { "params", "memory", "compute", "checkpoint" };
    ts_api_response rb, rp;
    json_t *b = post("/v1/budget", body, &rb), *p;
    char *req;
    size_t i;

    ck_assert_msg(rb.status == 200, "%s -> %u %s", body, rb.status, rb.body);
    req = json_dumps(json_object_get(b, "request"), JSON_COMPACT | JSON_REAL_PRECISION(17));
    ck_assert_ptr_nonnull(req);
    p = post("/v1/plan", req, &rp);
    ck_assert_msg(rp.status == 200, "%s -> %u %s", req, rp.status, rp.body);
    ck_assert(json_equal(json_object_get(p, "inputs"), json_object_get(b, "request")));
    json_object_del(json_object_get(b, "compute"), "assumptions");
    json_object_del(json_object_get(p, "compute"), "assumptions");
    for (i = 0; i < sizeof objs / sizeof objs[0]; i++) {
        char *x = json_dumps(json_object_get(b, objs[i]), JSON_COMPACT | JSON_SORT_KEYS);
        char *y = json_dumps(json_object_get(p, objs[i]), JSON_COMPACT | JSON_SORT_KEYS);

        ck_assert_msg(x != NULL && y != NULL && strcmp(x, y) == 0, "%s: %s differs:\n%s\n%s", body,
                      objs[i], x, y);
        free(x);
        free(y);
    }
    assert_rel(th_json_num(p, "compute.goodput.gpu_hours"), gpu_hours, 1e-9, "GPU time held");
    assert_rel(th_json_num(b, "budget.gpu_hours"), gpu_hours, 1e-15, "budget");
    assert_rel(th_json_num(p, "compute.model_flops.value"), th_json_num(b, "budget.flops.value"),
               1e-9, "the budget's FLOPs");
    assert_rel(th_json_num(p, "compute.tokens"), th_json_num(b, "budget.tokens"), 1e-15, "tokens");
    ck_assert_msg(
        strncmp(json_string_value(th_json_get(b, "budget.summary")), "With this budget: ", 18) == 0,
        "%s", json_string_value(th_json_get(b, "budget.summary")));
    free(req);
    json_decref(b);
    json_decref(p);
    ts_api_response_free(&rb);
    ts_api_response_free(&rp);
}

START_TEST(test_budget_round_trip)
{
    budget_round_trip("{\"gpus\":64,\"budget_days\":7,\"gpu_hour_usd\":2.5}", 64 * 7 * 24);
    budget_round_trip(
        "{\"gpus\":128,\"budget_usd\":1e6,\"gpu_hour_usd\":2,\"scaling_law\":\"besiroglu\"}", 5e5);
    budget_round_trip("{\"gpus\":1024,\"budget_days\":30,\"tokens_per_param\":1900}",
                      1024 * 30 * 24);
    budget_round_trip("{\"model\":\"llama3-8b\",\"gpus\":256,\"budget_gpu_hours\":200000}", 200000);
    budget_round_trip(
        "{\"model\":\"mixtral-8x7b\",\"gpus\":64,\"ep\":8,\"budget_days\":10,\"mfu\":0.3}",
        64 * 10 * 24);
}
END_TEST

START_TEST(test_content_type_params)
{
    static const char *const ok[] = {
        "application/json; charset=utf-8",
        "Application/JSON",
        " application/json ",
        "application/json;charset=UTF-8",
    };
    size_t i;

    for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ts_api_response r;
        json_t *j = send("POST", "/v1/memory", ok[i], "{\"params\":7e9}", 14, &r);
        ck_assert_msg(r.status == 200, "%s -> %u", ok[i], r.status);
        json_decref(j);
        ts_api_response_free(&r);
    }
}
END_TEST

/* The solved configuration, sent back to /v1/memory, fits; one step
 * further does not (the solver's definition in trainsize.h). */
START_TEST(test_fit_micro_batch)
{
    ts_api_response r, r2;
    json_t *j = post("/v1/fit",
                     "{\"model\":\"llama3-8b\",\"solve\":\"micro_batch\","
                     "\"zero\":3,\"gpus\":8,\"recompute\":\"full\"}",
                     &r);
    json_t *in, *m;
    char *body;
    int64_t mb;

    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(th_json_str(j, "solve"), "micro_batch");
    ck_assert(json_is_true(th_json_at(j, "found")));
    mb = (int64_t)th_json_num(j, "micro_batch");
    ck_assert(mb >= 1 && mb < 1024);
    ck_assert(th_json_num(j, "inputs.micro_batch") == (double)mb);
    ck_assert(th_json_num(j, "memory.total.value") <= th_json_num(j, "memory.hbm_bytes"));
    ck_assert(json_object_get(j, "reason") == NULL);

    in = json_deep_copy(th_json_at(j, "inputs"));
    body = json_dumps(in, JSON_COMPACT);
    m = post("/v1/memory", body, &r2);
    ck_assert_uint_eq(r2.status, 200);
    ck_assert(json_is_true(th_json_at(m, "memory.fits")));
    ck_assert(th_json_num(m, "memory.total.value") == th_json_num(j, "memory.total.value"));
    json_decref(m);
    ts_api_response_free(&r2);
    free(body);

    json_object_set_new(in, "micro_batch", json_integer(mb + 1));
    json_object_set_new(in, "global_batch", json_integer(0));
    body = json_dumps(in, JSON_COMPACT);
    m = post("/v1/memory", body, &r2);
    ck_assert_uint_eq(r2.status, 200);
    ck_assert(json_is_false(th_json_at(m, "memory.fits")));
    json_decref(m);
    ts_api_response_free(&r2);
    free(body);
    json_decref(in);
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

START_TEST(test_fit_gpus)
{
    ts_api_response r, r2;
    json_t *j = post("/v1/fit",
                     "{\"model\":\"llama3-70b\",\"solve\":\"gpus\","
                     "\"zero\":3,\"tp\":8,\"recompute\":\"full\"}",
                     &r);
    json_t *in, *m;
    char *body;
    int64_t dp, gpus;

    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(th_json_str(j, "solve"), "gpus");
    ck_assert(json_is_true(th_json_at(j, "found")));
    dp = (int64_t)th_json_num(j, "dp");
    gpus = (int64_t)th_json_num(j, "gpus");
    ck_assert_int_eq(gpus, dp * 8); /* gpus = dp * tp, tp = 8 */
    ck_assert(th_json_num(j, "inputs.dp") == (double)dp);
    ck_assert(th_json_num(j, "inputs.gpus") == (double)gpus);
    ck_assert(dp > 1); /* 70B does not fit one 8-way TP group at ZeRO-3 dp 1 */

    in = json_deep_copy(th_json_at(j, "inputs"));
    json_object_set_new(in, "dp", json_integer(dp - 1));
    json_object_set_new(in, "gpus", json_integer(0));
    json_object_set_new(in, "global_batch", json_integer(0));
    body = json_dumps(in, JSON_COMPACT);
    m = post("/v1/memory", body, &r2);
    ck_assert_uint_eq(r2.status, 200);
    ck_assert(json_is_false(th_json_at(m, "memory.fits")));
    json_decref(m);
    ts_api_response_free(&r2);
    free(body);
    json_decref(in);
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* Nothing fits: 200 with found false and a reason, not an error. */
/* A global batch the user fixed is kept (audit, issue 10): 12e9 params at
 * 18 B/param (Megatron's fp32 grads) need 216e9 / dp + 2 GiB <= 81559 MiB,
 * so dp 3 fits on memory alone, but 5 sequences do not split over 3 (nor
 * 4) ranks: the answer is dp 5, and it holds the user's batch. */
START_TEST(test_fit_gpus_keeps_batch)
{
    ts_api_response r;
    json_t *j =
        post("/v1/fit", "{\"params\":12e9,\"zero\":3,\"solve\":\"gpus\",\"global_batch\":5}", &r);

    ck_assert_uint_eq(r.status, 200);
    ck_assert(json_is_true(th_json_at(j, "found")));
    ck_assert_int_eq((int)th_json_num(j, "dp"), 5);
    ck_assert_int_eq((int)th_json_num(j, "inputs.global_batch"), 5);
    json_decref(j);
    ts_api_response_free(&r);
    /* Without a batch, memory alone decides: dp 3. */
    j = post("/v1/fit", "{\"params\":12e9,\"zero\":3,\"solve\":\"gpus\"}", &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert_int_eq((int)th_json_num(j, "dp"), 3);
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* POST /v1/search: ranked layouts, given layout members fixed, the
 * search-only members refused elsewhere and "solve" refused here. */
START_TEST(test_search)
{
    ts_api_response r;
    json_t *j, *res, *x;
    size_t i;

    j = post("/v1/search",
             "{\"model\":\"llama3-8b\",\"gpus\":16,\"global_batch\":64,"
             "\"tp\":2,\"limit\":3,\"objective\":\"time\"}",
             &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert(json_is_true(th_json_at(j, "found")));
    ck_assert(th_json_num(j, "counts.tried") >= th_json_num(j, "counts.fitting"));
    res = th_json_at(j, "results");
    ck_assert(json_array_size(res) >= 1 && json_array_size(res) <= 3);
    json_array_foreach(res, i, x)
    {
        ck_assert(th_json_num(x, "tp") == 2);
        ck_assert(json_is_true(th_json_at(x, "fits")));
        ck_assert(th_json_num(x, "tp") * th_json_num(x, "pp") * th_json_num(x, "cp") *
                      th_json_num(x, "dp") ==
                  16);
        ck_assert(th_json_num(x, "step_time") > 0);
        ck_assert_str_ne(th_json_str(x, "why"), "");
    }
    json_decref(j);
    ts_api_response_free(&r);

    /* Nothing fits: an answer, not an error. */
    j = post("/v1/search", "{\"model\":\"llama3-405b\",\"gpus\":8,\"global_batch\":8}", &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert(json_is_false(th_json_at(j, "found")));
    ck_assert_str_ne(th_json_str(j, "reason"), "");
    ck_assert_uint_eq(json_array_size(th_json_at(j, "results")), 0);
    json_decref(j);
    ts_api_response_free(&r);

    /* objective, solve and limit refused where they do not belong: cases
     * in tests/data/api_cases/semantic.json. */
}
END_TEST

/* compute: the step model's prediction unless mfu is sent. */
START_TEST(test_compute_step)
{
    ts_api_response r;
    json_t *j = post("/v1/compute",
                     "{\"model\":\"llama3-8b\",\"gpus\":8,\"mfu\":null,"
                     "\"gpu_hour_usd\":2}",
                     &r);

    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(th_json_str(j, "compute.mfu_source"), "predicted");
    ck_assert(th_json_num(j, "compute.mfu") == th_json_num(j, "compute.predicted_mfu"));
    ck_assert(th_json_num(j, "compute.step_time.value") > 0);
    ck_assert(th_json_num(j, "compute.step.compute") > 0);
    assert_rel(th_json_num(j, "compute.cost_usd.value"),
               2.0 * th_json_num(j, "compute.gpu_hours.value"), 1e-12, "cost");
    ck_assert(json_is_null(th_json_at(j, "inputs.mfu")));
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

START_TEST(test_fit_not_found)
{
    static const char *const bodies[] = {
        /* 405B at 16 B/param = 6.5 TB of state: not on 8 x 80 GB */
        "{\"model\":\"llama3-405b\",\"solve\":\"gpus\",\"zero\":0,\"max_gpus\":8}",
        "{\"model\":\"llama3-405b\",\"solve\":\"micro_batch\",\"gpus\":8}",
    };
    size_t i;

    for (i = 0; i < 2; i++) {
        ts_api_response r;
        json_t *j = post("/v1/fit", bodies[i], &r);

        ck_assert_uint_eq(r.status, 200);
        ck_assert(json_is_false(th_json_at(j, "found")));
        ck_assert_str_ne(th_json_str(j, "reason"), "");
        ck_assert(json_object_get(j, "memory") == NULL);
        ck_assert(json_object_get(j, "inputs") != NULL);
        json_decref(j);
        ts_api_response_free(&r);
    }
}
END_TEST

START_TEST(test_catalogues)
{
    ts_api_response r;
    json_t *j = send("GET", "/v1/presets", NULL, NULL, 0, &r);
    json_t *a, *p;
    size_t i;
    bool seen = false;

    ck_assert_uint_eq(r.status, 200);
    a = th_json_at(j, "presets");
    /* The presets first, then the catalogue's models no preset answers
     * for (tests/api/test_catalogue.c checks each of those). */
    ck_assert_uint_gt(json_array_size(a), ts_preset_count());
    json_array_foreach(a, i, p)
    {
        if (strcmp(th_json_str(p, "id"), "llama3-8b") == 0) {
            /* Llama 3 8B -> 8.03e9 (formulas.md; 3 digits: 0.1%) */
            assert_rel(th_json_num(p, "params"), 8.03e9, 1e-3, "Llama 3 8B");
            ck_assert_int_eq((int)th_json_num(p, "layers"), 32);
            seen = true;
        }
        ck_assert_str_eq(th_json_str(p, "kind"), i < ts_preset_count() ? "preset" : "catalogue");
        if (i < ts_preset_count())
            ck_assert(json_object_size(p) == 21); /* 20 members and their "human" map */
    }
    ck_assert(seen);
    json_decref(j);
    ts_api_response_free(&r);

    j = send("GET", "/v1/gpus?x=1", NULL, NULL, 0, &r); /* query ignored */
    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(r.route, "/v1/gpus");
    seen = false;
    json_array_foreach(th_json_at(j, "gpus"), i, p)
    {
        if (strcmp(th_json_str(p, "id"), "h100-sxm") == 0) {
            /* oracles.md: H100 SXM 989 BF16 / 1979 FP8 dense, 81559 MiB */
            ck_assert(th_json_num(p, "bf16_tflops") == 989.0);
            ck_assert(th_json_num(p, "fp8_tflops") == 1979.0);
            ck_assert(th_json_num(p, "hbm_bytes") == 81559.0 * 1048576);
            /* 81559 MiB / 1024 = 79.65 GiB */
            ck_assert_str_eq(th_json_str(p, "human.hbm_bytes"), "79.6 GiB");
            ck_assert_str_eq(th_json_str(p, "human.bf16_tflops"), "989 TFLOP/s");
            /* the names "gpu" also accepts, nvidia-smi's among them */
            ck_assert_str_eq(json_string_value(json_array_get(th_json_at(p, "aliases"), 0)),
                             "h100");
            seen = true;
        }
    }
    ck_assert(seen);
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* Every route of the table answers through ts_api_handle. */
START_TEST(test_route_table)
{
    const char *const *routes = ts_api_routes();
    size_t n = 0;

    for (; *routes != NULL; routes++, n++) {
        char method[8], path[32];
        ts_api_response r;
        json_t *j;
        bool fit;

        ck_assert_int_eq(sscanf(*routes, "%7s %31s", method, path), 2);
        fit = strcmp(path, "/v1/fit") == 0;
        if (strcmp(path, "/v1/search") == 0) /* a search needs a shape */
            j = send(method, path, J, "{\"model\":\"llama3-8b\"}", 21, &r);
        else if (strcmp(path, "/v1/budget") == 0) /* and a budget, a budget */
            j = send(method, path, J, "{\"budget_gpu_hours\":1000}", 25, &r);
        else
            j = send(method, path, J,
                     fit ? "{\"params\":7e9,\"solve\":\"gpus\"}" : "{\"params\":7e9}",
                     fit ? 29 : 14, &r);
        ck_assert_msg(r.status == 200, "%s -> %u %s", *routes, r.status, r.body);
        ck_assert_str_eq(r.route, path);
        json_decref(j);
        ts_api_response_free(&r);
    }
    ck_assert_uint_eq(
        n, 10); /* presets gpus memory compute checkpoint plan fit search import budget */
}
END_TEST

/* The import route is listed, and /v1/import answers only the inputs
 * (plus the count that checks them): no memory, compute or checkpoint.
 * (Its error cases, GET included, are in tests/data/api_cases/import.json.) */
START_TEST(test_import_route)
{
    const char *const *routes = ts_api_routes();
    bool listed = false;
    ts_api_response r;
    json_t *a;

    for (; *routes != NULL; routes++)
        listed |= strcmp(*routes, "POST /v1/import") == 0;
    ck_assert(listed);
    a = post("/v1/import", "{\"model\":\"llama3-8b\"}", &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert_uint_eq(json_object_size(a), 4);
    ck_assert_ptr_nonnull(json_object_get(a, "inputs"));
    ck_assert_ptr_nonnull(json_object_get(a, "inputs_source"));
    ck_assert_ptr_nonnull(json_object_get(a, "import_notes"));
    ck_assert_ptr_nonnull(json_object_get(a, "params"));
    ck_assert_str_eq(th_json_str(a, "inputs_source.layers"), "preset");
    json_decref(a);
    ts_api_response_free(&r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* problem+json and the formatter                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_problem_builder)
{
    ts_api_response r;
    json_t *j;

    memset(&r, 0, sizeof r);
    ck_assert_int_eq(ts_api_problem(&r, TS_PROB_REQUEST_TIMEOUT, "body not received in 10 s", NULL),
                     0);
    ck_assert_uint_eq(r.status, 408);
    ck_assert_str_eq(r.content_type, "application/problem+json");
    ck_assert_str_eq(r.route, "other");
    j = json_loads(r.body, 0, NULL);
    ck_assert_str_eq(th_json_str(j, "type"), PROBLEM_BASE "request-timeout");
    ck_assert_str_eq(th_json_str(j, "title"), "Request timeout");
    ck_assert_str_eq(th_json_str(j, "detail"), "body not received in 10 s");
    ck_assert_int_eq((int)th_json_num(j, "status"), 408);
    ck_assert(json_is_null(th_json_at(j, "field")));
    json_decref(j);
    ts_api_response_free(&r);
    ts_api_response_free(&r); /* idempotent */

    memset(&r, 0, sizeof r);
    ck_assert_int_eq(ts_api_problem(&r, TS_PROB_INVALID_VALUE, "d", "/tp"), 0);
    ck_assert_uint_eq(r.status, 400); /* the table's */
    j = json_loads(r.body, 0, NULL);
    ck_assert_str_eq(th_json_str(j, "field"), "/tp");
    json_decref(j);
    ts_api_response_free(&r);

    /* A value outside the enum (a bad cast) is our bug: a 500 that names
     * it.  Names outside the table no longer compile (api/ts_problems.def). */
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(ts_api_problem(&r, (ts_problem)TS_PROB_COUNT, "d", "/tp"), 0);
    ck_assert_uint_eq(r.status, 500);
    j = json_loads(r.body, 0, NULL);
    ck_assert_str_eq(th_json_str(j, "type"), PROBLEM_BASE "internal-error");
    {
        char want[64];

        snprintf(want, sizeof want, "problem type %d is not in the table", (int)TS_PROB_COUNT);
        ck_assert_str_eq(th_json_str(j, "detail"), want);
    }
    ck_assert(json_is_null(th_json_at(j, "field")));
    json_decref(j);
    ts_api_response_free(&r);
    ts_api_response_free(NULL);
}
END_TEST

/* A problem's detail and field may quote client bytes; the body must stay
 * UTF-8 (RFC 8259 8.1).  Each byte that does not start a well-formed
 * sequence (RFC 3629 4) becomes U+FFFD, everything else is kept. */
START_TEST(test_problem_utf8)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        { "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
          "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf" }, /* valid, kept */
        { "a\x80"
          "b",
          "a\xef\xbf\xbd"
          "b" },                                                    /* lone continuation */
        { "a\xc3", "a\xef\xbf\xbd" },                               /* truncated at the end */
        { "a\xe2\x82z", "a\xef\xbf\xbd\xef\xbf\xbdz" },             /* truncated inside */
        { "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },                 /* overlong "/" */
        { "\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* overlong, 3 bytes */
        { "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate U+D800 */
        { "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* > U+10FFFF */
        { "\xff\"q\"", "\xef\xbf\xbd\"q\"" }, /* 0xFF, then an escape */
    };
    ts_api_response r;
    json_t *j;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&r, 0, sizeof r);
        ck_assert_int_eq(ts_api_problem(&r, TS_PROB_INVALID_VALUE, cases[i].in, cases[i].in), 0);
        j = json_loads(r.body, 0, NULL);
        ck_assert_msg(j != NULL, "case %zu: not JSON: %s", i, r.body);
        ck_assert_str_eq(th_json_str(j, "detail"), cases[i].want);
        ck_assert_str_eq(th_json_str(j, "field"), cases[i].want);
        json_decref(j);
        ts_api_response_free(&r);
    }
}
END_TEST

/* The body as jansson wrote it before problems went through the one
 * writer (json_dumps, JSON_COMPACT, members in this order). */
static char *jansson_problem(const char *slug, const char *detail, const char *field)
{
    const ts_api_problem_type *t = NULL;
    char type[160];
    json_t *o = json_object();
    char *body;

    for (size_t i = 0; ts_api_problem_type_at(i) != NULL; i++)
        if (strcmp(ts_api_problem_type_at(i)->slug, slug) == 0)
            t = ts_api_problem_type_at(i);
    ck_assert_ptr_nonnull(t);
    snprintf(type, sizeof type, PROBLEM_BASE "%s", slug);
    ck_assert_ptr_nonnull(o);
    json_object_set_new(o, "type", json_string(type));
    json_object_set_new(o, "title", json_string(t->title));
    json_object_set_new(o, "status", json_integer((json_int_t)t->status));
    json_object_set_new(o, "detail", json_string(detail));
    json_object_set_new(o, "field",
                        field != NULL && field[0] != '\0' ? json_string(field) : json_null());
    body = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    ck_assert_ptr_nonnull(body);
    return body;
}

/* Same bytes as jansson wrote for every type and for valid UTF-8 with the
 * escapes both write alike (\" \\ \n \r \t; '/' and 0x7f as they are).
 * The other control bytes jansson wrote as \b, \f or upper-case \u001F,
 * the writer as \u0008, \u000c, \u001f: the bytes differ, the parsed
 * document a client sees does not. */
START_TEST(test_problem_as_jansson)
{
    static const char *const texts[] = {
        "d",
        "unknown field \"tpp\" (did you mean \"tp\"?)",
        "back\\slash, a/b, tab\there, \r\n, del \x7f",
        "\xc3\xa9 \xe2\x82\xac \xef\xbf\xbd \xe2\x80\xa8 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
        "",
    };
    const ts_api_problem_type *t;
    ts_api_response r;
    char *old;
    char ctl[64];
    size_t k = 0;

    for (size_t i = 0; (t = ts_api_problem_type_at(i)) != NULL; i++)
        for (size_t x = 0; x < sizeof texts / sizeof texts[0]; x++) {
            const char *field = x % 2 == 0 ? NULL : "/a~1b/0";

            memset(&r, 0, sizeof r);
            ck_assert_int_eq(ts_api_problem(&r, (ts_problem)i, texts[x], field), 0);
            old = jansson_problem(t->slug, texts[x], field);
            ck_assert_str_eq(r.body, old);
            ck_assert_uint_eq(r.body_len, strlen(old));
            free(old);
            ts_api_response_free(&r);
        }

    for (int c = 1; c < 0x20; c++)
        ctl[k++] = (char)c;
    memcpy(ctl + k, "\"\\/\x7f", 5);
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(ts_api_problem(&r, TS_PROB_INVALID_VALUE, ctl, ctl), 0);
    old = jansson_problem("invalid-value", ctl, ctl);
    {
        json_t *a = json_loads(r.body, 0, NULL), *b = json_loads(old, 0, NULL);

        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert(json_equal(a, b));
        ck_assert_str_eq(th_json_str(a, "detail"), ctl);
        json_decref(a);
        json_decref(b);
    }
    free(old);
    ts_api_response_free(&r);
}
END_TEST

/* One title per problem type, from the table: callers name the type
 * alone (the server once said "Not Found" where the api said "Not
 * found"). */
START_TEST(test_problem_titles)
{
    const ts_api_problem_type *t;
    ts_api_response r;
    json_t *j;
    size_t i, k;

    for (i = 0; (t = ts_api_problem_type_at(i)) != NULL; i++) {
        ck_assert(t->status >= 400 && t->status <= 599);
        ck_assert_str_eq(ts_api_problem_title(t->slug), t->title);
        for (k = 0; k < i; k++)
            ck_assert_str_ne(ts_api_problem_type_at(k)->slug, t->slug);
    }
    ck_assert_uint_ge(i, 20);
    ck_assert_ptr_null(ts_api_problem_title("no-such-type"));
    ck_assert_ptr_null(ts_api_problem_title(NULL));

    memset(&r, 0, sizeof r);
    ck_assert_int_eq(ts_api_problem(&r, TS_PROB_NOT_FOUND, "d", NULL), 0);
    j = json_loads(r.body, 0, NULL);
    ck_assert_str_eq(th_json_str(j, "title"), "Not found");
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

/* JSON Schema's "integer" is any number with a zero fraction (draft
 * 2020-12 validation 6.1.1): 2.0 and 2e0 are integers, and an integer
 * literal past 2^63 is still a number (JSON.stringify(1e19)). */
START_TEST(test_integral_numbers)
{
    ts_api_response r;
    json_t *j;

    j = post("/v1/memory",
             "{\"params\":7e9,\"gpus\":8.0,\"tp\":2e0,\"zero\":1.0,"
             "\"global_batch\":6.4e1}",
             &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert(th_json_num(j, "inputs.gpus") == 8);
    ck_assert(th_json_num(j, "inputs.tp") == 2);
    ck_assert(th_json_num(j, "inputs.dp") == 4);
    ck_assert(th_json_num(j, "inputs.zero") == 1);
    ck_assert(th_json_num(j, "inputs.global_batch") == 64);
    /* written back as integers (CONTRACT.md: integral values < 2^53) */
    ck_assert_ptr_nonnull(strstr(r.body, "\"tp\":2,"));
    json_decref(j);
    ts_api_response_free(&r);

    j = post("/v1/compute", "{\"params\":7e9,\"tokens\":10000000000000000000}", &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert(th_json_num(j, "inputs.tokens") == 1e19);
    json_decref(j);
    ts_api_response_free(&r);
}
END_TEST

START_TEST(test_human_format)
{
    char b[64];

    /* 12.3 GiB = 12.3 * 2^30 B (CONTRACT.md's example) */
    ts_fmt_human(b, sizeof b, 12.3 * 1073741824.0, TS_FMT_BYTES, "B");
    ck_assert_str_eq(b, "12.3 GiB");
    /* 1.12e12 B / 2^40 = 1.0186 TiB */
    ts_fmt_human(b, sizeof b, 1.12e12, TS_FMT_BYTES, "B");
    ck_assert_str_eq(b, "1.02 TiB");
    ts_fmt_human(b, sizeof b, 512, TS_FMT_BYTES, "B");
    ck_assert_str_eq(b, "512 B");
    ts_fmt_human(b, sizeof b, -0.0, TS_FMT_BYTES, "B");
    ck_assert_str_eq(b, "0 B");
    /* negative headroom keeps its sign: -2 * 2^30 */
    ts_fmt_human(b, sizeof b, -2147483648.0, TS_FMT_BYTES, "B");
    ck_assert_str_eq(b, "-2.00 GiB");
    /* CONTRACT.md: FLOPs -> "3.6e25 FLOP" */
    ts_fmt_human(b, sizeof b, 3.6e25, TS_FMT_FLOPS, "FLOP");
    ck_assert_str_eq(b, "3.6e25 FLOP");
    ts_fmt_human(b, sizeof b, 3.142e23, TS_FMT_FLOPS, "FLOP");
    ck_assert_str_eq(b, "3.14e23 FLOP");
    /* CONTRACT.md: seconds -> "54.2 days" */
    ts_fmt_human(b, sizeof b, 54.2 * 86400.0, TS_FMT_SECONDS, "s");
    ck_assert_str_eq(b, "54.2 days");
    ts_fmt_human(b, sizeof b, 90.0, TS_FMT_SECONDS, "s");
    ck_assert_str_eq(b, "90.0 s");
    ts_fmt_human(b, sizeof b, 3.0 * 3600.0, TS_FMT_SECONDS, "s");
    ck_assert_str_eq(b, "3.00 h");
    ts_fmt_human(b, sizeof b, 0.25, TS_FMT_SECONDS, "s");
    ck_assert_str_eq(b, "250 ms");
    /* Llama 3.1 405B: 30.84M H100 GPU-hours (oracles.md) */
    ts_fmt_human(b, sizeof b, 30.84e6, TS_FMT_COUNT, "GPU-hours");
    ck_assert_str_eq(b, "30.8M GPU-hours");
    ts_fmt_human(b, sizeof b, 0.0125, TS_FMT_FRACTION, "");
    ck_assert_str_eq(b, "1.25 %");
    /* counts: short-scale suffix, then the unit if any */
    ts_fmt_human(b, sizeof b, 8030261248.0, TS_FMT_COUNT, "");
    ck_assert_str_eq(b, "8.03B");
    ts_fmt_human(b, sizeof b, 1011057.9, TS_FMT_COUNT, "USD");
    ck_assert_str_eq(b, "1.01M USD");
    ts_fmt_human(b, sizeof b, 62900.0, TS_FMT_COUNT, "tokens/s");
    ck_assert_str_eq(b, "62.9k tokens/s");
    /* SI prefixes on the unit: H100 dense bf16 989.4e12 FLOP/s, 3.35e12 B/s */
    ts_fmt_human(b, sizeof b, 989.4e12, TS_FMT_SI, "FLOP/s");
    ck_assert_str_eq(b, "989 TFLOP/s");
    ts_fmt_human(b, sizeof b, 3.35e12, TS_FMT_SI, "B/s");
    ck_assert_str_eq(b, "3.35 TB/s");
    ts_fmt_human(b, sizeof b, 750e6, TS_FMT_SI, "B/s");
    ck_assert_str_eq(b, "750 MB/s");
    ts_fmt_human(b, sizeof b, 2.5e30, TS_FMT_SI, "B");
    ck_assert_str_eq(b, "2.5e6 YB");
    /* whole numbers: rounded, no -0 */
    ts_fmt_human(b, sizeof b, 8.0, TS_FMT_INTEGER, "");
    ck_assert_str_eq(b, "8");
    ts_fmt_human(b, sizeof b, -0.4, TS_FMT_INTEGER, "copies");
    ck_assert_str_eq(b, "0 copies");
    /* small numbers as they are: bytes per parameter 16, 2.5 (no "16.0") */
    ts_fmt_human(b, sizeof b, 16.0, TS_FMT_PLAIN, "B");
    ck_assert_str_eq(b, "16 B");
    ts_fmt_human(b, sizeof b, 2.5, TS_FMT_PLAIN, "B");
    ck_assert_str_eq(b, "2.5 B");
    ts_fmt_human(b, sizeof b, NAN, TS_FMT_BYTES, "B");
    ck_assert_str_eq(b, "n/a");
    /* a tiny buffer is still terminated */
    ts_fmt_human(b, 4, 1e12, TS_FMT_BYTES, "B");
    ck_assert_uint_eq(strlen(b), 3);
}
END_TEST

/* ts_status -> HTTP: 400 for bad input, 422 for TS_ERANGE (a result
 * that cannot be represented; unreachable with in-range inputs, so the
 * mapping is tested directly). */
START_TEST(test_core_status_mapping)
{
    static const struct {
        ts_status st;
        unsigned http;
        const char *slug;
    } map[] = {
        { TS_EINVAL, 400, "invalid-value" },
        { TS_EINCOMPAT, 400, "incompatible-options" },
        { TS_ENOTFOUND, 400, "unknown-id" },
        { TS_ERANGE, 422, "result-out-of-range" },
    };
    size_t i;

    for (i = 0; i < sizeof map / sizeof map[0]; i++) {
        ts_error ce;
        ts_api_err e;
        ts_api_response r;
        json_t *j;

        memset(&r, 0, sizeof r);
        ts_error_set(&ce, map[i].st, "tokens", "reason %d", (int)i);
        ts_api_err_from_core(&e, &ce);
        ck_assert_uint_eq(e.status, map[i].http);
        ck_assert_str_eq(e.slug, map[i].slug);
        ck_assert_str_eq(e.field, "/tokens");
        ck_assert_int_eq(ts_api_err_respond(&e, &r), 0);
        ck_assert_uint_eq(r.status, map[i].http);
        j = json_loads(r.body, 0, NULL);
        ck_assert_str_eq(th_json_str(j, "field"), "/tokens");
        ck_assert_str_eq(th_json_str(j, "detail"), i == 0   ? "reason 0"
                                                   : i == 1 ? "reason 1"
                                                   : i == 2 ? "reason 2"
                                                            : "reason 3");
        json_decref(j);
        ts_api_response_free(&r);
    }
}
END_TEST

/* The response writer: exact text for the tricky values. */
START_TEST(test_writer_text)
{
    ts_jw w;
    size_t len = 0;
    char *out;

    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_jw_num(&w, "a", 1.5);
    ts_jw_num(&w, "b", 0.4);       /* shortest: 15 digits suffice */
    ts_jw_num(&w, "c", 0.1 + 0.2); /* needs 17: 0.30000000000000004 */
    ts_jw_num(&w, "d", 1e15);      /* integral < 2^53: an integer */
    ts_jw_num(&w, "e", 1e300);
    ts_jw_num(&w, "f", -0.0); /* never "-0" */
    ts_jw_num(&w, "g", -2.5e-7);
    ts_jw_int(&w, "h", INT64_MIN);
    ts_jw_str(&w, "i", "q\"\\\n\x01\xc3\xa9");
    ts_jw_open(&w, "j", '[');
    ts_jw_int(&w, NULL, 1);
    ts_jw_bool(&w, NULL, true);
    ts_jw_null(&w, NULL);
    ts_jw_open(&w, NULL, '{');
    ts_jw_close(&w, '}');
    ts_jw_close(&w, ']');
    ts_jw_str(&w, "k", NULL);
    ts_jw_strn(&w, "l", "abcdef", 3);
    ts_jw_close(&w, '}');
    ck_assert_ptr_null(w.nonfinite);
    out = ts_jw_finish(&w, &len);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(
        out,
        "{\"a\":1.5,\"b\":0.4,\"c\":0.30000000000000004,\"d\":1000000000000000,"
        "\"e\":1e+300,\"f\":0,\"g\":-2.5e-07,\"h\":-9223372036854775808,"
        "\"i\":\"q\\\"\\\\\\n\\u0001\xc3\xa9\",\"j\":[1,true,null,{}],\"k\":null,\"l\":\"abc\"}");
    ck_assert_uint_eq(len, strlen(out));
    free(out);
}
END_TEST

/* Every finite double survives writer -> strtod bit-identically. */
START_TEST(test_writer_round_trip)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    int i, checked = 0;

    for (i = 0; i < 20000; i++) {
        double d, back;
        ts_jw w;
        size_t len;
        char *out;

        /* xorshift64: a reproducible spread over all exponents */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(&d, &x, sizeof d);
        if (!isfinite(d))
            continue;
        ts_jw_init(&w);
        ts_jw_num(&w, NULL, d);
        out = ts_jw_finish(&w, &len);
        ck_assert_ptr_nonnull(out);
        back = strtod(out, NULL);
        ck_assert_msg(back == d || (d == 0 && back == 0), "%.17g written as %s", d, out);
        free(out);
        checked++;
    }
    ck_assert_int_gt(checked, 19000);
}
END_TEST

/* The writer refuses NaN/Inf and names the first one. */
START_TEST(test_nonfinite_refused)
{
    ts_jw w;
    ts_memory m;

    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_jw_num(&w, "a", 1.5);
    ts_jw_num(&w, "b", NAN);
    ts_jw_num(&w, "c", INFINITY);
    ck_assert_ptr_nonnull(w.nonfinite);
    ck_assert_str_eq(w.nonfinite, "b");
    ts_jw_discard(&w);

    /* A term with an infinite value names the term. */
    memset(&m, 0, sizeof m);
    m.activations.value = INFINITY;
    m.total.value = NAN;
    ts_jw_init(&w);
    ts_json_memory(&w, NULL, &m);
    ck_assert_str_eq(w.nonfinite, "activations");
    ts_jw_discard(&w);
}
END_TEST

/* Every enum value the api lists is one the core parses, and back. */
START_TEST(test_enum_lists_match_core)
{
    size_t i;

    for (i = 0; i < ts_api_request_field_count(); i++) {
        const ts_api_field *f = ts_api_request_field(i);
        const char *const *v;
        size_t n = 0;
        size_t want = 0;

        if (f->values == NULL)
            continue;
        for (v = f->values; *v != NULL; v++, n++) {
            ts_precision p;
            ts_optimizer o;
            ts_recompute rc;

            if (strcmp(f->name, "frozen_precision") == 0) {
                ck_assert_str_eq(ts_quant_name((ts_quant)n), *v);
                want = TS_QUANT_COUNT;
            } else if (strcmp(f->name, "fsdp_impl") == 0) {
                ck_assert_str_eq(ts_fsdp_impl_name((ts_fsdp_impl)n), *v);
                want = TS_FSDP_COUNT;
            } else if (strcmp(f->name, "loss_impl") == 0) {
                ck_assert_str_eq(ts_loss_impl_name((ts_loss_impl)n), *v);
                want = TS_LOSS_COUNT;
            } else if (strcmp(f->name, "recompute_impl") == 0) {
                ck_assert_str_eq(ts_recompute_impl_name((ts_recompute_impl)n), *v);
                want = TS_RIMPL_COUNT;
            } else if (strcmp(f->name, "adapter_precision") == 0) {
                ck_assert_str_eq(ts_adapter_precision_name((ts_adapter_precision)n), *v);
                want = TS_ADAPTER_COUNT;
            } else if (strcmp(f->name, "lora_impl") == 0) {
                ck_assert_str_eq(ts_lora_impl_name((ts_lora_impl)n), *v);
                want = TS_LORA_IMPL_COUNT;
            } else if (strcmp(f->name, "layer_impl") == 0) {
                ck_assert_str_eq(ts_layer_impl_name((ts_layer_impl)n), *v);
                want = TS_LAYER_COUNT;
            } else if (strcmp(f->name, "nvlink_topology") == 0) {
                ck_assert_str_eq(ts_link_topology_name((ts_link_topology)n), *v);
                want = TS_TOPO_COUNT;
            } else if (strcmp(f->name, "optimizer_precision") == 0) {
                ck_assert_int_eq(ts_precision_parse(*v, &p), TS_OK);
                want = 2; /* fp32 and bf16 only */
            } else if (strcmp(f->name, "framework") == 0) {
                ck_assert_str_eq(ts_framework_name((ts_framework)n), *v);
                want = TS_FW_COUNT;
            } else if (strcmp(f->name, "attention") == 0) {
                ck_assert_str_eq(ts_attention_name((ts_attention)n), *v);
                want = TS_ATTN_COUNT;
            } else if (strcmp(f->name, "norm") == 0) {
                ck_assert_str_eq(ts_norm_name((ts_norm)n), *v);
                want = TS_NORM_COUNT;
            } else if (strcmp(f->name, "pp_schedule") == 0) {
                ck_assert_str_eq(ts_pp_schedule_name((ts_pp_schedule)n), *v);
                want = TS_PP_COUNT;
            } else if (strstr(f->name, "precision") != NULL) {
                ck_assert_int_eq(ts_precision_parse(*v, &p), TS_OK);
                ck_assert_str_eq(ts_precision_name(p), *v);
                want = TS_PREC_COUNT;
            } else if (strcmp(f->name, "optimizer") == 0) {
                ck_assert_int_eq(ts_optimizer_parse(*v, &o), TS_OK);
                ck_assert_str_eq(ts_optimizer_name(o), *v);
                want = TS_OPT_COUNT;
            } else if (strcmp(f->name, "recompute") == 0) {
                ck_assert_int_eq(ts_recompute_parse(*v, &rc), TS_OK);
                ck_assert_str_eq(ts_recompute_name(rc), *v);
                want = TS_RECOMPUTE_COUNT;
            } else if (strcmp(f->name, "objective") == 0) {
                want = TS_SEARCH_OBJECTIVE_COUNT;
            } else if (strcmp(f->name, "scaling_law") == 0) {
                ck_assert_str_eq(ts_law_get((ts_scaling_law)n)->name, *v);
                want = TS_LAW_COUNT;
            } else {
                ck_assert_str_eq(f->name, "solve");
                want = 2;
            }
        }
        ck_assert_uint_eq(n, want);
    }
    ck_assert_ptr_null(ts_api_request_field(ts_api_request_field_count()));
}
END_TEST

static Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("errors");

    tcase_add_test(tc, test_suggestions);
    tcase_add_test(tc, test_odd_inputs);
    tcase_add_test(tc, test_content_type_params);
    suite_add_tcase(s, tc);

    tc = tcase_create("estimates");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_preset_overrides);
    tcase_add_test(tc, test_memory_70b_oracle);
    tcase_add_test(tc, test_precision_follows);
    tcase_add_test(tc, test_gpu_overrides);
    tcase_add_test(tc, test_compute_gpt3);
    tcase_add_test(tc, test_checkpoint);
    tcase_add_test(tc, test_plan);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_budget_round_trip);
    tcase_add_test(tc, test_fit_micro_batch);
    tcase_add_test(tc, test_fit_gpus);
    tcase_add_test(tc, test_fit_gpus_keeps_batch);
    tcase_add_test(tc, test_fit_not_found);
    tcase_add_test(tc, test_search);
    tcase_add_test(tc, test_compute_step);
    tcase_add_test(tc, test_catalogues);
    tcase_add_test(tc, test_route_table);
    tcase_add_test(tc, test_import_route);
    suite_add_tcase(s, tc);

    tc = tcase_create("output");
    tcase_add_test(tc, test_problem_builder);
    tcase_add_test(tc, test_problem_utf8);
    tcase_add_test(tc, test_problem_as_jansson);
    tcase_add_test(tc, test_problem_titles);
    tcase_add_test(tc, test_integral_numbers);
    tcase_add_test(tc, test_human_format);
    tcase_add_test(tc, test_core_status_mapping);
    tcase_add_test(tc, test_writer_text);
    tcase_add_test(tc, test_writer_round_trip);
    tcase_add_test(tc, test_nonfinite_refused);
    tcase_add_test(tc, test_enum_lists_match_core);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(api_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
