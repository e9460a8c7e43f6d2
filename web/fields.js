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
    { id: 'work', legend: 'Precision, optimizer and data' },
    { id: 'parallel', legend: 'Parallelism and memory savers' },
    { id: 'hardware', legend: 'Hardware' },
    { id: 'ckpt', legend: 'Checkpoints and failures' },
];

export const FIELDS = [
    /* model */
    { name: 'model', group: 'model', kind: 'model', label: 'Preset model',
      hint: 'A published model; the fields below override it.' },
    { name: 'params', group: 'model', kind: 'num', label: 'Parameters (count)',
      hint: 'Plain parameter count, e.g. 7e9, when there is no shape.', advanced: true },
    { name: 'layers', group: 'model', kind: 'int', label: 'Layers', advanced: true },
    { name: 'hidden', group: 'model', kind: 'int', label: 'Hidden size', advanced: true },
    { name: 'heads', group: 'model', kind: 'int', label: 'Attention heads', advanced: true },
    { name: 'kv_heads', group: 'model', kind: 'int', label: 'KV heads (GQA)', advanced: true },
    { name: 'ffn', group: 'model', kind: 'int', label: 'FFN width', advanced: true },
    { name: 'vocab', group: 'model', kind: 'int', label: 'Vocabulary', advanced: true },
    { name: 'experts', group: 'model', kind: 'int', label: 'Experts (MoE)', advanced: true },
    { name: 'top_k', group: 'model', kind: 'int', label: 'Experts per token (top-k)', advanced: true },
    { name: 'gated', group: 'model', kind: 'bool', label: 'Gated FFN (SwiGLU)', advanced: true },
    { name: 'tied_embeddings', group: 'model', kind: 'bool', label: 'Tied embeddings', advanced: true },

    /* precision, optimizer, the work */
    { name: 'precision', group: 'work', kind: 'enum', options: PRECISIONS, label: 'Weight precision' },
    { name: 'optimizer', group: 'work', kind: 'enum', options: OPTIMIZERS, label: 'Optimizer' },
    { name: 'seq', group: 'work', kind: 'int', label: 'Sequence length (tokens)' },
    { name: 'micro_batch', group: 'work', kind: 'int', label: 'Micro-batch (sequences per GPU)' },
    { name: 'global_batch', group: 'work', kind: 'int', label: 'Global batch (sequences per step)' },
    { name: 'tokens', group: 'work', kind: 'num', label: 'Training tokens',
      hint: 'e.g. 15e12; default: the preset\'s, else 20 × params.' },
    { name: 'grad_precision', group: 'work', kind: 'enum', options: PRECISIONS, label: 'Gradient precision', advanced: true },
    { name: 'compute_precision', group: 'work', kind: 'enum', options: PRECISIONS, label: 'Compute precision', advanced: true },
    { name: 'master_weights', group: 'work', kind: 'bool', label: 'FP32 master weights', advanced: true },
    { name: 'trainable_fraction', group: 'work', kind: 'num', label: 'Trainable fraction (0–1]', advanced: true },

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

    /* hardware */
    { name: 'gpu', group: 'hardware', kind: 'gpu', label: 'GPU model' },
    { name: 'mfu', group: 'hardware', kind: 'num', label: 'MFU (0–1]', hint: 'Model FLOPs utilisation, e.g. 0.4' },
    { name: 'hbm_gb', group: 'hardware', kind: 'num', label: 'HBM override (GB)', advanced: true },
    { name: 'peak_tflops', group: 'hardware', kind: 'num', label: 'Peak override (TFLOP/s)', advanced: true },
    { name: 'gpus_per_node', group: 'hardware', kind: 'int', label: 'GPUs per node', advanced: true },
    { name: 'overhead_gib', group: 'hardware', kind: 'num', label: 'Fixed overhead (GiB)', advanced: true },
    { name: 'fragmentation', group: 'hardware', kind: 'num', label: 'Fragmentation [0–0.5)', advanced: true },
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

const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/*
 * The JSON value to send for one field's text, or undefined for "not set".
 * Anything that is not a plain number goes as the raw string: the API then
 * rejects it naming the field, instead of the page guessing or clamping.
 */
export function toJsonValue(field, text) {
    if (text === undefined || text === null) return undefined;
    const s = String(text).trim();
    if (s === '') return undefined;
    switch (field.kind) {
    case 'int':
    case 'num':
    case 'zero':
        return NUMBER_RE.test(s) ? Number(s) : s;
    case 'bool':
        if (s === 'true') return true;
        if (s === 'false') return false;
        return s;
    default:
        return s;
    }
}

/* The request body for a state (field name -> text).  Key order follows
 * FIELDS so the body (and the URL) read the same every time. */
export function buildBody(state) {
    const body = {};
    for (const f of FIELDS) {
        const v = toJsonValue(f, state[f.name]);
        if (v !== undefined) body[f.name] = v;
    }
    return body;
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
