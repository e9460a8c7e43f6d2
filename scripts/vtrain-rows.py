#!/usr/bin/env python3
"""vTrain's measured Megatron-DeepSpeed iterations as step-time validation rows.

vTrain (Bang et al., MICRO 2024; github.com/VIA-Research/vTrain) validated
its simulator against iteration times measured with Megatron-DeepSpeed on
A100s: data/ground_truth_single.csv (1,440 runs on one node of 2-8 GPUs,
GPT of hidden 1,024 or 2,048) and data/ground_truth_multi.csv (109 runs of
GPT 3.6B-175B on 64-512 GPUs, TP 1-16).  Each run's simulation input is a
config file in config/validation/ (use_checkpoint, the network).

Two steps, as for llm-foundry (scripts/llmfoundry-rows.py), so that what
the records say is kept as our data and every request field traces to it:

  scripts/vtrain-rows.py extract VTRAIN_GIT_DIR > tests/validation/vtrain_records.json
  scripts/vtrain-rows.py rows tests/validation/vtrain_records.json main \\
      > tests/validation/step_time_vtrain.json
  scripts/vtrain-rows.py rows tests/validation/vtrain_records.json held \\
      > tests/validation/step_time_vtrain_heldback.json

`check RECORDS MAIN HELD [STEP_LAYER_C]` (the test vtrain-rows) fails when
the committed rows are not what `rows` makes of the records, or when the
host floor `floor RECORDS` measures is not core/ts_step_layer.c's
TS_STEP_HOST_MEGATRON_EAGER_S.  Held back, decided before any row was
run: every third run of each CSV in its order (index % 3 == 2).
"""
import csv
import io
import json
import re
import statistics
import subprocess
import sys

from rowsfile import rows_text

COMMIT = "f8dda8473a48b373b1d25f51f52d685bff5150c5"
REPO = "VIA-Research/vTrain"
CSV = {"single": "data/ground_truth_single.csv", "multi": "data/ground_truth_multi.csv"}
ORIGIN = {
    "single": "vTrain ground truth, one node (Megatron-DeepSpeed, A100)",
    "multi": "vTrain ground truth, 64-512 GPUs (Megatron-DeepSpeed, A100)",
}
COLS = {  # CSV header -> record key
    "Parameters (billion)": "params_b", "# GPUs": "gpus", "global batch": "global_batch",
    "micro batch": "micro_batch", "hidden size": "hidden", "attention heads": "heads",
    "# layers": "layers", "sequence length": "seq", "tensor parallelism": "tp",
    "data parallelism": "dp", "pipeline parallelism": "pp", "iteration time (ms)": "ms",
}
CFG = ("use_checkpoint", "use_gradient_bucket", "inter_node_bandwidth", "intra_node_bandwidth",
       "node_size", "gpu_name")

# Inputs no record of the runs gives; each is "assumed" in every row, with
# the reason here (the rows carry the key, the file's "about" the text).
ASSUMED = {
    "gpu": "a100-80: the records name the GPU only as 'A100' (config gpu_name); "
           "the 80GB part is assumed, as the one on which every run fits by this model's "
           "own memory estimate (on the 40GB part 34 of the main part's runs are predicted "
           "over its memory, 9 with ZeRO-1, and each ran): a choice by the model, not a record",
    "micro_batch": "the CSV's column; vTrain's own simulator replaces it by global_batch / dp "
                   "at PP 1 (src/config.py validate_config), the rows do not",
    "precision, compute_precision, dropout, attention, vocab, pos_embeddings, tied_embeddings, "
    "norm, ffn": "Megatron-DeepSpeed's GPT as vTrain models the runs (src/model/gpt_model.py, "
                 "gpt_modeling.py@%s): fp16 (.half()), dropout 0.1, scores materialised with "
                 "the fused softmax, learned positions of max_length, output tied to the "
                 "embedding, LayerNorm, MLP 4h; GPT-2 vocabulary (vocab_size 50257, "
                 "src/config.py) padded by Megatron to a multiple of 128 x tp" % COMMIT[:10],
    "framework, zero": "megatron, zero 0: vTrain models data parallelism as whole-gradient "
                       "all-reduce (PyTorch DDP, use_gradient_bucket); the runs' ZeRO stage is "
                       "not recorded (a --deepspeed launch would read as deepspeed, ZeRO 1 by "
                       "Megatron-DeepSpeed's default)",
    "qkv_bias, out_bias, mlp_bias, norm_bias": "true: Megatron-DeepSpeed's GPT and vTrain's model "
                                               "of it (src/model/gpt_modeling.py: biased parallel "
                                               "linears, bias-GeLU, bias-dropout-add, LayerNorm) "
                                               "have them",
    "sequence_parallel": "false: not in vTrain's model of the runs",
    "gpus_per_node": "8: config node_size 8 (vTrain's cluster model)",
}


