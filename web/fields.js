/*
 * fields.js - the form, as data.  One row per /v1 run field (names exactly
 * as in api/CONTRACT.md), grouped into the fieldsets of index.html.
 *
 * kind: "int" / "num" (free text, sent as a JSON number when it parses,
 * else as the raw string so the API names the field in its error),
 * "enum" (select of strings), "zero" (select of 0..3), "bool" (select
 * default / yes / no, so a preset's value can be left alone or overridden),
 * "model" / "gpu" (selects filled from /v1/presets and /v1/gpus).
 *
 * An empty value means "not set": the field is not sent and the API's (or
 * the preset's) value applies; the placeholder then shows the value the API
 * resolved, read back from the plan's "inputs".
 */

const PRECISIONS = ['fp32', 'bf16', 'fp16', 'fp8'];
const OPTIMIZERS = ['adamw', 'adam', 'adam8bit', 'sgd', 'sgd_momentum', 'adafactor', 'lion', 'none'];
const RECOMPUTE = ['none', 'selective', 'full'];

export const GROUPS = [
    { id: 'model', legend: 'Model' },
    { id: 'mode', legend: 'Pre-training or fine-tuning' },
    { id: 'work', legend: 'Precision, optimizer and data' },
    { id: 'parallel', legend: 'Parallelism and memory savers' },
    { id: 'hardware', legend: 'Hardware and cost' },
    { id: 'ckpt', legend: 'Checkpoints and failures' },
];

/* The model's shape: typing any of these over a preset turns the model into
 * an explicit custom shape copied from that preset (app.js toCustom). */
export const SHAPE_FIELDS = ['layers', 'hidden', 'heads', 'kv_heads', 'ffn', 'vocab', 'experts', 'top_k',
    'gated', 'tied_embeddings'];

export const MODES = [
    { id: 'pretrain', label: 'Pre-train (all weights, full token budget)' },
    { id: 'full', label: 'Fine-tune, all weights' },
    { id: 'lora', label: 'Fine-tune, LoRA adapters' },
    { id: 'qlora', label: 'Fine-tune, QLoRA (nf4 base + LoRA)' },
];

