/*
 * trainsize.h - public interface of the trainsize estimation core.
 *
 * The core is pure C11: no I/O, no JSON, no allocation, no global state
 * that holds request data.  A ts_run (what the user wants to train, on what)
 * goes in, result structs with every term come out.  Every entry point
 * validates its input and returns a ts_status plus a caller-owned ts_error
 * naming the offending field (jansson's json_error_t is the model).
 *
 * Units: bytes, FLOPs, FLOP/s, seconds, tokens, all as double.  Decimal
 * units (GB = 1e9 bytes, GB/s = 1e9 bytes/s) on input unless the name says
 * gib.  Field names in ts_error.field are the public (JSON) input names.
 */
#ifndef TRAINSIZE_H
#define TRAINSIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

typedef enum ts_status {
    TS_OK = 0,
    TS_EINVAL,    /* a value is missing, zero, negative, non-finite, out of range */
    TS_ERANGE,    /* a result would overflow / be non-finite */
    TS_EINCOMPAT, /* degrees or options that cannot go together (heads % tp) */
    TS_ENOTFOUND, /* unknown preset or GPU id */
    TS_ENOFIT     /* solver: no configuration within the limits fits */
} ts_status;

#define TS_ERROR_FIELD_LEN 48
#define TS_ERROR_TEXT_LEN  200

typedef struct ts_error {
    ts_status code;
    char field[TS_ERROR_FIELD_LEN]; /* public input name, e.g. "tp"; "" if none */
    char text[TS_ERROR_TEXT_LEN];   /* human-readable reason */
} ts_error;

/* Static, never NULL. */
const char *ts_strerror(ts_status code);