def git_show(repo, path):
    return subprocess.run(["git", "-C", repo, "show", "%s:%s" % (COMMIT, path)], check=True,
                          capture_output=True, text=True).stdout


def num(s):
    v = float(s)
    return int(v) if v == int(v) and "." not in s else v


def extract(repo):
    names = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", COMMIT,
                            "config/validation"], check=True, capture_output=True,
                           text=True).stdout.split()
    multi_cfg = {}
    for n in names:
        if "/multi/" in n:
            cfg = json.loads(git_show(repo, n))
            key = (cfg["tensor_parallel_size"], cfg["data_parallel_size"],
                   cfg["pipeline_parallel_size"], cfg["micro_batch_size"], cfg["hidden_size"],
                   cfg["num_layers"], cfg["global_batch_size"])
            assert key not in multi_cfg, n
            multi_cfg[key] = (n, cfg)
    out = []
    for kind, path in CSV.items():
        text = git_show(repo, path).lstrip("\ufeff")
        for i, rec in enumerate(csv.DictReader(io.StringIO(text))):
            r = {"file": kind, "index": i, "line": i + 2}
            for k, v in rec.items():
                r[COLS[k.strip()]] = num(v.strip())
            assert r["gpus"] == r["tp"] * r["dp"] * r["pp"], r
            if kind == "single":
                cpath = "config/validation/single/config_val_single_%04d.json" % i
                cfg = json.loads(git_show(repo, cpath))
            else:
                cpath, cfg = multi_cfg[(r["tp"], r["dp"], r["pp"], r["micro_batch"], r["hidden"],
                                        r["layers"], r["global_batch"])]
            for a, b in (("tensor_parallel_size", "tp"), ("data_parallel_size", "dp"),
                         ("pipeline_parallel_size", "pp"), ("hidden_size", "hidden"),
                         ("num_attention_heads", "heads"), ("num_layers", "layers"),
                         ("max_length", "seq"), ("global_batch_size", "global_batch"),
                         ("num_gpus", "gpus")):
                assert cfg[a] == r[b], (cpath, a, cfg[a], r[b])
            r["config"] = cpath
            for k in CFG:
                r[k] = cfg[k]
            out.append(r)
    sys.stdout.write(rows_text({"about": "vTrain's measured runs (%s data/*.csv@%s) and each "
                                         "run's simulation config (config/validation/)" %
                                         (REPO, COMMIT[:10])}, out, "records"))


def vocab(tp):
    mult = 128 * tp  # megatron/tokenizer/tokenizer.py _vocab_size_with_padding
    return (50257 + mult - 1) // mult * mult


def row(r):
    csvat = "%s %s@%s line %d" % (REPO, CSV[r["file"]], COMMIT[:10], r["line"])
    cfgat = "%s %s@%s" % (REPO, r["config"], COMMIT[:10])
    assert r["gpu_name"] == "A100" and r["node_size"] == 8, r
    # inter_node_bandwidth is the node's total in Gb/s (src/config.py
    # docstring); net_gbps is GB/s per GPU one way.
    net = r["inter_node_bandwidth"] / 8.0 / r["node_size"]
    req = {
        "layers": r["layers"], "hidden": r["hidden"], "heads": r["heads"],
        "ffn": 4 * r["hidden"], "vocab": vocab(r["tp"]), "pos_embeddings": r["seq"],
        "tied_embeddings": True, "norm": "layernorm", "qkv_bias": True, "out_bias": True,
        "mlp_bias": True, "norm_bias": True, "dropout": True, "seq": r["seq"],
        "gpu": "a100-80", "gpus": r["gpus"], "gpus_per_node": r["node_size"],
        "tp": r["tp"], "pp": r["pp"], "micro_batch": r["micro_batch"],
        "global_batch": r["global_batch"], "zero": 0, "framework": "megatron",
        "attention": "eager", "recompute": "full" if r["use_checkpoint"] else "none",
        "sequence_parallel": False, "precision": "fp16", "compute_precision": "fp16",
        # use_gradient_bucket false: vTrain models the runs' data-parallel
        # all-reduce as one whole-gradient collective after the last
        # backward (src/predictor.py, "comm across dp"), not overlapped.
        "overlap_grad_reduce": bool(r["use_gradient_bucket"]),
    }
    if r["gpus"] > r["node_size"]:
        req["net_gbps"] = net
    name = "vTrain %s %d: h %d L %d s %d, %d GPUs TP %d DP %d PP %d, mb %d gb %d" % (
        r["file"], r["index"], r["hidden"], r["layers"], r["seq"], r["gpus"], r["tp"], r["dp"],
        r["pp"], r["micro_batch"], r["global_batch"])
    record = {
        "layers, hidden, heads, seq, gpus, tp, pp, micro_batch, global_batch, measured": csvat,
        "recompute, gpus_per_node": cfgat + " use_checkpoint, node_size",
        "overlap_grad_reduce": cfgat + " use_gradient_bucket %s (%s src/predictor.py@%s: the "
        "data-parallel all-reduce one collective after the last backward)" % (
            "true" if r["use_gradient_bucket"] else "false", REPO, COMMIT[:10]),
    }
    if "net_gbps" in req:
        record["net_gbps"] = cfgat + " inter_node_bandwidth %g Gb/s per node" % \
            r["inter_node_bandwidth"]
    return {"name": name, "origin": ORIGIN[r["file"]],
            "group": "one node" if r["file"] == "single" else "64-512 GPUs",
            "request": req, "measured": {"seconds_per_step": r["ms"] / 1000.0},
            "source": "%s %s@%s" % (REPO, CSV[r["file"]], COMMIT[:10]),
            "record": record, "assumed": {k: "see the file's about" for k in ASSUMED}}