export const FIELDS = [
    /* model */
    { name: 'model', group: 'model', kind: 'model', label: 'Preset model',
      hint: 'A published model; typing a shape below makes it a custom copy.' },
    { name: 'params', group: 'model', kind: 'num', label: 'Parameters (count)',
      hint: 'Plain parameter count, e.g. 7B, when there is no shape.', advanced: true },
    { name: 'layers', group: 'model', kind: 'int', label: 'Layers', advanced: true },
    { name: 'hidden', group: 'model', kind: 'int', label: 'Hidden size', advanced: true },
    { name: 'heads', group: 'model', kind: 'int', label: 'Attention heads', advanced: true },
    { name: 'kv_heads', group: 'model', kind: 'int', label: 'KV heads (GQA)', advanced: true },
    { name: 'ffn', group: 'model', kind: 'int', label: 'FFN width', advanced: true },
    { name: 'vocab', group: 'model', kind: 'int', label: 'Vocabulary', advanced: true },
    { name: 'experts', group: 'model', kind: 'int', label: 'Experts (MoE)', advanced: true },
    { name: 'top_k', group: 'model', kind: 'int', label: 'Experts per token (top-k)', advanced: true },
    { name: 'gated', group: 'model', kind: 'bool', label: 'Gated FFN (SwiGLU)', advanced: true,
      hint: 'Yes for Llama, Mistral, Qwen, Gemma; no for GPT-2/3 style.' },
    { name: 'tied_embeddings', group: 'model', kind: 'bool', label: 'Tied embeddings', advanced: true },
    { name: 'norm', group: 'model', kind: 'enum', options: ['rmsnorm', 'layernorm'], label: 'Normalisation', advanced: true },

    /* fine-tuning (page-only fields are not sent as such: see buildBody) */
    { name: 'mode', group: 'mode', kind: 'mode', label: 'What the run does', page: true },
    { name: 'dataset_tokens', group: 'mode', kind: 'num', label: 'Dataset tokens', page: true, finetune: true,
      hint: 'Tokens in the fine-tuning set, e.g. 50M; default 100M.' },
    { name: 'epochs', group: 'mode', kind: 'num', label: 'Epochs', page: true, finetune: true,
      hint: 'Passes over the dataset; default 3. Tokens = dataset × epochs.' },
    { name: 'lora_rank', group: 'mode', kind: 'int', label: 'LoRA rank', lora: true, hint: 'default 16' },
    { name: 'frozen_precision', group: 'mode', kind: 'enum', options: ['bf16', 'int8', 'nf4'], lora: true,
      label: 'Frozen base weights', hint: 'QLoRA keeps the base in 4-bit nf4.' },

    /* precision, optimizer, the work */
    { name: 'precision', group: 'work', kind: 'enum', options: PRECISIONS, label: 'Weight precision' },
    { name: 'optimizer', group: 'work', kind: 'enum', options: OPTIMIZERS, label: 'Optimizer' },
    { name: 'seq', group: 'work', kind: 'int', label: 'Sequence length (tokens)', binaryK: true,
      hint: '8k = 8192' },
    { name: 'micro_batch', group: 'work', kind: 'int', label: 'Micro-batch (sequences per GPU)' },
    { name: 'global_batch', group: 'work', kind: 'int', label: 'Global batch (sequences per step)' },
    { name: 'tokens', group: 'work', kind: 'num', label: 'Training tokens', pretrain: true,
      hint: 'e.g. 15T or 1.5e13; default: the preset\'s, else 20 × params.' },
    { name: 'grad_precision', group: 'work', kind: 'enum', options: PRECISIONS, label: 'Gradient precision', advanced: true },
    { name: 'compute_precision', group: 'work', kind: 'enum', options: PRECISIONS, label: 'Compute precision', advanced: true },
    { name: 'optimizer_precision', group: 'work', kind: 'enum', options: ['fp32', 'bf16'], label: 'Optimizer state precision', advanced: true },
    { name: 'master_weights', group: 'work', kind: 'bool', label: 'FP32 master weights', advanced: true },
    { name: 'trainable_fraction', group: 'work', kind: 'num', label: 'Trainable fraction (0–1]', advanced: true, fraction: true },
    { name: 'loss_chunks', group: 'work', kind: 'int', label: 'Cross-entropy chunks', advanced: true },

    /* parallel layout */
    { name: 'gpus', group: 'parallel', kind: 'int', label: 'GPUs', hint: 'gpus = dp × tp × pp × cp' },
    { name: 'dp', group: 'parallel', kind: 'int', label: 'Data parallel (dp)' },
    { name: 'tp', group: 'parallel', kind: 'int', label: 'Tensor parallel (tp)' },
    { name: 'pp', group: 'parallel', kind: 'int', label: 'Pipeline parallel (pp)' },
    { name: 'cp', group: 'parallel', kind: 'int', label: 'Context parallel (cp)' },
    { name: 'ep', group: 'parallel', kind: 'int', label: 'Expert parallel (ep)' },
    { name: 'zero', group: 'parallel', kind: 'zero', label: 'ZeRO stage', hint: '3 = FSDP' },
    { name: 'sequence_parallel', group: 'parallel', kind: 'bool', label: 'Sequence parallel' },
    { name: 'recompute', group: 'parallel', kind: 'enum', options: RECOMPUTE, label: 'Activation recompute' },
    { name: 'offload_optimizer', group: 'parallel', kind: 'bool', label: 'Offload optimizer to host' },
    { name: 'offload_params', group: 'parallel', kind: 'bool', label: 'Offload params to host (ZeRO-3)' },
    { name: 'framework', group: 'parallel', kind: 'enum', options: ['megatron', 'fsdp', 'deepspeed'], label: 'Framework', advanced: true },
    { name: 'dropout', group: 'parallel', kind: 'bool', label: 'Dropout (stores masks)', advanced: true },
    { name: 'attention', group: 'parallel', kind: 'enum', options: ['flash', 'eager'], label: 'Attention kernel', advanced: true },
    { name: 'pp_schedule', group: 'parallel', kind: 'enum', options: ['1f1b', 'interleaved'], label: 'Pipeline schedule', advanced: true },
    { name: 'vpp', group: 'parallel', kind: 'int', label: 'Virtual stages per rank (vpp)', advanced: true },
    { name: 'first_stage_layers', group: 'parallel', kind: 'int', label: 'Layers on the first stage', advanced: true },
    { name: 'last_stage_layers', group: 'parallel', kind: 'int', label: 'Layers on the last stage', advanced: true },

    /* hardware */
    { name: 'gpu', group: 'hardware', kind: 'gpu', label: 'GPU model' },
    { name: 'mfu', group: 'hardware', kind: 'num', label: 'MFU (0–1]', hint: 'e.g. 0.4 or 40%; empty: the API\'s', fraction: true },
    { name: 'margin', group: 'hardware', kind: 'num', label: 'Tight below headroom of', page: true, fraction: true,
      hint: 'share of HBM, e.g. 10%; default 10%' },
    { name: 'gpu_hour_usd', group: 'hardware', kind: 'num', label: 'Price per GPU-hour (USD)', hint: 'for the cost, e.g. 2.5' },
    { name: 'hbm_gb', group: 'hardware', kind: 'num', label: 'HBM override (GB)', advanced: true },
    { name: 'hbm_gib', group: 'hardware', kind: 'num', label: 'HBM override (GiB)', advanced: true,
      hint: 'as nvidia-smi shows it: 81559 MiB = 79.6 GiB' },
    { name: 'peak_tflops', group: 'hardware', kind: 'num', label: 'Peak override (TFLOP/s)', advanced: true },
    { name: 'gpus_per_node', group: 'hardware', kind: 'int', label: 'GPUs per node', advanced: true },
    { name: 'overhead_gib', group: 'hardware', kind: 'num', label: 'Fixed overhead (GiB)', advanced: true },
    { name: 'fragmentation', group: 'hardware', kind: 'num', label: 'Fragmentation [0–0.5)', advanced: true, fraction: true },
    { name: 'attention_flops', group: 'hardware', kind: 'bool', label: 'Attention-aware FLOPs for time', advanced: true },

    /* checkpoints */
    { name: 'writer_gbps', group: 'ckpt', kind: 'num', label: 'Per-writer bandwidth (GB/s)' },
    { name: 'nvme_gbps', group: 'ckpt', kind: 'num', label: 'NVMe per node (GB/s)' },
    { name: 'shared_gbps', group: 'ckpt', kind: 'num', label: 'Shared FS aggregate (GB/s)' },
    { name: 'object_gbps', group: 'ckpt', kind: 'num', label: 'Object store aggregate (GB/s)' },
    { name: 'nvme_interval_min', group: 'ckpt', kind: 'num', label: 'NVMe interval (min)' },
    { name: 'shared_interval_min', group: 'ckpt', kind: 'num', label: 'Shared interval (min)' },
    { name: 'object_interval_min', group: 'ckpt', kind: 'num', label: 'Object interval (min)' },
    { name: 'gpu_mtbf_hours', group: 'ckpt', kind: 'num', label: 'Per-GPU MTBF (hours)' },
    { name: 'job_mtbf_hours', group: 'ckpt', kind: 'num', label: 'Whole-job MTBF (hours)', advanced: true,
      hint: 'Empty: per-GPU MTBF / GPUs.' },
    { name: 'nvme_keep', group: 'ckpt', kind: 'int', label: 'NVMe copies kept', advanced: true },
    { name: 'shared_keep', group: 'ckpt', kind: 'int', label: 'Shared copies kept', advanced: true },
    { name: 'object_keep', group: 'ckpt', kind: 'int', label: 'Object copies kept', advanced: true },
    { name: 'ckpt_grads', group: 'ckpt', kind: 'bool', label: 'Checkpoint gradients too', advanced: true },
    { name: 'parallel_save', group: 'ckpt', kind: 'bool', label: 'Every DP rank writes a slice', advanced: true },
];

