/*
 * ts_terms.h - the output-terms table: every figure an answer reports
 * with a human-readable text.
 *
 * One row per figure: the object it is a member of, its JSON key, where
 * its text goes, how that text is written (ts_fmt.h kind and unit), a
 * label and a one-line doc.  ts_json_out.c writes every such member
 * through the table (key, value, "human"); tools/ts_gen_fields.c writes
 * every copy of it: the CLI's rows (build dir), web/terms.js for the
 * dashboard, docs/terms.md, and the "human" schemas of api/openapi.json.
 * Indexed by TS_T_* like the request registry is by TS_FI_*.
 *
 * Three shapes (api/CONTRACT.md, "Response objects"):
 *   TS_TERM_OBJECT   the member is a term {"value", "human", "formula",
 *                    "assumptions"}; its formula comes from the core (it
 *                    depends on the inputs), so the row has none;
 *   TS_TERM_MAP      the member is a number, its text is in the object's
 *                    "human" map under the same key;
 *   TS_TERM_SIBLING  the member is a number, its text in the member named
 *                    human_key beside it ("total_human", a phase's "human").
 */
#ifndef TS_TERMS_H
#define TS_TERMS_H

#include "ts_fmt.h"

/* The objects that hold terms, where they sit in an answer. */
typedef enum ts_term_obj {
    TS_TO_PARAMS = 0,
    TS_TO_MEMORY,
    TS_TO_BPP,
    TS_TO_STAGE,
    TS_TO_PHASE,
    TS_TO_COMPUTE,
    TS_TO_STEP,
    TS_TO_CHECKPOINT,
    TS_TO_TIER,
    TS_TO_SEARCH,
    TS_TO_PRESET,
    TS_TO_GPU,
    TS_TO_GOODPUT,
    TS_TO_ENERGY,
    TS_TO_BUDGET,
    TS_TO_COUNT
} ts_term_obj;

typedef struct ts_term_objdef {
    const char *path;   /* in an answer: "memory", "memory.stages[]", "results[]" */
    const char *schema; /* openapi.json schema of its "human" map; NULL: it has none */
    const char *title;  /* section heading: "Memory per GPU" */
} ts_term_objdef;

extern const ts_term_objdef ts_term_objs[TS_TO_COUNT];

typedef enum ts_term_shape { TS_TERM_OBJECT = 0, TS_TERM_MAP, TS_TERM_SIBLING } ts_term_shape;

/* Whether the CLI's table prints the row. */
typedef enum ts_term_cli {
    TS_TERM_CLI_NO = 0,
    TS_TERM_CLI_ROW,    /* always */
    TS_TERM_CLI_NONZERO /* when the value is not 0 (host RAM without offload) */
} ts_term_cli;

typedef struct ts_term_def {
    ts_term_obj obj;
    const char *key;    /* JSON member name */
    unsigned char klen; /* its length (the writer copies it unmeasured) */
    ts_term_shape shape;
    const char *human_key; /* TS_TERM_SIBLING: the member with the text */
    unsigned char hklen;
    ts_fmt_kind fmt;
    const char *unit;    /* of "value": "B", "s", "FLOP", "GPU-hours", "" */
    const char *label;   /* "Gradients": the dashboard's and the CLI's row name */
    const char *doc;     /* one line: what it is, what it assumes */
    const char *formula; /* numbers: how it is computed; terms: NULL (the answer's) */
    ts_term_cli cli;
} ts_term_def;

