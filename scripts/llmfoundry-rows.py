#!/usr/bin/env python3
"""Turn llm-foundry's benchmark tables into step-time validation rows.

usage: scripts/llmfoundry-rows.py README.md > tests/validation/step_time_llmfoundry.json

README.md is mosaicml/llm-foundry scripts/train/benchmarking/README.md
(last changed in 495218376, 2024-04-22).  Every row of its "H100 80GB BF16"
and "A100 80GB" tables becomes a POST /v1/compute body; nothing is left
out, so the file measures the model on a whole published sweep, outliers
included.  Model shapes are the scripts/train/yamls/pretrain/mpt-*.yaml of
the benchmark commits (d_head 128 except 125m/350m; vocab 50368; GELU 4h
MLP; LayerNorm; tied embeddings; ALiBi); attn_impl triton is
submit_benchmarks.py's default; the images are 2.0.1_cu118 (H100 cluster)
and 1.13.1_cu117 (A100 clusters), set by submit_benchmarks.py.
"""
import json
import sys

SHAPES = {  # d_model, n_heads, n_layers
    "125m": (768, 12, 12), "350m": (1024, 16, 24), "760m": (1536, 12, 24),
    "1b": (2048, 16, 24), "3b": (2560, 20, 32), "7b": (4096, 32, 32),
    "13b": (5120, 40, 40), "30b": (7168, 56, 48), "70b": (8192, 64, 80),
}
TABLES = {"## H100 80GB BF16": ("h100-sxm", 11.8), "## A100 80GB": ("a100-80", 11.7)}
SOURCE = ("mosaicml/llm-foundry scripts/train/benchmarking/README.md (495218376), "
          "table '%s': Throughput (T/s/GPU)")


def main(path):
    table = None
    rows = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            table = next((k for k in TABLES if line.startswith(k)), None)
            continue
        if table is None or not line.startswith("|  ") or "Model" in line or "---" in line:
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        gpu, cuda = TABLES[table]
        h, a, layers = SHAPES[c[0]]
        seq, gpus, mb, ga, gb = int(c[1]), int(c[2]), int(c[7]), int(c[8]), int(c[9])
        ac = c[17] == "True"
        req = {
            "layers": layers, "hidden": h, "heads": a, "vocab": 50368,
            "tied_embeddings": True, "norm": "layernorm", "seq": seq, "gpu": gpu,
            "gpus": gpus, "micro_batch": mb, "global_batch": gb, "zero": 3,
            "framework": "fsdp", "attention": "triton",
            "recompute": "full" if ac else "none",
            # DEFAULT mixed precision reduces fp32 grads; PURE reduces bf16.
            "grad_precision": "fp32" if c[15] == "DEFAULT" else "bf16",
            "cuda": cuda,
        }
        rows.append({
            "name": "MPT-%s %s seq %d, %d GPUs, mb %d x %d%s" % (
                c[0], gpu.split("-")[0].upper(), seq, gpus, mb, ga, ", AC" if ac else ""),
            "request": req,
            "measured": {"tokens_per_gpu_second": float(c[12])},
            "source": SOURCE % table[3:],
        })
    out = {
        "about": "Every row of llm-foundry's H100 BF16 and A100 80GB benchmark tables "
                 "(scripts/llmfoundry-rows.py), outliers included: each row's error is "
                 "printed, the median is gated. The hand-picked calibration rows, each "
                 "gated, are in step_time.json.",
        "tolerance": 0.15,
        "median_tolerance": 0.1,
        "rows_gated": False,
        "rows": rows,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