export const FIELD_BY_NAME = new Map(FIELDS.map((f) => [f.name, f]));

/* What a first visit shows: a run that fits and is easy to read.  Full
 * recompute because Llama 3 8B at its 8192 context does not fit 80 GB per
 * GPU with stored activations (the plan would just say DOES NOT FIT). */
export const DEFAULT_STATE = {
    model: 'llama3-8b',
    gpu: 'h100-sxm',
    gpus: '8',
    zero: '1',
    recompute: 'full',
};

/* Fine-tuning defaults: a 100M-token set seen 3 times, LoRA rank 16
 * (Hu et al. 2021 use r = 4..64; QLoRA, Dettmers et al. 2023, uses 64). */
export const FT_DEFAULTS = { dataset_tokens: 1e8, epochs: 3, lora_rank: 16 };
export const DEFAULT_MARGIN = 0.10;

/* Suffixes people type: 8k, 15T, 1.5B, 70M.  k is 1024 only for fields that
 * count in powers of two by convention (sequence length: "8k context" =
 * 8192); elsewhere SI (15T tokens = 15e12). */
const SUFFIX = { k: 1e3, m: 1e6, b: 1e9, g: 1e9, t: 1e12, p: 1e15 };
const NUMBER_RE = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*([kmbgtp%]?)$/i;