def make(records, part):
    recs = json.load(open(records))["records"]
    pick = [r for r in recs if (r["index"] % 3 == 2) == (part == "held")]
    head = {
        "about": "vTrain's ground truth (Bang et al., MICRO 2024; %s data/ground_truth_single.csv "
                 "and ground_truth_multi.csv@%s): iteration times measured with Megatron-DeepSpeed "
                 "on A100s, GPT of hidden 1,024-12,288 on 2-512 GPUs, TP 1-16 (issue 30: small "
                 "models, and TP groups across nodes). Rows made by scripts/vtrain-rows.py from "
                 "tests/validation/vtrain_records.json. Held back before any row was run: every "
                 "third run of each CSV (index %% 3 == 2). Every row has assumed inputs: %s"
                 % (REPO, COMMIT[:10], "; ".join("%s: %s" % kv for kv in ASSUMED.items())),
        "tolerance": 0.25, "median_tolerance": 0.10, "rows_gated": False,
    }
    if part == "held":
        head["fits_gated"] = False
    return rows_text(head, [row(r) for r in pick])


# The host floor of Megatron's legacy layer (core/ts_step_layer.c): the
# one-node main-part runs with the least GPU work per layer (hidden 1,024,
# micro-batch 1, PP 1, TP 1-4; TP 8 costs more for a reason not modelled),
# median seconds per layer and micro-batch, over the layer's 52 modelled
# base kernels (forward 16, its recompute 16, backward 20).
FLOOR_KERNELS = 52


def floor(records):
    recs = json.load(open(records))["records"]
    per = [r["ms"] / 1e3 / (r["layers"] * (r["global_batch"] // r["dp"] // r["micro_batch"]))
           for r in recs
           if r["index"] % 3 != 2 and r["file"] == "single" and r["hidden"] == 1024
           and r["micro_batch"] == 1 and r["pp"] == 1 and r["tp"] <= 4]
    med = statistics.median(per)
    return len(per), med, med / FLOOR_KERNELS


def main(argv):
    if len(argv) == 3 and argv[1] == "extract":
        extract(argv[2])
    elif len(argv) == 4 and argv[1] == "rows":
        sys.stdout.write(make(argv[2], argv[3]))
    elif len(argv) == 3 and argv[1] == "floor":
        n, med, per = floor(argv[2])
        print("%d rows, median %.4f ms per layer and micro-batch, %.2f us per kernel"
              % (n, med * 1e3, per * 1e6))
    elif len(argv) in (5, 6) and argv[1] == "check":
        for part, path in (("main", argv[3]), ("held", argv[4])):
            if make(argv[2], part) != open(path).read():
                sys.stderr.write("%s is not what `rows %s` makes of %s\n" % (path, part, argv[2]))
                return 1
        print("vtrain-rows: both files match the records")
        if len(argv) == 6:
            m = re.search(r"#define TS_STEP_HOST_MEGATRON_EAGER_S ([0-9.]+)e-6", open(argv[5]).read())
            n, med, per = floor(argv[2])
            if m is None or round(per * 1e6) != float(m.group(1)):
                sys.stderr.write("%s: TS_STEP_HOST_MEGATRON_EAGER_S is not the measured %.2f us "
                                 "(%d rows, median %.4f ms)\n" % (argv[5], per * 1e6, n, med * 1e3))
                return 1
            print("vtrain-rows: the host floor is the measured %.2f us (%d rows)" % (per * 1e6, n))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
