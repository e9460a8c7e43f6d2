/*
 * ts_megatron_int.h - the Megatron-LM importer's own types and the
 * functions its files share (mega_*); the interface is ts_import_mega()
 * in ts_import.h.
 *   ts_megatron.c         the entry point, layout and precision flags
 *   ts_megatron_flags.c   the flags table, the scan of a command's flags
 *   ts_megatron_shape.c   the model shape, vocabulary, --moe-layer-freq
 *   ts_megatron_launch.c  the launcher's GPU count
 */
#ifndef TS_MEGATRON_INT_H
#define TS_MEGATRON_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ts_import.h"
#include "ts_shell.h"

#define MEGA_PTR "/megatron_args"

typedef enum mega_kind { MK_INT = 0, MK_FLAG, MK_STR, MK_NUM } mega_kind;

typedef enum mega_id {
    M_NUM_LAYERS = 0,
    M_HIDDEN,
    M_HEADS,
    M_GQA,
    M_QUERY_GROUPS,
    M_FFN,
    M_KV_CHANNELS,
    M_SWIGLU,
    M_UNTIE,
    M_VOCAB,
    M_PADDED_VOCAB,
    M_VOCAB_DIV,
    M_SEQ,
    M_MAX_POS,
    M_POS_TYPE,
    M_ROPE_LEGACY,
    M_NORMALIZATION,
    M_NO_BIAS,
    M_QKV_BIAS,
    M_QK_LN,
    M_MICRO,
    M_GLOBAL,
    M_TP,
    M_PP,
    M_VPP_LAYERS,
    M_VPP_STAGES,
    M_CP,
    M_EP,
    M_EXPERTS,
    M_TOPK,
    M_MOE_FFN,
    M_SHARED_FFN,
    M_SP,
    M_DIST_OPT,
    M_RC_GRAN,
    M_RC_METHOD,
    M_RC_LAYERS,
    M_RC_ACT,
    M_BF16,
    M_FP16,
    M_FP8,
    M_FIRST,
    M_LAST,
    M_OPTIMIZER,
    M_HDROP,
    M_ADROP,
    M_FLASH,
    M_TRAIN_ITERS,
    M_TRAIN_SAMPLES,
    M_TOK_TYPE,
    M_TOK_MODEL,
    M_VOCAB_FILE,
    M_MERGE_FILE,
    M_MFSDP,
    M_TFSDP,
    M_SHARDING,
    M_MLA,
    M_Q_LORA,
    M_KV_LORA,
    M_QK_HEAD,
    M_QK_POS,
    M_V_HEAD,
    M_MOE_FREQ,
    M_EXPERT_BIAS,
    M_MTP,
    M_CKPT_ACT,
    M_CKPT_METHOD,
    M_QUICK_GEGLU,
    M_OVERLAP_P2P,
    M_NO_OVERLAP_P2P,
    M_TP_OVERLAP,
    M_OVERLAP_GRAD,
    M_OVERLAP_PARAM,
    M_DDP_IMPL,
    M_WINDOW,
    M_WINDOW_SKIP,
    /* Megatron-DeepSpeed's (deepspeedai/Megatron-DeepSpeed megatron/
     * arguments.py, DeepSpeed's add_config_arguments). */
    M_DEEPSPEED,
    M_DS_CONFIG,
    M_ZERO_STAGE,
    M_DS_ACT_CKPT,
    M_NO_PP,
    M_FLASH_V1,
    M_FLASH_V2,
    M_FLASH_TRITON,
    M_FLASH_BUILDER,
    M_CPU_OFFLOAD,
    M_FP8_PARAM,
    /* Mamba's flags, read only to refuse (ts_megatron_shape.c): one run,
     * M_HYBRID to M_MAMBA_STATE, which mega_mamba() tests. */
    M_HYBRID,
    M_HYBRID_OLD,
    M_HYBRID_ATTN,
    M_HYBRID_MLP,
    M_MAMBA_STATE,
    M_COUNT
} mega_id;

/* A flag that says Mamba layers, whatever its value. */
static inline bool mega_mamba(mega_id id)
{
    return id >= M_HYBRID && id <= M_MAMBA_STATE;
}

/* An integer flag's value is range-checked as it is read, before any
 * arithmetic: against the request member it lands on (range, the same
 * bounds a request gets), TS_FI_COUNT for [0, MEGA_INT_MAX], and at
 * least lo where Megatron itself refuses less. */
typedef struct mega_flag {
    const char *name; /* without the leading "--" */
    mega_kind kind;
    ts_field_id range; /* MK_INT only */
    int64_t lo;        /* MK_INT only */
} mega_flag;

#define MEGA_INT_MAX (INT64_C(1) << 40)

typedef struct mega_val {
    bool set;
    int64_t i;
    double d;
    const char *s;
    unsigned line;                /* the flag's line */
    const ts_shell_word *unknown; /* a value not known (the vocabulary's flags) */
} mega_val;

extern const mega_flag mega_flags[M_COUNT];

/* ts_megatron_flags.c */
/* A 400: --flag takes want, got got; -1. */
int mega_bad_value(ts_api_err *err, const char *flag, const char *want, const char *got);
/* Walk the training command's flags into vals[]; unknown and no-effect
 * flags into notes. */
int mega_scan(const ts_import *im, const ts_shell_cmd *c, mega_val *vals, ts_api_notes *notes,
              ts_api_err *err);

/* ts_megatron.c: a request member from a flag, named in its origin */
int mega_set_i(ts_import *im, ts_field_id fi, int64_t v, mega_id id, ts_api_err *err);
/* ts_megatron_pattern.c: a list expression ("[0]*3+[1]*58") of --flag
 * into *out, *n entries of 0 or 1 (malloc'd; the caller frees), which
 * must number layers when layers > 0; 0, or -1 with a 400. */
int mega_pattern(const char *p, const char *flag, int64_t layers, unsigned char **out, size_t *n,
                 ts_api_err *err);
int mega_set_b(ts_import *im, ts_field_id fi, bool v, const char *why, ts_api_err *err);
int mega_set_s(ts_import *im, ts_field_id fi, const char *v, const char *why, ts_api_err *err);

/* ts_megatron_shape.c: the model's shape; hf: an hf_config gave it. */
int mega_emit_shape(ts_import *im, const mega_val *v, bool hf, ts_api_notes *notes,
                    ts_api_err *err);

/* ts_megatron_launch.c: the GPU count the launcher starts; a note either way. */
int mega_emit_gpus(ts_import *im, const ts_shell_cmd *c, ts_api_notes *notes, ts_api_err *err);

#endif /* TS_MEGATRON_INT_H */