/*
 * Parse one field's text.  Returns { value } (a JSON value), { unset: true }
 * for an empty field, or { error } with a message for the field.
 * Accepts "4,096", "4 096", "4_096", "8k", "15T", "40%" (fraction fields).
 */
export function parseField(field, text) {
    if (text === undefined || text === null) return { unset: true };
    const s = String(text).trim();
    if (s === '') return { unset: true };
    switch (field.kind) {
    case 'int':
    case 'num': {
        /* a comma is a thousands separator only between groups of 3 digits */
        const bare = s.replace(/(\d)[,_ ](?=\d{3}(?:\D|$))/g, '$1');
        const m = NUMBER_RE.exec(bare);
        if (!m) return { error: 'not a number; write e.g. 4096, 4,096, 8k, 1.5e13 or 15T' };
        let v = Number(m[1]);
        const suf = m[2].toLowerCase();
        if (suf === '%') {
            if (!field.fraction) return { error: '% only applies to fractions (MFU, margin)' };
            v /= 100;
        } else if (suf) {
            v *= suf === 'k' && field.binaryK ? 1024 : SUFFIX[suf];
        }
        if (!Number.isFinite(v)) return { error: 'too large' };
        if (field.kind === 'int' && !Number.isInteger(v)) {
            return { error: `a whole number is needed (${s} is ${v})` };
        }
        /* 10% typed as 10: a fraction field over 1 is almost surely meant as % */
        return { value: v };
    }
    case 'zero':
        return /^[0-3]$/.test(s) ? { value: Number(s) } : { error: 'ZeRO stage is 0, 1, 2 or 3' };
    case 'bool':
        if (s === 'true') return { value: true };
        if (s === 'false') return { value: false };
        return { value: s };
    default:
        return { value: s };
    }
}

export function modeOf(state) {
    return MODES.some((m) => m.id === state.mode) ? state.mode : 'pretrain';
}

/*
 * The request body for a state (field name -> text), and the fields whose
 * text does not parse (name -> message).  Key order follows FIELDS so the
 * body (and the URL) read the same every time.  Fine-tune modes send
 * tokens = dataset tokens x epochs and the LoRA inputs; pre-training sends
 * neither.
 */
export function buildRequest(state) {
    const body = {};
    const errors = {};
    const mode = modeOf(state);
    const vals = {};
    for (const f of FIELDS) {
        if (mode === 'pretrain' && (f.finetune || f.lora)) continue;
        if (mode !== 'pretrain' && f.pretrain) continue;
        if ((mode === 'full') && f.lora) continue;
        const r = parseField(f, state[f.name]);
        if (r.error) errors[f.name] = r.error;
        else if (!r.unset) vals[f.name] = r.value;
    }
    for (const f of FIELDS) {
        if (f.name in vals && !f.page) body[f.name] = vals[f.name];
        if (f.name === 'tokens' && mode !== 'pretrain' && !errors.dataset_tokens && !errors.epochs) {
            body.tokens = Math.round((vals.dataset_tokens ?? FT_DEFAULTS.dataset_tokens) * (vals.epochs ?? FT_DEFAULTS.epochs));
        }
        if (f.name === 'lora_rank' && (mode === 'lora' || mode === 'qlora') && !('lora_rank' in vals) && !errors.lora_rank) {
            body.lora_rank = FT_DEFAULTS.lora_rank;
        }
        if (f.name === 'frozen_precision' && mode === 'qlora' && !('frozen_precision' in vals)) {
            body.frozen_precision = 'nf4';
        }
    }
    return { body, errors, margin: vals.margin ?? DEFAULT_MARGIN, mode };
}

/* Kept for callers that only want the body. */
export function buildBody(state) {
    return buildRequest(state).body;
}

/* URL query <-> state.  A URL with any field in it is taken as the whole
 * state (no defaults mixed in), so "model=" keeps a custom model custom. */
export function stateFromQuery(search) {
    const q = new URLSearchParams(search);
    const state = {};
    let any = false;
    for (const f of FIELDS) {
        if (q.has(f.name)) {
            state[f.name] = q.get(f.name);
            any = true;
        }
    }
    return any ? state : { ...DEFAULT_STATE };
}

export function queryFromState(state) {
    const q = new URLSearchParams();
    for (const f of FIELDS) {
        const v = state[f.name];
        /* keep an explicit empty model so "custom" survives a reload */
        if (v !== undefined && (v !== '' || f.name === 'model')) q.set(f.name, v);
    }
    return q.toString();
}