/* Fill *err (if non-NULL) and return code.  printf-style text. */
ts_status ts_error_set(ts_error *err, ts_status code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ------------------------------------------------------------------ */
/* Work budget (core/ts_budget.c)                                      */
/* ------------------------------------------------------------------ */

/* One request's allowance of work, shared by every loop it drives (the
 * layout search, the fit solvers, the sweep).  The core keeps no clock:
 * it counts units of work, each loop charging before it works, so the
 * count is the same on every machine and in every run.  A unit is about
 * 1 ns of one core of the reference machine (the 2-core VM of
 * docs/performance.md), as measured inside the loops that spend it: a
 * loop iteration with its 64-bit modulo takes about 5 ns, a memory
 * estimate about 250 ns plus 60 ns per stage it evaluates, a step
 * estimate about 300 ns (TS_COST_* below).  When a charge would pass the
 * limit it is refused, exhausted is set and the caller stops: its answer
 * is the best found so far (truncated) or, where nothing partial makes
 * sense, TS_EINVAL naming the field that made the request too large.
 * Caller-owned, on the stack: no global state. */
typedef struct ts_budget {
    uint64_t used;  /* units charged so far */
    uint64_t limit; /* units allowed */
    bool exhausted; /* a charge was refused: the work stopped early */
} ts_budget;

/* 3e8 units: about 0.3 s of one core (0.25 to 0.45 s measured on the
 * reference machine as it was shared), under the 1 s a request may hold
 * a worker with room for a busy machine; the largest realistic searches
 * (Mixtral 8x7B over max_gpus 2048: 5.2e7) are far inside it. */
#define TS_BUDGET_DEFAULT UINT64_C(300000000)
#define TS_COST_ITER      5u   /* one loop iteration (a candidate considered or skipped) */
#define TS_COST_MEMORY    250u /* a memory estimate of a changed layout, plus ... */
#define TS_COST_STAGE     60u  /* ... this per pipeline stage it evaluates (ts_memory_work) */
#define TS_COST_STEP      300u /* a step-time estimate (O(1) in pp: core/ts_step.c) */

/* used = 0, exhausted = false, limit = limit or TS_BUDGET_DEFAULT when 0. */
void ts_budget_init(ts_budget *b, uint64_t limit);

/* ------------------------------------------------------------------ */
/* Enumerations and their public names                                 */
/* ------------------------------------------------------------------ */

typedef enum ts_precision {
    TS_PREC_FP32 = 0,
    TS_PREC_BF16,
    TS_PREC_FP16,
    TS_PREC_FP8,
    TS_PREC_COUNT
} ts_precision;

typedef enum ts_optimizer {
    TS_OPT_NONE = 0, /* inference: weights only */
    TS_OPT_ADAM,
    TS_OPT_ADAMW,
    TS_OPT_ADAM8BIT,       /* bitsandbytes 8-bit Adam: m, v 1 byte each */
    TS_OPT_SGD,            /* plain SGD, no state */
    TS_OPT_SGD_MOMENTUM,   /* one fp32 buffer */
    TS_OPT_ADAFACTOR,      /* factored second moment, no momentum */
    TS_OPT_LION,           /* one fp32 momentum buffer */
    TS_OPT_PAGED_ADAM8BIT, /* bitsandbytes paged_adamw_8bit: large states in CUDA managed memory */
    TS_OPT_COUNT
} ts_optimizer;

typedef enum ts_recompute {
    TS_RECOMPUTE_NONE = 0,
    TS_RECOMPUTE_SELECTIVE,
    TS_RECOMPUTE_FULL,
    TS_RECOMPUTE_SELECTIVE_OP, /* torchtitan's per-op SAC (selective_ac_option "op") */
    TS_RECOMPUTE_COUNT
} ts_recompute;

/* Training framework: decides which buffers it holds (issue 10; see
 * docs/formulas.md "What the framework holds"). */
typedef enum ts_framework {
    TS_FW_MEGATRON = 0, /* Megatron-LM / NeMo: distributed optimizer, fp32 main grads */
    TS_FW_FSDP,         /* PyTorch FSDP / FSDP2 (torchtitan, torchtune, HF) */
    TS_FW_DEEPSPEED,    /* DeepSpeed ZeRO */
    TS_FW_HF, /* Hugging Face transformers + PEFT (accelerate; FSDP's buffers with zero >= 2) */
    TS_FW_COUNT
} ts_framework;

typedef enum ts_attention {
    TS_ATTN_FLASH = 0, /* FlashAttention, cuDNN, FlexAttention: no s^2 scores, a window's band */
    TS_ATTN_EAGER,     /* scores, softmax (and dropout mask) materialised */
    TS_ATTN_TRITON,    /* FlashAttention written in Triton (llm-foundry attn_impl: triton) */
    TS_ATTN_SDPA,      /* torch SDPA as transformers calls it: flash, but a window is a mask */
    TS_ATTN_COUNT
} ts_attention;

typedef enum ts_pp_schedule {
    TS_PP_1F1B = 0,
    TS_PP_INTERLEAVED, /* Megatron interleaved 1F1B with vpp virtual stages */
    TS_PP_COUNT
} ts_pp_schedule;

/* LoRA target projections (PEFT LoraConfig.target_modules), a bit set
 * over the matrices of a layer (core/ts_lora.c parses the names). */
#define TS_LORA_Q    1u   /* q_proj */
#define TS_LORA_K    2u   /* k_proj */
#define TS_LORA_V    4u   /* v_proj */
#define TS_LORA_O    8u   /* o_proj */
#define TS_LORA_GATE 16u  /* gate_proj */
#define TS_LORA_UP   32u  /* up_proj (fc1 of a two-matrix MLP) */
#define TS_LORA_DOWN 64u  /* down_proj (fc2) */
#define TS_LORA_QKV  128u /* query_key_value: one fused q, k, v matrix (GPT-NeoX, Falcon, BLOOM) */
#define TS_LORA_ALL_LINEAR \
    127u /* PEFT "all-linear": every linear of the layers, not the output head */
#define TS_LORA_PEFT_DEFAULT \
    (TS_LORA_Q | TS_LORA_V) /* PEFT's default for llama, mistral, qwen2, gemma */

/* Modules PEFT trains in full beside the adapters (LoraConfig
 * modules_to_save): a trainable copy of each next to the frozen original. */
#define TS_LORA_SAVE_EMBED 1u /* embed_tokens: the input embedding */
#define TS_LORA_SAVE_HEAD  2u /* lm_head: the output layer (tied or not) */
#define TS_LORA_SAVE_ALL   3u

/* Storage of frozen base weights under LoRA / QLoRA. */
typedef enum ts_quant {
    TS_QUANT_BF16 = 0, /* 2 bytes */
    TS_QUANT_INT8,     /* 1 byte (LLM.int8) */
    TS_QUANT_NF4,      /* 4-bit NormalFloat + double-quantised scales (QLoRA) */
    TS_QUANT_FP8,      /* 1 byte (Transformer Engine fp8_model_init / fp8_params) */
    TS_QUANT_GPTQ,     /* 4-bit GPTQ, group 128, through auto-gptq's torch dequantisation */
    TS_QUANT_COUNT
} ts_quant;

typedef enum ts_norm { TS_NORM_RMSNORM = 0, TS_NORM_LAYERNORM, TS_NORM_COUNT } ts_norm;

/* How full recompute reruns a checkpointed block (ts_step_layer.c). */
typedef enum ts_recompute_impl {
    TS_RIMPL_DEFAULT = 0, /* the framework's: fsdp non_reentrant, the others reentrant */
    TS_RIMPL_REENTRANT,   /* the whole forward again */
    TS_RIMPL_EARLY_STOP,  /* PyTorch >= 2.1 non-reentrant: stops after the last saved tensor */
    TS_RIMPL_COUNT
} ts_recompute_impl;

/* The LoRA adapters' dtype beside a 16-bit model (PEFT's
 * autocast_adapter_dtype). */
typedef enum ts_adapter_precision {
    TS_ADAPTER_DEFAULT = 0, /* the framework's: hf fp32 (PEFT's autocast), the others the model's */
    TS_ADAPTER_FP32,        /* fp32 adapters, their inputs cast to fp32 (PEFT's default) */
    TS_ADAPTER_MODEL, /* the model's own dtype (autocast_adapter_dtype=False, model.bfloat16()) */
    TS_ADAPTER_COUNT
} ts_adapter_precision;

/* Public names ("bf16", "adamw", "selective") and parsers.  The parsers
 * return TS_OK or TS_EINVAL (unknown name). */
const char *ts_precision_name(ts_precision p);
const char *ts_optimizer_name(ts_optimizer o);
const char *ts_recompute_name(ts_recompute r);
ts_status ts_precision_parse(const char *s, ts_precision *out);
ts_status ts_optimizer_parse(const char *s, ts_optimizer *out);
ts_status ts_recompute_parse(const char *s, ts_recompute *out);
double ts_precision_bytes(ts_precision p); /* 4, 2, 2, 1 */
const char *ts_framework_name(ts_framework f);
const char *ts_attention_name(ts_attention a);
const char *ts_pp_schedule_name(ts_pp_schedule s);
const char *ts_quant_name(ts_quant q);
const char *ts_norm_name(ts_norm n);
const char *ts_recompute_impl_name(ts_recompute_impl i);
const char *ts_adapter_precision_name(ts_adapter_precision a);

/* How a LoRA adapter's forward is written: where its scale and its
 * dropout sit (lora_impl). */
typedef enum ts_lora_impl {
    TS_LORA_IMPL_PEFT = 0,  /* B(A(dropout(x))) * scale: PEFT, torchtune, Megatron/NeMo */
    TS_LORA_IMPL_AUTOMODEL, /* dropout(B(A(x) * scale)): NeMo AutoModel's LinearLoRA */
    TS_LORA_IMPL_COUNT
} ts_lora_impl;
const char *ts_lora_impl_name(ts_lora_impl i);

/* How a layer's elementwise work is written (layer_impl): eager, one
 * PyTorch kernel per op as transformers' and torchtitan's modules run
 * without torch.compile, or fused (Megatron / Transformer Engine kernels,
 * torch.compile'd layers). */
typedef enum ts_layer_impl {
    TS_LAYER_DEFAULT = 0, /* eager under hf and fsdp, fused under megatron and deepspeed */
    TS_LAYER_EAGER,
    TS_LAYER_FUSED,
    TS_LAYER_COUNT
} ts_layer_impl;
const char *ts_layer_impl_name(ts_layer_impl i);

/* How a node's scale-up links reach its GPUs (nvlink_topology): through
 * a switch, every GPU reaches any peer at its full bandwidth (NVSwitch:
 * DGX/HGX A100, H100, B200, DGX-2); as a mesh, each GPU's links go
 * point to point, split evenly over the node's other GPUs (4-GPU V100
 * SXM2 boards; AMD's 8-GPU Infinity Fabric platforms). */
typedef enum ts_link_topology {
    TS_TOPO_DEFAULT = 0, /* the GPU's catalogue entry (ts_gpu.mesh) */
    TS_TOPO_SWITCH,
    TS_TOPO_MESH,
    TS_TOPO_COUNT
} ts_link_topology;
const char *ts_link_topology_name(ts_link_topology t);

/* Which FSDP runs the gradient path (framework fsdp). */
typedef enum ts_fsdp_impl {
    TS_FSDP_PER_PARAM = 0, /* FSDP2 fully_shard: per-parameter grads, NCCL averages */
    TS_FSDP_FLAT_PARAM,    /* FSDP1 FullyShardedDataParallel: flat parameter, pre-divide */
    TS_FSDP_COUNT
} ts_fsdp_impl;
const char *ts_fsdp_impl_name(ts_fsdp_impl i);

/* Which cross-entropy kernel runs the loss (ts_mem_act.c, ts_step_kernel.c). */
typedef enum ts_loss_impl {
    TS_LOSS_DEFAULT = 0,    /* the framework's: megatron vocab_parallel, the others torch */
    TS_LOSS_TORCH,          /* F.cross_entropy under autocast: fp32 log_softmax, fp32 grads */
    TS_LOSS_VOCAB_PARALLEL, /* Megatron's fused vocab-parallel: one fp32 copy, in place */
    TS_LOSS_FUSED,          /* flash-attn's cross_entropy: bf16 logits kept, bf16 dlogits */
    TS_LOSS_COUNT
} ts_loss_impl;
const char *ts_loss_impl_name(ts_loss_impl i);
double ts_quant_bytes(ts_quant q); /* 2, 1, 0.5 + scales */

/* LoRA targets (core/ts_lora.c).  parse: "all-linear", "peft-default" or
 * names joined by commas (q_proj, k_proj, v_proj, o_proj, gate_proj,
 * up_proj, down_proj, query_key_value), spaces around them ignored; 0
 * and the set, or -1 with the offset and length of the first item that
 * is not one (or of the whole text when query_key_value is mixed with
 * q/k/v_proj).  text: the canonical form ("all-linear", else the names
 * in the order above), NUL-terminated, cut to n; its full length. */
int ts_lora_targets_parse(const char *s, size_t len, unsigned *out, size_t *bad_at,
                          size_t *bad_len);
size_t ts_lora_targets_text(unsigned set, char *buf, size_t n);
/* lora_modules_to_save: "" or "none", or embed_tokens, lm_head (or
 * another family's name for them: embed_in, embed_out, word_embeddings,
 * wte) joined by commas, as ts_lora_targets_parse reads its names; text:
 * embed_tokens, lm_head in that order ("" for none). */
int ts_lora_save_parse(const char *s, size_t len, unsigned *out, size_t *bad_at, size_t *bad_len);
size_t ts_lora_save_text(unsigned set, char *buf, size_t n);
/* Adapter parameters of one layer at the model's full width (no tp
 * slice): A (rank x in) and B (out x rank) on each matrix in targets.
 * experts: how many experts' MLP adapters to count, 1 for a dense layer
 * (the memory model counts all of a MoE layer's, the step model one
 * GPU's experts / ep). */
struct ts_model;
double ts_lora_layer_params(const struct ts_model *m, unsigned targets, int64_t rank,
                            double experts);
/* Parameters of the full copies set names (vocab x hidden each, no tp
 * slice): one count for the memory and the step models. */
double ts_lora_save_params(const struct ts_model *m, unsigned set);

/* ------------------------------------------------------------------ */
/* GPU catalogue                                                       */
/* ------------------------------------------------------------------ */

typedef struct ts_gpu {
    char id[24];        /* "h100-sxm" */
    char name[48];      /* "NVIDIA H100 SXM5 80GB" */
    double fp32_flops;  /* dense TF32 tensor-core peak, FLOP/s */
    double bf16_flops;  /* dense BF16/FP16 peak, FLOP/s */
    double fp8_flops;   /* dense FP8 peak, FLOP/s; 0 = not supported */
    double hbm_bytes;   /* decimal: 80 GB = 80e9 */
    double hbm_bw;      /* bytes/s */
    const char *source; /* where the figures come from */
    /* Step-time model (issue 11; core/ts_step.c).  Zero = unknown, then
     * the step model uses the documented fallbacks. */
    double nvlink_bw;              /* scale-up link per GPU, bidirectional, bytes/s */
    double net_bw;                 /* scale-out NIC per GPU, one direction, bytes/s */
    double pcie_bw;                /* host link per GPU, one direction, bytes/s */
    double mamf;                   /* measured max achievable BF16 matmul / dense peak */
    double mamf_m, mamf_n, mamf_k; /* the GEMM shape that measured it */
    double sustain; /* MSMF / MAMF: power-saturated over boost-burst matmul rate; 0 = none known */
    double sustain_w; /* the power limit sustain was measured at, W; 0 = this GPU's own */
    double attn_eff;  /* fused attention kernel fwd+bwd / dense peak */
    double mamf_fp8;  /* measured max achievable FP8 matmul / dense FP8 peak; 0 = use mamf */
    bool settle_b200; /* no MSMF: B200's settled rates at this board_watts (ts_gpu_settled) */
    double
        stream_eff; /* measured streaming (copy) bandwidth / hbm_bw; 0 = the step model's default */
    const char *net_source;
    /* Scale-up links point to point, split evenly over the node's other
     * GPUs (no switch); false: a switch gives any peer the full figure. */
    bool mesh;
    int sm; /* NVIDIA compute capability x 10 (90 = Hopper); 0 = not NVIDIA */
    /* Energy (issue 28; core/ts_energy.c): the vendor's maximum board
     * power (TDP / TBP), what the model cards multiply GPU-hours by. */
    double board_watts;
    const char *power_source;
} ts_gpu;

/* Names as people type them (ts_name.c): keys fold case and drop
 * punctuation ("H100 SXM" == "h100-sxm"); the suggester keeps the closest
 * candidate for a "did you mean" hint. */
#define TS_NAME_KEY_MAX 96
size_t ts_name_key(const char *s, char *out, size_t n); /* 0 if empty or too long */
int ts_name_same(const char *a, const char *b);
unsigned ts_name_distance(const char *a, const char *b); /* OSA edit distance */
typedef struct ts_name_suggest {
    char key[TS_NAME_KEY_MAX];
    const char *best;
    unsigned dist;
    size_t prefix; /* the best's common prefix with key: breaks distance ties */
} ts_name_suggest;
void ts_name_suggest_init(ts_name_suggest *s, const char *typed);
void ts_name_suggest_try(ts_name_suggest *s, const char *candidate);
const char *ts_name_suggest_best(const ts_name_suggest *s); /* NULL: none close */

size_t ts_gpu_count(void);
const ts_gpu *ts_gpu_at(size_t i);             /* NULL past the end */
const ts_gpu *ts_gpu_find(const char *id);     /* id or alias, any case; NULL if unknown */
const char *ts_gpu_suggest(const char *typed); /* closest id or alias, or NULL */
/* The i-th alias of GPU id (NULL past the end): the names people type. */
const char *ts_gpu_alias(const char *id, size_t i);
/* Dense peak for a compute precision; 0 if the GPU lacks it. */
/* Whether the GPU has BF16 tensor cores: NVIDIA from Ampere (compute
 * capability 8.0) on; V100 and T4 run bf16 matmuls emulated.  AMD parts
 * and custom GPUs (sm 0) count as having them. */
bool ts_gpu_bf16(const ts_gpu *g);
/* Whether FP8 GEMMs take the TN layout only, so Transformer Engine keeps
 * an FP8 transpose beside each FP8 weight: Hopper and earlier, and
 * consumer Blackwell (sm 12x); data-centre Blackwell takes any layout
 * (NVIDIA/TransformerEngine pytorch/csrc/quantizer.cpp@ad3f651f
 * nvte_is_non_tn_fp8_gemm_supported).  AMD parts (sm 0) are taken so. */
bool ts_gpu_fp8_tn_only(const ts_gpu *g);
double ts_gpu_peak(const ts_gpu *g, ts_precision compute);
/* A Blackwell part's matmul rate at its power-limited clock where none is
 * measured (settle_b200): B200's measured settled rate at the clock its
 * board_watts buys, FLOP/s; 0 for every other GPU. */
double ts_gpu_settled(const ts_gpu *g, bool fp8);
/* MSMF / MAMF at this GPU's own power limit: sustain, and where it was
 * measured at a higher limit (sustain_w) the clock the lower one buys
 * (the cube-root rule of ts_gpu_settled); 0 when none is known. */
double ts_gpu_sustain(const ts_gpu *g);

/* ------------------------------------------------------------------ */
/* Model                                                               */
/* ------------------------------------------------------------------ */

/* Either a plain parameter count (params > 0, layers == 0) or a shape
 * (layers > 0; params is then ignored on input and computed).  Activation
 * and attention-aware FLOP terms need a shape. */
typedef struct ts_model {
    double params; /* plain total count */
    int64_t layers;
    int64_t hidden;
    int64_t heads;
    int64_t kv_heads; /* GQA; 0 = heads (MHA) */
    int64_t ffn;      /* FFN inner width; 0 = 4*hidden */
    int64_t vocab;
    int64_t experts;      /* MoE experts per layer; 0 or 1 = dense */
    int64_t top_k;        /* experts active per token; 0 = 1 when MoE */
    bool gated;           /* SwiGLU: 3 FFN matrices instead of 2 */
    bool tied_embeddings; /* output head shares the input embedding */

    /* Finer shape detail, all optional (0 / false = the Llama-style
     * default above), so that imported configs (Hugging Face config.json,
     * Megatron-LM arguments) count exactly what the released checkpoints
     * hold.  See core/ts_model.c for the formula. */
    int64_t head_dim;        /* per-head width; 0 = hidden / heads (Gemma: 256) */
    bool qkv_bias;           /* biases on q, k, v (Qwen2, GPT-2, GPT-NeoX) */
    bool out_bias;           /* bias on the attention output projection */
    bool mlp_bias;           /* biases on the MLP matrices */
    bool norm_bias;          /* LayerNorm with a bias (2 vectors per norm), not RMSNorm */
    int64_t norms_per_layer; /* 0 = 2 (pre-attention, pre-MLP); Gemma 2/3: 4 */
    bool qk_norm;            /* RMSNorm on q and k per head (Qwen3, Gemma 3) */
    int64_t pos_embeddings;  /* learned absolute positions (GPT-2 n_positions); 0 = rotary */
    int64_t moe_ffn;         /* inner width of one expert; 0 = ffn */
    int64_t shared_experts;  /* always-active experts of width moe_ffn (DeepSeek) */
    int64_t
        dense_layers; /* first layers with a dense FFN of width ffn (DeepSeek first_k_dense_replace) */
    bool router_bias;        /* per-expert router bias (DeepSeek-V3 e_score_correction_bias) */
    bool shared_expert_gate; /* h-weight gate on the shared experts per MoE layer (Qwen2-MoE) */
    bool embed_norm; /* a norm after the token embedding (BLOOM word_embeddings_layernorm) */
    /* Multi-head latent attention (DeepSeek-V2/V3); on when kv_lora_rank > 0. */
    int64_t q_lora_rank; /* 0 = full-rank q projection */
    int64_t kv_lora_rank;
    int64_t qk_nope_dim; /* per-head q/k width without rotary part */
    int64_t qk_rope_dim; /* per-head rotary part (shared k_pe) */
    int64_t v_head_dim;  /* 0 = qk_nope_dim */
    /* Sliding-window attention (Mistral 7B v0.1, Gemma 2/3, gpt-oss): a
     * query attends to its last sliding_window tokens, itself included. */
    int64_t sliding_window; /* 0 = full causal attention on every layer */
    int64_t sliding_layers; /* layers with the window; 0 = every layer */
} ts_model;

typedef struct ts_params {
    double total;           /* all parameters */
    double active;          /* per token (MoE: top_k experts) */
    double embedding;       /* input embedding vocab*hidden */
    double embed_norm;      /* the norm after the embedding (0 without embed_norm) */
    double output_head;     /* 0 when tied */
    double per_layer_attn;  /* q,k,v,o (+ biases, q/k norms, MLA down/up projections) */
    double per_layer_mlp;   /* one MoE layer: all experts + shared + router; dense: the MLP */
    double per_layer_norm;  /* the layer's RMSNorm/LayerNorm vectors */
    double dense_layer_mlp; /* MLP of one of the first dense_layers (0 when none) */
    int64_t dense_layers;   /* layers whose MLP is dense_layer_mlp, the first ones */
    double expert;          /* total parameters inside experts (0 dense) */
    double dense;           /* total - expert */
    bool from_shape;
    const char *formula; /* static */
} ts_params;

ts_status ts_model_params(const ts_model *m, ts_params *out, ts_error *err);
/* Keys a query attends to in a causal sequence of seq tokens, the mean
 * over positions and layers: seq / 2 without a sliding window (for a
 * model ts_model_params() has accepted). */
double ts_model_attn_span(const ts_model *m, double seq);
/* Layers with a sliding window no wider than seq: sliding_layers, 0
 * meaning every layer; 0 without a window or with a wider one. */
double ts_model_window_layers(const ts_model *m, double seq);

/* ------------------------------------------------------------------ */
/* Presets                                                             */
/* ------------------------------------------------------------------ */

typedef struct ts_preset {
    const char *id;   /* "llama3-70b" */
    const char *name; /* "Llama 3 70B" */
    ts_model model;
    double published_params; /* the number the authors give */
    double train_tokens;     /* published pre-training tokens; 0 unknown */
    int64_t seq;             /* training context length */
    const char *source;      /* citation */
} ts_preset;

size_t ts_preset_count(void);
const ts_preset *ts_preset_at(size_t i);
const ts_preset *ts_preset_find(const char *id);       /* id or Hub id, any case */
const char *ts_preset_suggest(const char *typed);      /* closest id, or NULL */
const char *ts_preset_alias(const char *id, size_t i); /* i-th Hub id, NULL past the end */

/* ------------------------------------------------------------------ */
/* The run description                                                 */
/* ------------------------------------------------------------------ */

/* Checkpoint storage and schedule.  Bandwidths in GB/s (1e9 B/s). */
typedef struct ts_ckpt_cfg {
    double writer_gbps;         /* one GPU rank's own write path, default 2 */
    double nvme_gbps;           /* node-local NVMe per node, default 6 */
    double shared_gbps;         /* shared file system aggregate, default 100 */
    double object_gbps;         /* object store aggregate, default 20 */
    double nvme_interval_min;   /* default 5 */
    double shared_interval_min; /* default 30 */
    double object_interval_min; /* default 180 */
    int64_t nvme_keep;          /* retained copies, default 2 */
    int64_t shared_keep;        /* default 3 */
    int64_t object_keep;        /* default 5 */
    bool include_grads;         /* default false */
    bool parallel_save;         /* every DP rank writes 1/DP of replicated state (default true) */
    double gpu_mtbf_hours;      /* per-GPU mean time between failures, default 50000 */
    double job_mtbf_hours;      /* whole-job MTBF; 0 = gpu_mtbf_hours / gpus */
    double relaunch_min;        /* a failed job back to training, before the restore: default 10 */
} ts_ckpt_cfg;

typedef struct ts_run {
    ts_model model;
    char preset[64]; /* "" when none; a preset id or a catalogue Hub id; informational */

    /* precision and optimizer */
    ts_precision precision; /* weights (and activations) */
    ts_precision grad_precision;
    ts_precision compute_precision; /* selects the GPU peak */
    bool master_weights;            /* fp32 master copy */
    ts_optimizer optimizer;
    double trainable_fraction;        /* (0,1]; LoRA-style frozen rest costs weights only */
    ts_precision optimizer_precision; /* fp32 (default) or bf16 (pure-bf16 AdamW) states */
    int64_t lora_rank;                /* 0 = no adapters; else LoRA on the lora_targets matrices */
    unsigned lora_targets;            /* TS_LORA_* bits; default TS_LORA_ALL_LINEAR */
    unsigned lora_save;               /* TS_LORA_SAVE_* bits: modules trained in full; default 0 */
    ts_quant frozen_precision;        /* storage of the frozen base under LoRA */
    double lora_dropout;              /* adapters' input dropout, [0, 1); needs lora_rank > 0 */
    ts_adapter_precision adapter_precision; /* default: the framework's; needs lora_rank > 0 */
    ts_lora_impl lora_impl;                 /* where the adapter's scale and dropout sit */
    ts_layer_impl layer_impl;               /* eager or fused elementwise kernels (step) */

    /* the work */
    int64_t seq;
    int64_t micro_batch;
    int64_t global_batch; /* sequences per step; 0 = ts_batch_default() */
    double tokens;        /* training tokens; 0 = preset's, else 20 * params */

    /* parallel layout; gpus = dp * tp * pp * cp */
    int64_t gpus; /* 0 = derived from dp */
    int64_t dp;   /* 0 = gpus / (tp * pp * cp) */
    int64_t tp, pp, cp, ep;
    int zero; /* 0..3, FSDP = 3 */
    bool sequence_parallel;
    ts_recompute recompute;
    ts_recompute_impl recompute_impl;  /* default: the framework's */
    ts_fsdp_impl fsdp_impl;            /* framework fsdp: FSDP2 (default) or FSDP1 */
    ts_loss_impl loss_impl;            /* default: the framework's */
    int64_t recompute_layers;          /* full: layers recomputed per (virtual) stage, 0 = all */
    int64_t offload_activation_layers; /* TE CPU offload: first layers' activations in host RAM */
    ts_framework framework;            /* default megatron */
    ts_attention attention;            /* default flash */
    bool attention_unpad;              /* flash: q, k, v unpadded and the output padded back */
    bool liger_kernels;                /* hf: Liger's fused RMSNorm, RoPE and SwiGLU */
    bool dropout;                      /* default false (modern LLMs train without) */
    ts_norm norm;                      /* default rmsnorm */
    ts_pp_schedule pp_schedule;        /* default 1f1b */
    int64_t vpp;                       /* virtual stages per PP rank, default 1 */
    bool overlap_p2p_comm;             /* interleaved: steady-state p2p under compute */
    bool tp_comm_overlap;              /* TP collectives split and run under the layer's GEMMs */
    bool overlap_grad_reduce;          /* megatron: DP grad reduce under the last backward */
    bool overlap_param_gather;         /* megatron, zero >= 1: param all-gather under forward */
    int64_t first_stage_layers;        /* 0 = even split */
    int64_t last_stage_layers;         /* 0 = even split */
    int64_t loss_chunks;               /* chunked cross-entropy, default 1 (unchunked) */
    int64_t logit_metrics;             /* fp32 cross-entropy train metrics per micro-batch */
    bool act_fp8_input_store;          /* Megatron: the SwiGLU input saved for backward in FP8 */
    bool offload_optimizer;            /* master + optimizer states to host RAM */
    bool offload_params;               /* ZeRO-3 only: weights to host RAM */

    /* hardware */
    ts_gpu gpu;            /* copy of a catalogue entry, may be overridden */
    int64_t gpus_per_node; /* default 8 */
    double mfu;            /* [0,1]; 0 (default) = predicted from the step-time model */
    double nvlink_gbps;    /* GB/s bidirectional per GPU; 0 = the GPU's catalogue figure */
    double net_gbps;       /* GB/s per GPU one direction (400 Gb/s = 50); 0 = catalogue */
    ts_link_topology nvlink_topology; /* switch or mesh; default: the GPU's catalogue entry */
    double gemm_efficiency; /* (0,1] override of the catalogue matmul fraction; 0 = catalogue */
    double cuda;          /* CUDA toolkit of the training stack (11.8, 12.4); 0 = current (>= 12) */
    double gpu_hour_usd;  /* price of one GPU-hour; 0 = no cost reported */
    double overhead_gib;  /* fixed per-GPU overhead (CUDA context, NCCL, ...), default 2 */
    double fragmentation; /* [0,0.5): allocator slack as a fraction of the rest, default 0 */
    bool attention_flops; /* time from the attention-aware FLOPs (default false: 6PT) */

    /* energy and carbon (core/ts_energy.c) */
    double gpu_watts;          /* board power per GPU; 0 = the catalogue's board_watts */
    double host_watts_per_gpu; /* CPUs, memory, NICs, fans per GPU; default 0 (GPU board only) */
    double pue;                /* data-centre power usage effectiveness, default 1.1 */
    double grid_kg_per_kwh;    /* grid carbon intensity, kg CO2e per kWh, default 0.385 */

    ts_ckpt_cfg ckpt;
} ts_run;

/* Documented defaults (the DEF column of core/ts_fields.def): bf16
 * weights/grads/compute, fp32 master, AdamW, trainable 1, seq 4096,
 * micro-batch 1, gpus 8, tp=pp=cp=ep=1, ZeRO 1, no SP, no recompute, H100
 * SXM, 8 GPUs/node, MFU 0 (predicted), overhead 2 GiB, fragmentation 0,
 * and the ts_ckpt_cfg defaults above.  No model. */
void ts_run_defaults(ts_run *r);

/* Copy a preset's shape, seq and id into r (leaves the rest alone). */
void ts_run_apply_preset(ts_run *r, const ts_preset *p);

/* Check every field and fill the derived ones (dp or gpus, kv_heads, ffn,
 * top_k, tokens, global_batch).  Idempotent.  The estimators call it once
 * on a private copy, so callers need not; the *_resolved() estimators
 * below skip it for a run that has been through it.  The per-field
 * ranges and the defaults are the registry's (core/ts_fields.def). */
ts_status ts_run_resolve(ts_run *r, ts_error *err);

/* The global batch a run that gives none gets (ts_run_resolve), and why.
 * What runs at scale use: at least TS_BATCH_TOKENS tokens per step (2^22,
 * about 4M: Llama 2's batch, Touvron et al. 2023b section 2.2) and, with a
 * pipeline, enough micro-batches per pipeline m that the bubble
 * (p - 1) / (v m) of the ideal time (Narayanan et al. 2021, SC21, section
 * 2.2) is at most 1 / TS_BATCH_BUBBLE_DIV: m >= ceil(4 (p - 1) / v),
 * rounded up to a multiple of p under the interleaved schedule (which
 * Megatron-LM schedules in groups of p micro-batches).  The batch is
 * dp * micro_batch * m, so it grows with data parallelism. */
#define TS_BATCH_TOKENS     (INT64_C(1) << 22)
#define TS_BATCH_BUBBLE_DIV 4
typedef struct ts_batch_rule {
    int64_t global_batch;  /* sequences per step: dp * micro_batch * micro_batches */
    int64_t micro_batches; /* m per pipeline per step: the larger of the two below */
    int64_t m_tokens;      /* ceil(TS_BATCH_TOKENS / (seq * dp * micro_batch)) */
    int64_t m_bubble;      /* ceil(4 (p - 1) / v) (interleaved: a multiple of p); 0 when pp 1 */
} ts_batch_rule;

/* The gradient precision a framework keeps when grad_precision is not
 * given (docs/formulas.md, "What the framework holds"): Megatron's fp32
 * main_grad buffer (arguments.py: accumulate_allreduce_grads_in_fp32),
 * FSDP's sharded parameters' dtype (fp32 when they are the master copy),
 * DeepSpeed's 16-bit gradients following the weights; fp8 weights keep
 * 16-bit gradients. */
ts_precision ts_framework_grad_precision(ts_framework fw, ts_precision precision,
                                         bool master_weights);

/* The rule for r's dp, micro_batch, seq, pp, vpp and pp_schedule (those
 * of a resolved run: each >= 1, dp * tp * pp * cp within the GPU limit);
 * TS_EINVAL otherwise.  The batch never exceeds the global_batch limit
 * (2^40). */
ts_status ts_batch_default(const ts_run *r, ts_batch_rule *out, ts_error *err);

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

/* One reported figure with its provenance.  Strings are static. */
typedef struct ts_term {
    double value;
    const char *formula;     /* e.g. "P_gpu * 2 / (dp*cp)" */
    const char *assumptions; /* short sentence */
} ts_term;

/* The phases of one optimizer step whose allocated bytes are compared
 * (docs/formulas.md, "Peak over the step"). */
typedef enum ts_phase {
    TS_PHASE_FORWARD = 0, /* end of the forward of the micro-batches in flight */
    TS_PHASE_LOSS,        /* logits, fp32 upcast, softmax and its gradient (last stage) */
    TS_PHASE_BACKWARD,    /* backward of the heaviest layer, recompute working set */
    TS_PHASE_OPTIMIZER,   /* optimizer step and its temporaries */
    TS_PHASE_COUNT
} ts_phase;

const char *ts_phase_name(ts_phase p);

typedef struct ts_mem_stage {
    int64_t stage; /* 0 = first pipeline stage */
    int64_t layers;
    double in_flight; /* micro-batches of activations held (interleaved: fractional) */
    double params;    /* parameters held by this stage's GPU, before sharding */
    /* bytes at this stage's peak phase; they add up to total */
    double weights, grads, master, optimizer, activations, buffers, overhead;
    double allocated_peak;              /* tensors at the peak phase */
    double reserved_peak;               /* what the caching allocator holds then */
    double total;                       /* reserved_peak + runtime context: compared with HBM */
    double phase_bytes[TS_PHASE_COUNT]; /* allocated bytes per phase (0: phase absent) */
    ts_phase peak_phase;
    double headroom;
    double host_share; /* this stage's parameters after ZeRO sharding (offload) */
    double paged;      /* paged 8-bit optimizer states (CUDA managed memory), in overhead */
    double host_act;   /* activations offloaded to host RAM (offload_activation_layers) */
    bool fits;
} ts_mem_stage;

/* Stages listed in full up to this many; past it the first and last
 * TS_STAGES_MAX/2 (the worst stage is always found among all of them). */
#define TS_STAGES_MAX 64

typedef struct ts_memory {
    ts_params params;
    double params_per_gpu; /* worst stage, after tp/pp/ep, before ZeRO sharding */
    int64_t shard_group;   /* ZeRO sharding degree for dense params: dp*cp */

    /* bytes per parameter of the unsharded model state (16 for mixed Adam) */
    double bpp_weights, bpp_grads, bpp_master, bpp_optimizer, bpp_total;
    double bpp_params;        /* the parameters they are per: P, plus LoRA's adapters and copies */
    double model_state_bytes; /* whole model, all replicas counted once: P * bpp_total */
    double inference_bytes;   /* P * bytes(precision) */

    /* per-GPU bytes of the worst stage at its peak phase, term by term;
     * weights + grads + master + optimizer + activations + buffers +
     * overhead = total */
    ts_term weights;
    ts_term grads;
    ts_term master;
    ts_term optimizer;
    ts_term activations; /* saved activations at the peak phase */
    ts_term buffers;     /* working set: logits/loss, recompute, unsharded params, buckets */
    ts_term overhead;    /* allocator reserve + runtime context */
    ts_term total;
    ts_term allocated_peak; /* tensors only (torch max_memory_allocated) */
    ts_term reserved_peak;  /* caching allocator (torch max_memory_reserved) */
    ts_term runtime;        /* CUDA context, communicator buffers (outside the allocator) */

    /* phases of the worst stage */
    double phases[TS_PHASE_COUNT];
    ts_phase peak_phase;

    /* pipeline stages */
    size_t stages_len;    /* entries filled in stages[] (the rest unspecified) */
    int64_t stages_count; /* = pp */
    int64_t worst_stage;  /* index (stage number) of the worst stage */
    ts_mem_stage stages[TS_STAGES_MAX];

    /* activation details */
    double act_per_layer;        /* bytes saved per layer, one micro-batch */
    double act_layer_full;       /* bytes of one layer's activations with nothing recomputed */
    int64_t layers_per_stage;    /* layers of the worst stage */
    int64_t in_flight;           /* micro-batches held by the first stage (rounded up) */
    double act_embedding_logits; /* loss-phase logits buffers of the last stage */
    ts_term act_seed000;         /* batch*layers*(5sh + 2as^2 + 2sF), labelled */
    double act_seq2_term;        /* the attention-score (seq^2) part of activations */

    /* host RAM for offload */
    double host_bytes_per_gpu;
    double host_bytes_per_node;

    /* cross-check: DeepSpeed's estimate_zero{2,3}_model_states_mem_needs */
    ts_term deepspeed_gpu; /* 0 when zero < 2 */

    /* fit */
    double hbm_bytes;
    double headroom_bytes; /* hbm - total, may be negative */
    bool fits;
} ts_memory;

/* Step time of one optimizer step, term by term (core/ts_step.c).  All
 * seconds on the critical path of the slowest pipeline stage unless the
 * name says overlapped. */
typedef struct ts_step {
    ts_term step_time;          /* seconds per optimizer step */
    double compute;             /* forward + backward matmuls, attention, elementwise */
    double recompute;           /* forward work done again (selective / full) */
    double tp_comm;             /* tensor-parallel collectives, exposed */
    double pp_bubble;           /* (p-1)/v stage times + exposed p2p */
    double pp_p2p;              /* part of pp_bubble: point-to-point sends */
    double dp_comm;             /* data-parallel / ZeRO / FSDP collectives, exposed */
    double cp_comm;             /* context-parallel ring, exposed */
    double ep_comm;             /* expert all-to-all, exposed */
    double optimizer;           /* optimizer step, memory-bound */
    double offload;             /* host transfers and CPU optimizer when offloading */
    double exposed_comm;        /* sum of the exposed communication above */
    double overlapped_comm;     /* communication hidden behind compute */
    double micro_batches;       /* per pipeline per step: global_batch / (dp * micro_batch) */
    double gemm_efficiency;     /* FLOP-weighted matmul fraction of peak reached */
    double model_flops;         /* per step, the compute estimate's MFU basis */
    double predicted_mfu;       /* model_flops / (step_time * gpus * peak) */
    const char *mfu_convention; /* static */
    double tokens_per_second;   /* whole job */
    double tokens_per_gpu_second;
    double nvlink_bw, net_bw; /* bytes/s used (after inputs and fallbacks) */
    double nvlink_peers;      /* mesh: peers a GPU's links split over (a group of n gets
                               * (n - 1) / nvlink_peers of nvlink_bw); 0 = a switch */
    bool from_shape;          /* false: plain params, matmul-bound estimate only */
    /* Matmul time of the step beyond what the GPU's matmul rate (the
     * catalogue MAMF) would take for the same FLOPs: GEMMs too small to
     * fill the GPU (few tokens per GPU per micro-batch, thin tp slices,
     * small experts) stream operands for little math. */
    double underfill;
    unsigned warnings;      /* TS_STEP_WARN_* bits */
    double memory_fraction; /* with TS_STEP_WARN_MEMORY: the plan's memory / HBM */
} ts_step;

/* ts_step.warnings: a cost above 1 / TS_STEP_WARN_DIV of the step time. */
#define TS_STEP_WARN_DIV       4
#define TS_STEP_WARN_BUBBLE    1u /* pp_bubble */
#define TS_STEP_WARN_COMM      2u /* exposed_comm */
#define TS_STEP_WARN_UNDERFILL 4u /* underfill */
/* The plan fits with less than TS_SEARCH_MARGIN of HBM to spare (set by
 * ts_compute_estimate and the plan, which know the memory estimate). */
#define TS_STEP_WARN_MEMORY 8u

/* Step time for one run (resolves a private copy). */
ts_status ts_step_estimate(const ts_run *r, ts_step *out, ts_error *err);

/* Collective and kernel cost models, exposed for tests.  bytes is the
 * full buffer (all-gather: the gathered result), bw the per-GPU one-way
 * bandwidth in bytes/s, alpha the per-hop latency in seconds. */
double ts_step_allreduce_s(double bytes, int64_t n, double bw, double alpha);
double ts_step_allgather_s(double bytes, int64_t n, double bw, double alpha);
double ts_step_alltoall_s(double bytes, int64_t n, double bw, double alpha);
/* Seconds for an M x K by K x N bf16 GEMM: 2MNK / (peak * core) + 2(MK + KN + MN) / hbm_bw. */
double ts_step_gemm_s(double m, double n, double k, double peak, double core, double hbm_bw);
/* Matmul core fraction implied by a measured MAMF at its shape under the
 * additive roofline above. */
double ts_step_core_eff(const ts_gpu *g);
/* Cross-entropy traffic over `logits` logits, bytes forward and backward
 * (torch and vocab_parallel: fp32 softmax; fused: bf16 in and out;
 * core/ts_step_kernel.c). */
void ts_step_loss_bytes(ts_loss_impl impl, double logits, double *fwd, double *bwd);
/* Bytes one forward-only fp32 cross-entropy train metric moves over
 * `logits` bf16 logits (core/ts_step_kernel.c). */
double ts_step_metric_bytes(double logits);
/* FP8 casting traffic of one layer's linears per micro-batch, bytes:
 * forward (inputs, plus wcast for the weights) and backward (output
 * gradients); see core/ts_step_kernel.c. */
void ts_step_fp8_cast(double tok, double h, double F, double t, double kv_dim, bool gated,
                      double top_k, double wcast, double *fwd, double *bwd);
/* Bytes Transformer Engine moves per step to ready P_l weights for FP8
 * GEMMs: 16-bit weights, FP8 parameters, or a frozen FP8 base. */
double ts_step_fp8_wcast(bool fp8_params, bool frozen_fp8, bool tn_only, double P_l);
/* LoRA / QLoRA (core/ts_step_kernel.c, core/ts_step_layer.c).  Dequantisation traffic of one frozen
 * linear of `params` weights with in_el input and out_el output elements,
 * bytes per micro-batch forward and backward (0 for a bf16 base). */
void ts_step_dequant_bytes(ts_quant q, double params, double in_el, double out_el, double *fwd,
                           double *bwd);
/* Seconds of one frozen linear (m x k by k x n, forward and dgrad only)
 * and, when adapted, its rank-`rank` adapter pair, at peak * core FLOP/s
 * and `mem` bytes/s (bf16 operands). */
void ts_step_lora_linear_s(double m, double n, double k, int64_t rank, bool adapted, ts_quant q,
                           double peak, double core, double mem, double *fwd, double *bwd);
/* True when the run's CUDA toolkit predates Hopper's wgmma (cuda < 12 on
 * sm_90): matmuls then reach at most 2/3 of the dense peak. */
/* Pipeline bubble fraction (p - 1) / (m * v). */
double ts_step_bubble_fraction(int64_t p, int64_t m, int64_t v);

/* Expected wall clock under failures (core/ts_goodput.c; Daly 2006): the
 * failure-free time of ts_compute, cut into checkpoint intervals tau,
 * each followed by a blocking write C; failures arrive at rate 1/M
 * (exponential); each costs a restart R and the work since the last
 * checkpoint.  wall = T/tau * M e^(R/M) (e^((tau+C)/M) - 1) exactly. */
typedef struct ts_goodput {
    double job_mtbf_s;     /* M */
    double interval_s;     /* tau: the nvme checkpoint interval, the one used */
    double write_s;        /* C: the blocking write of one checkpoint */
    double relaunch_s;     /* relaunch_min * 60 */
    double restore_s;      /* reading the checkpoint back (shared tier) */
    double restart_s;      /* R = relaunch + restore */
    double failure_free_s; /* T: compute.wall_seconds */
    ts_term wall_seconds;  /* expected, with checkpoints and failures */
    double wall_days;
    ts_term useful_fraction;        /* T / wall: the fraction of time training usefully */
    double interruptions;           /* expected failures: wall / M */
    double checkpoint_s;            /* write stalls: T / tau * C */
    double lost_s;                  /* restarts and redone work: wall - T - checkpoint_s */
    double lost_per_interruption_s; /* lost_s / interruptions (0 when none) */
    double gpu_hours;               /* wall * gpus / 3600: GPU time held */
    double cost_usd;                /* gpu_hours * gpu_hour_usd */
    double daly_interval_s;         /* the optimum tau for C and M (Daly 2006) */
    double useful_fraction_daly;    /* T / wall at that tau */
} ts_goodput;

/* Energy and emissions of the run (core/ts_energy.c): GPU time times the
 * power drawn per GPU, times the data centre's PUE, times the grid's
 * carbon intensity (the Llama model cards' method, Touvron et al. 2023). */
typedef struct ts_energy {
    double gpu_hours;  /* basis: goodput.gpu_hours (GPU time held, failures in) */
    double gpu_watts;  /* board power per GPU used */
    double host_watts; /* host share per GPU */
    double pue;
    double grid_kg_per_kwh;
    double facility_w;        /* gpus * (W_gpu + W_host) * PUE: the draw at the meter */
    ts_term energy_wh;        /* gpu_hours * (W_gpu + W_host) * PUE, watt-hours */
    ts_term co2e_t;           /* energy_wh / 1000 * grid_kg_per_kwh / 1000, tonnes */
    const char *power_source; /* static: where gpu_watts comes from */
} ts_energy;

/* The same for any GPU time and power (no run): the oracles' entry. */
void ts_energy_of(double gpu_hours, double gpu_watts, double host_watts, double pue,
                  double grid_kg_per_kwh, double gpus, ts_energy *out);

typedef struct ts_compute {
    double tokens;
    double params_active;
    ts_term model_flops;      /* 6 P_active T (Kaplan et al. 2020); LoRA (4 P + 6 P_lora) T */
    ts_term model_flops_attn; /* (6 P + 12 L h s) T (PaLM, Chowdhery et al. 2022, App. B) */
    ts_term hardware_flops;   /* + recompute forward passes */
    double peak_flops;        /* per GPU at compute precision */
    double mfu;
    double hfu;           /* mfu * hardware/model */
    ts_term gpu_hours;    /* FLOPs / (peak * mfu * 3600) */
    ts_term wall_seconds; /* gpu_hours * 3600 / gpus */
    double wall_days;
    double gpu_years;
    double tokens_per_second; /* whole job */
    double tokens_per_gpu_second;
    double steps; /* tokens / (global_batch * seq) */
    double step_seconds;
    double achieved_flops_per_gpu; /* peak * mfu */
    bool mfu_predicted;            /* mfu came from the step model, not the input */
    double predicted_mfu;          /* step model's, whatever mfu was used */
    ts_term step_time;             /* predicted seconds per optimizer step */
    ts_step step;                  /* its terms */
    ts_term cost_usd;              /* gpu_hours * gpu_hour_usd; 0 when no price */
    ts_goodput goodput;            /* the same run with checkpoints and failures */
    ts_energy energy;              /* and what it draws and emits */
} ts_compute;

typedef enum ts_tier_kind {
    TS_TIER_NVME = 0,
    TS_TIER_SHARED,
    TS_TIER_OBJECT,
    TS_TIER_COUNT
} ts_tier_kind;

typedef struct ts_ckpt_tier {
    const char *name; /* "nvme", "shared", "object" */
    double interval_s;
    double write_s;              /* one full checkpoint to this tier */
    double restore_s;            /* read back (same bandwidth model) */
    double bandwidth_per_writer; /* bytes/s each writer gets: min(writer, aggregate/writers) */
    int64_t keep;
    double storage_bytes;     /* keep * full size; nvme: per node */
    double overhead_fraction; /* write_s / interval_s */
    const char *formula;
} ts_ckpt_tier;

typedef struct ts_ckpt {
    ts_term full_bytes;          /* resumable: weights + master + optimizer (+ grads) */
    ts_term weights_bytes;       /* weights only, at training precision */
    double bpp_full;             /* 14 for mixed Adam without grads */
    ts_term shard_bytes_per_gpu; /* largest per-GPU shard written */
    int64_t writers;             /* GPUs that write a shard */
    double bytes_per_node;
    ts_ckpt_tier tiers[TS_TIER_COUNT];
    double job_mtbf_s;
    ts_term young_interval_s;       /* sqrt(2 C M), Young 1974 */
    ts_term daly_interval_s;        /* Daly 2006 higher-order */
    double blocking_write_s;        /* C: first tier's write time */
    ts_term waste_fraction;         /* C/tau + (tau/2 + R)/M at the Daly interval */
    double waste_fraction_schedule; /* same at the configured nvme interval */
} ts_ckpt;

#define TS_SWEEP_MAX 24

typedef struct ts_sweep_point {
    int64_t dp;
    int64_t gpus;
    /* The sequences per step at this point: the run's global batch where
     * dp x micro_batch divides it, else the one derived for this dp
     * (ts_batch_default), so step_seconds of two points can differ by
     * their batch; wall_seconds (tokens fixed) compares them. */
    int64_t global_batch;
    double weights, grads, master, optimizer, activations, buffers, overhead, total;
    double ckpt_shard_bytes;
    bool fits;
    /* The same run's time at this point, tokens fixed (ts_compute at this
     * dp): what a data-parallel degree buys in days.  timed false when the
     * step model has no answer there (then the three are 0). */
    bool timed;
    double step_seconds; /* ts_compute.step_time */
    double wall_seconds; /* ts_compute.wall_seconds (failure-free) */
    double mfu;          /* the MFU that time uses */
} ts_sweep_point;

typedef struct ts_plan {
    ts_run run; /* the resolved, effective inputs */
    ts_memory memory;
    ts_compute compute;
    ts_ckpt ckpt;
    size_t sweep_len;
    ts_sweep_point sweep[TS_SWEEP_MAX]; /* dp = 1, 2, 4, ... and the run's dp */
} ts_plan;

/* ------------------------------------------------------------------ */
/* Estimators                                                          */
/* ------------------------------------------------------------------ */

ts_status ts_memory_estimate(const ts_run *r, ts_memory *out, ts_error *err);
ts_status ts_compute_estimate(const ts_run *r, ts_compute *out, ts_error *err);
ts_status ts_ckpt_estimate(const ts_run *r, ts_ckpt *out, ts_error *err);

/* Per-GPU memory and checkpoint shard for dp = 1, 2, 4, ... up to
 * max(1024, r->dp), plus r->dp itself, ascending; tp/pp/cp kept. */
ts_status ts_sweep_dp(const ts_run *r, ts_sweep_point *pts, size_t cap, size_t *n, ts_error *err);

/* Everything above in one call. */
ts_status ts_plan_estimate(const ts_run *r, ts_plan *out, ts_error *err);

/* Stage i (0 = first) of the memory estimate of r (resolves a private
 * copy): what ts_memory_estimate lists in stages[] for a short pipeline,
 * for any stage of a long one (stages[] keeps the first and last 32). */
ts_status ts_memory_stage(const ts_run *r, int64_t i, ts_mem_stage *out, ts_error *err);

/* The same estimates of a run that ts_run_resolve() accepted and that has
 * not changed since: nothing is validated again (the API resolves each
 * request once, then calls these).  A run whose layout is not resolved
 * (dp, gpus, global_batch, tokens not derived) is refused with TS_EINVAL;
 * its other fields are trusted. */
ts_status ts_memory_resolved(const ts_run *r, ts_memory *out, ts_error *err);
ts_status ts_compute_resolved(const ts_run *r, ts_compute *out, ts_error *err);
ts_status ts_ckpt_resolved(const ts_run *r, ts_ckpt *out, ts_error *err);
ts_status ts_plan_resolved(const ts_run *r, ts_plan *out, ts_error *err);
/* The same, its sweep charged to budget (NULL: a private one of
 * TS_BUDGET_DEFAULT, as ts_plan_resolved and ts_plan_estimate use).  When
 * the budget runs out the sweep ends early (sweep_len points, the run's
 * own dp among them only if reached) and budget->exhausted says so. */
ts_status ts_plan_resolved_within(const ts_run *r, ts_budget *budget, ts_plan *out, ts_error *err);

/* Largest micro-batch in [1, limit] that fits (memory of that run in *mem).
 * TS_ENOFIT if even 1 does not. */
ts_status ts_fit_max_micro_batch(const ts_run *r, int64_t limit, int64_t *mb, ts_memory *mem,
                                 ts_error *err);

/* Smallest dp (tp/pp/cp kept, ep | dp) with gpus <= max_gpus that fits.
 * A user-fixed global_batch is kept: only dp with dp*micro_batch dividing
 * it are answers (TS_ENOFIT naming global_batch when none fits). */
ts_status ts_fit_min_gpus(const ts_run *r, int64_t max_gpus, int64_t *dp, int64_t *gpus,
                          ts_memory *mem, ts_error *err);

/* The solvers charged to budget (NULL: a private one of TS_BUDGET_DEFAULT,
 * which is what the two above use; their worst case, 2^20 trial
 * divisions and 6720 divisors of a global batch, stays well inside it).
 * When the budget runs out: micro_batch answers the largest micro-batch
 * found to fit so far (1 at least); gpus answers the smallest dp found so
 * far, or TS_EINVAL naming max_gpus when none was; budget->exhausted
 * says the answer may not be the optimum. */
ts_status ts_fit_max_micro_batch_within(const ts_run *r, int64_t limit, ts_budget *budget,
                                        int64_t *mb, ts_memory *mem, ts_error *err);
ts_status ts_fit_min_gpus_within(const ts_run *r, int64_t max_gpus, ts_budget *budget, int64_t *dp,
                                 int64_t *gpus, ts_memory *mem, ts_error *err);

/* ------------------------------------------------------------------ */
/* Layout search (core/ts_search.c)                                    */
/* ------------------------------------------------------------------ */

typedef enum ts_search_objective {
    TS_SEARCH_TIME = 0, /* fastest step */
    TS_SEARCH_COST,     /* fewest GPU-seconds (dollars) per step */
    TS_SEARCH_OBJECTIVE_COUNT
} ts_search_objective;

#define TS_SEARCH_MAX_RESULTS 100
/* The search's bounds when the request leaves them out (max_micro_batch,
 * max_cp, max_vpp; the registry's docs state them, tests/api/test_defaults
 * checks that they agree). */
#define TS_SEARCH_MB_DEFAULT  64
#define TS_SEARCH_CP_DEFAULT  8
#define TS_SEARCH_VPP_DEFAULT 8
#define TS_SEARCH_WHY_LEN     160

/* What to enumerate.  A fixed dimension (> 0, or >= 0 for the enum ones)
 * is kept as given; 0 / -1 means "search it". */
typedef struct ts_search_cfg {
    ts_search_objective objective;
    size_t limit;            /* results kept, 1..TS_SEARCH_MAX_RESULTS, default 20 */
    int64_t max_gpus;        /* 0 = exactly the run's gpus; else any gpus <= max_gpus */
    int64_t max_tp;          /* 0 = gpus_per_node (TP inside a node) */
    int64_t max_pp;          /* 0 = layers */
    int64_t max_cp;          /* 0 = 8 */
    int64_t max_micro_batch; /* 0 = 64 */
    int64_t max_vpp;         /* 0 = 8 */
    int64_t tp, pp, cp, ep, micro_batch, vpp; /* fixed when > 0 */
    int zero;                                 /* fixed when >= 0 (framework then follows) */
    int framework;                            /* fixed when >= 0 (a ts_framework) */
    unsigned recompute_mask;                  /* bit (1u << ts_recompute) allowed; 0 = all */
    /* Share of HBM kept free, [0, 1): a layout above (1 - margin) * HBM is
     * not ranked as fitting (counted in tight).  Default TS_SEARCH_MARGIN. */
    double margin;
    double max_days; /* > 0: layouts whose whole run, with failures, takes longer are not ranked */
    double
        max_cost; /* > 0: nor those whose run, with failures, costs more (USD; needs gpu_hour_usd) */
    /* Each candidate's grad_precision follows its framework (the default
     * the API applies when grad_precision is not given: ts_framework_grad_precision)
     * instead of staying the run's. */
    bool grad_follows_framework;
} ts_search_cfg;

#define TS_SEARCH_MARGIN 0.10

typedef struct ts_search_result {
    int64_t tp, pp, cp, dp, ep, micro_batch, vpp, gpus;
    int64_t first_stage_layers, last_stage_layers;
    int64_t global_batch; /* the run's, or this layout's default (ts_batch_default) */
    int zero;
    ts_framework framework;
    ts_recompute recompute;
    ts_pp_schedule pp_schedule;
    ts_precision grad_precision;
    bool sequence_parallel;
    bool tp_comm_overlap; /* the run's, on a layout with tp > 1 */
    double step_time;     /* seconds per optimizer step */
    double predicted_mfu;
    double tokens_per_gpu_second;
    double gpu_seconds;    /* step_time * gpus: per step */
    double cost_usd;       /* per step; 0 without gpu_hour_usd */
    double wall_seconds;   /* the whole run: tokens / (global_batch * seq) steps */
    double gpu_hours;      /* wall_seconds * gpus / 3600 */
    double cost_total_usd; /* gpu_hours * gpu_hour_usd; 0 without a price */
    /* The same run with checkpoints and failures (compute.goodput of the
     * row's plan): what max_days and max_cost are held to. */
    double useful_fraction; /* wall_seconds / goodput_wall_seconds */
    double goodput_wall_seconds;
    double goodput_cost_usd; /* goodput_wall_seconds * gpus / 3600 * gpu_hour_usd */
    double memory_total, headroom, hbm;
    bool fits;
    /* step terms, for the comparison text */
    double compute, recompute_s, tp_comm, pp_bubble, dp_comm, cp_comm, ep_comm, optimizer, offload;
    char why[TS_SEARCH_WHY_LEN]; /* why it ranks above the next one */
} ts_search_result;

typedef struct ts_search_out {
    size_t n;
    ts_search_result results[TS_SEARCH_MAX_RESULTS];
    uint64_t enumerated;  /* layouts reached by the enumeration */
    uint64_t tried;       /* memory estimated */
    uint64_t fitting;     /* fit with the margin, and were costed */
    uint64_t tight;       /* estimates that fit the HBM but not with the margin */
    uint64_t over_budget; /* of fitting: over max_days or max_cost (with failures), or never
                                * finishing under failures; not ranked */
    uint64_t pruned;      /* skipped without an estimate (cannot fit) */
    bool truncated;       /* the work budget ran out: results are the best seen */
} ts_search_out;

void ts_search_defaults(ts_search_cfg *c);
/* Enumerate layouts of r (its model, GPU, seq, global_batch, precision
 * and optimizer are kept), keep those that fit with cfg->margin, rank by
 * cfg->objective per token: with a global_batch every layout has it, and
 * the order is by step time (GPU-seconds per step); without one each
 * layout gets its own default batch (ts_batch_default) and the order is
 * by time (GPU-time) per token, i.e. of the whole run.
 * TS_ENOFIT when nothing fits (out->n = 0, counts filled).  No
 * allocation: out is the caller's (about 40 KB). */
ts_status ts_search_run(const ts_run *r, const ts_search_cfg *cfg, ts_search_out *out,
                        ts_error *err);
/* The same charged to budget (NULL: a private one of TS_BUDGET_DEFAULT, as
 * ts_search_run uses).  Every loop of the enumeration charges it; when it
 * runs out the search stops with out->truncated and the best layouts seen,
 * or, when none was costed yet, TS_EINVAL naming max_gpus (gpus when no
 * max_gpus): the space asked for is too large for one request. */
ts_status ts_search_run_within(const ts_run *r, const ts_search_cfg *cfg, ts_budget *budget,
                               ts_search_out *out, ts_error *err);

/* ------------------------------------------------------------------ */
/* Scaling laws and compute-optimal sizing (core/ts_scaling.c)         */
/* ------------------------------------------------------------------ */

/* The parametric loss L(N, D) = E + A / N^alpha + B / D^beta of
 * Hoffmann et al. 2022 (approach 3), N parameters (embeddings counted,
 * their App. F), D training tokens, C = 6 N D FLOPs. */
typedef enum ts_scaling_law {
    TS_LAW_HOFFMANN = 0, /* Hoffmann et al. 2022, eq. 10, unrounded */
    TS_LAW_BESIROGLU,    /* Besiroglu et al. 2024's replication */
    TS_LAW_COUNT
} ts_scaling_law;

typedef struct ts_law {
    const char *name; /* "hoffmann" */
    double E, A, B, alpha, beta;
    const char *source; /* static citation */
} ts_law;

const ts_law *ts_law_get(ts_scaling_law l); /* NULL past the end */
/* Compute-optimal N and D for C FLOPs (Hoffmann et al. eq. 4):
 * N = G (C/6)^a, D = (C/6) / N, G = (alpha A / (beta B))^(1/(alpha+beta)),
 * a = beta / (alpha + beta). */
void ts_law_optimum(const ts_law *l, double flops, double *n, double *d);
double ts_law_loss(const ts_law *l, double n, double d);

/* The shapes a sizing plans (ts_scaling_shape): Llama-style decoders
 * (SwiGLU FFN of 3.5 h, head width 128, 8 KV heads from 16 heads up,
 * untied embeddings, vocabulary TS_SHAPE_VOCAB), hidden width about 128
 * times the depth (Kaplan et al. 2020, Fig. 5: loss flat over a wide
 * range of aspect ratios; Llama 2 7B and GPT-3 175B sit at 128). */
#define TS_SHAPE_VOCAB  32000
#define TS_SHAPE_ASPECT 128
/* The shape whose count is closest to n (within 2 % where the layer
 * granularity allows), then whose width over depth is closest to
 * TS_SHAPE_ASPECT; only the shape members of out are written.
 * TS_EINVAL naming field when n is below the smallest shape (1 layer of
 * width 128) or above the largest (width 131072). */
ts_status ts_scaling_shape(double n, const char *field, ts_model *out, ts_error *err);

/* A budget of GPU time turned into a plan (core/ts_sizing.c). */
typedef enum ts_sizing_mode {
    TS_SIZE_OPTIMAL = 0, /* the law's compute-optimal N and D */
    TS_SIZE_RATIO,       /* N and D = ratio * N spending the budget */
    TS_SIZE_MODEL,       /* the run's own model: the tokens the budget buys */
    TS_SIZE_MODE_COUNT
} ts_sizing_mode;

#define TS_SIZING_ITER_MAX 6

typedef struct ts_sizing_cfg {
    double gpu_hours;  /* the budget, > 0 */
    const char *field; /* its public name, for errors ("budget_days") */
    ts_sizing_mode mode;
    ts_scaling_law law;
    double tokens_per_param; /* TS_SIZE_RATIO */
    ts_search_cfg search;    /* the layout search: max_gpus 0 (the run's gpus) */
} ts_sizing_cfg;

typedef struct ts_sizing_out {
    ts_run run;              /* resolved: shape, layout, tokens; what /v1/plan takes */
    ts_search_result layout; /* the best layout of the last search */
    double gpu_hours;        /* the budget */
    double peak_flops;       /* per GPU at the compute precision */
    double mfu;              /* the plan's: mfu given, else the layout's predicted */
    double useful_fraction;  /* the plan's goodput */
    double flops;            /* C = gpu_hours * 3600 * peak * mfu * useful_fraction */
    double optimal_params;   /* the law's N at C */
    double optimal_tokens;   /* and D */
    double optimal_loss;
    double params; /* the planned model's active count (dense: its count) */
    double tokens; /* C / (6 params) */
    double tokens_per_param;
    double loss;    /* L(params, tokens); 0 for MoE (the law is dense) */
    int iterations; /* searches run */
    bool converged; /* the shape was a fixed point of the MFU it gets */
    bool truncated; /* a search ran out of work budget: best seen */
} ts_sizing_out;

/* base: the run as given (unresolved; TS_SIZE_MODEL: with its model).
 * Every search is charged to work (NULL: a private TS_BUDGET_DEFAULT);
 * scratch holds each search's results (the caller's, ~40 KB).  TS_ENOFIT
 * naming gpus when no layout fits; TS_EINVAL naming cfg->field when the
 * budget buys too little or too much. */
ts_status ts_sizing_run(const ts_run *base, const ts_sizing_cfg *cfg, ts_budget *work,
                        ts_search_out *scratch, ts_sizing_out *out, ts_error *err);

/* Young/Daly helpers, exposed for tests: C write cost, M MTBF, seconds. */
double ts_young_interval(double c, double m);
double ts_daly_interval(double c, double m);
/* Daly 2006's exact useful fraction tau / (M e^(R/M) (e^((tau+C)/M) - 1))
 * for interval tau and restart R: 1 when tau or M is not positive, 0 when
 * a segment would never finish. */
double ts_daly_useful_fraction(double c, double tau, double r, double m);

#ifdef __cplusplus
}
#endif

#endif /* TRAINSIZE_H */