typedef enum ts_term_id {
    TS_T_PARAMS_TOTAL = 0,
    TS_T_PARAMS_ACTIVE,

    TS_T_MEM_WEIGHTS,
    TS_T_MEM_GRADS,
    TS_T_MEM_MASTER,
    TS_T_MEM_OPTIMIZER,
    TS_T_MEM_ACTIVATIONS,
    TS_T_MEM_BUFFERS,
    TS_T_MEM_OVERHEAD,
    TS_T_MEM_TOTAL,
    TS_T_MEM_HBM_BYTES,
    TS_T_MEM_HEADROOM_BYTES,
    TS_T_MEM_HOST_BYTES_PER_GPU,
    TS_T_MEM_HOST_BYTES_PER_NODE,
    TS_T_MEM_ALLOCATED_PEAK,
    TS_T_MEM_RESERVED_PEAK,
    TS_T_MEM_RUNTIME,
    TS_T_MEM_PARAMS_PER_GPU,
    TS_T_MEM_MODEL_STATE_BYTES,
    TS_T_MEM_INFERENCE_BYTES,
    TS_T_MEM_ACTIVATIONS_SEED000,
    TS_T_MEM_DEEPSPEED_GPU,

    TS_T_BPP_TOTAL,
    TS_T_BPP_WEIGHTS,
    TS_T_BPP_GRADS,
    TS_T_BPP_MASTER,
    TS_T_BPP_OPTIMIZER,

    TS_T_STAGE_WEIGHTS,
    TS_T_STAGE_GRADS,
    TS_T_STAGE_MASTER,
    TS_T_STAGE_OPTIMIZER,
    TS_T_STAGE_ACTIVATIONS,
    TS_T_STAGE_BUFFERS,
    TS_T_STAGE_OVERHEAD,
    TS_T_STAGE_ALLOCATED_PEAK,
    TS_T_STAGE_RESERVED_PEAK,
    TS_T_STAGE_TOTAL,
    TS_T_STAGE_HEADROOM,

    TS_T_PHASE_BYTES,

    TS_T_CMP_MODEL_FLOPS,
    TS_T_CMP_MODEL_FLOPS_ATTN,
    TS_T_CMP_HARDWARE_FLOPS,
    TS_T_CMP_GPU_HOURS,
    TS_T_CMP_GPU_YEARS,
    TS_T_CMP_WALL_SECONDS,
    TS_T_CMP_MFU,
    TS_T_CMP_HFU,
    TS_T_CMP_PREDICTED_MFU,
    TS_T_CMP_STEP_TIME,
    TS_T_CMP_STEPS,
    TS_T_CMP_STEP_SECONDS,
    TS_T_CMP_TOKENS,
    TS_T_CMP_TOKENS_PER_SECOND,
    TS_T_CMP_TOKENS_PER_GPU_SECOND,
    TS_T_CMP_PEAK_FLOPS,
    TS_T_CMP_ACHIEVED_FLOPS_PER_GPU,
    TS_T_CMP_COST_USD,

    TS_T_STEP_COMPUTE,
    TS_T_STEP_RECOMPUTE,
    TS_T_STEP_TP_COMM,
    TS_T_STEP_PP_BUBBLE,
    TS_T_STEP_PP_P2P,
    TS_T_STEP_DP_COMM,
    TS_T_STEP_CP_COMM,
    TS_T_STEP_EP_COMM,
    TS_T_STEP_OPTIMIZER,
    TS_T_STEP_OFFLOAD,
    TS_T_STEP_EXPOSED_COMM,
    TS_T_STEP_OVERLAPPED_COMM,
    TS_T_STEP_GEMM_EFFICIENCY,
    TS_T_STEP_UNDERFILL,

    TS_T_CK_FULL_BYTES,
    TS_T_CK_WEIGHTS_BYTES,
    TS_T_CK_SHARD_BYTES_PER_GPU,
    TS_T_CK_WRITERS,
    TS_T_CK_BYTES_PER_NODE,
    TS_T_CK_JOB_MTBF_S,
    TS_T_CK_BLOCKING_WRITE_S,
    TS_T_CK_YOUNG_INTERVAL_S,
    TS_T_CK_DALY_INTERVAL_S,
    TS_T_CK_WASTE_FRACTION,
    TS_T_CK_WASTE_FRACTION_SCHEDULE,

    TS_T_TIER_INTERVAL_S,
    TS_T_TIER_WRITE_S,
    TS_T_TIER_RESTORE_S,
    TS_T_TIER_BANDWIDTH_PER_WRITER,
    TS_T_TIER_KEEP,
    TS_T_TIER_STORAGE_BYTES,
    TS_T_TIER_OVERHEAD_FRACTION,

    TS_T_SR_STEP_TIME,
    TS_T_SR_PREDICTED_MFU,
    TS_T_SR_TOKENS_PER_GPU_SECOND,
    TS_T_SR_GPU_SECONDS_PER_STEP,
    TS_T_SR_COST_USD_PER_STEP,
    TS_T_SR_WALL_SECONDS,
    TS_T_SR_GPU_HOURS,
    TS_T_SR_COST_USD,
    TS_T_SR_USEFUL_FRACTION,
    TS_T_SR_GOODPUT_WALL_SECONDS,
    TS_T_SR_GOODPUT_COST_USD,
    TS_T_SR_MEMORY_TOTAL,
    TS_T_SR_HEADROOM_BYTES,

    TS_T_PRESET_PARAMS,
    TS_T_PRESET_ACTIVE_PARAMS,
    TS_T_PRESET_PUBLISHED_PARAMS,
    TS_T_PRESET_TRAIN_TOKENS,

    TS_T_GPU_HBM_BYTES,
    TS_T_GPU_HBM_BW,
    TS_T_GPU_BF16_TFLOPS,
    TS_T_GPU_FP8_TFLOPS,
    TS_T_GPU_FP32_TFLOPS,
    TS_T_GPU_BOARD_WATTS,

    TS_T_GP_WALL_SECONDS,
    TS_T_GP_USEFUL_FRACTION,
    TS_T_GP_INTERRUPTIONS,
    TS_T_GP_CHECKPOINT_S,
    TS_T_GP_LOST_S,
    TS_T_GP_LOST_PER_INTERRUPTION_S,
    TS_T_GP_GPU_HOURS,
    TS_T_GP_COST_USD,
    TS_T_GP_JOB_MTBF_S,
    TS_T_GP_INTERVAL_S,
    TS_T_GP_WRITE_S,
    TS_T_GP_RELAUNCH_S,
    TS_T_GP_RESTORE_S,
    TS_T_GP_RESTART_S,
    TS_T_GP_FAILURE_FREE_S,
    TS_T_GP_DALY_INTERVAL_S,
    TS_T_GP_USEFUL_FRACTION_DALY,

    TS_T_EN_ENERGY_WH,
    TS_T_EN_CO2E_T,
    TS_T_EN_GPU_HOURS,
    TS_T_EN_GPU_WATTS,
    TS_T_EN_HOST_WATTS,
    TS_T_EN_PUE,
    TS_T_EN_GRID_KG_PER_KWH,
    TS_T_EN_FACILITY_W,

    TS_T_BG_FLOPS,
    TS_T_BG_GPU_HOURS,
    TS_T_BG_DAYS,
    TS_T_BG_USD,
    TS_T_BG_PEAK_FLOPS,
    TS_T_BG_MFU,
    TS_T_BG_USEFUL_FRACTION,
    TS_T_BG_OPTIMAL_PARAMS,
    TS_T_BG_OPTIMAL_TOKENS,
    TS_T_BG_OPTIMAL_LOSS,
    TS_T_BG_PARAMS,
    TS_T_BG_TOKENS,
    TS_T_BG_TOKENS_PER_PARAM,
    TS_T_BG_LOSS,

    TS_T_COUNT
} ts_term_id;

extern const ts_term_def ts_terms[TS_T_COUNT];

/* The human text of row id for value v, as the answer carries it. */
size_t ts_term_human(char *buf, size_t size, ts_term_id id, double v);

/* The row of (obj, key), or NULL. */
const ts_term_def *ts_term_find(ts_term_obj obj, const char *key);

/* The object whose path is path ("compute.step"), or TS_TO_COUNT. */
ts_term_obj ts_term_obj_find(const char *path);

#endif /* TS_TERMS_H */
