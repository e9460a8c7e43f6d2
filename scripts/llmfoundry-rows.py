#!/usr/bin/env python3
"""llm-foundry's published benchmark sweep as step-time validation rows.

Two steps, so that what the runs' own records say is kept as our data and
every request field can be traced to it:

  scripts/llmfoundry-rows.py extract LLM_FOUNDRY_GIT_DIR \
      > tests/validation/llmfoundry_records.json
  scripts/llmfoundry-rows.py rows tests/validation/llmfoundry_records.json \
      > tests/validation/step_time_llmfoundry.json

and `check RECORDS ROWS` (the test llmfoundry-rows) fails when the
committed rows are not what `rows` makes of the records.

`extract` reads, with `git show`, a clone of mosaicml/llm-foundry:

  README   scripts/train/benchmarking/README.md@495218376: the tables
           "H100 80GB BF16 (Large Scale, >= 128 GPUs)", "H100 80GB BF16"
           and "A100 80GB with 1600 Gbps node-node interconnect (RoCE)";
           each row's shape, batch, MP Mode, Sharding Strategy,
           Activation Checkpointing and Throughput (T/s/GPU) columns.
  RUNLOG   scripts/train/benchmarking/h100new.csv@beb8dee69 (removed in
           803e67182): the collected results behind PR #543's tables, with
           the Image every run used.  A README row is matched to the log
           row with the same model, seq, GPUs, GPU, micro-batch, grad
           accumulation and T/s/GPU.
  SUBMIT   submit_benchmarks.py: attn_impl as launched (its default,
           triton, which sweep.sh@b2a43a147 does not override), norm type.
  SWEEP838 scripts/train/benchmarking/sweep.py@5e85bd62d (PR #838): the
           ">= 128 GPUs" table's per-model attn_impl; the same PR's
           submit_benchmarks.py installs llm-foundry main with
           pip_install '.[gpu-flash2]', so setup.py@5e85bd62d's pins give
           the FlashAttention (2.4.2) and torch (2.1.0) the runs used.  Its
           --image is a placeholder, so those rows send no CUDA (it does not
           enter the step time; the reason is in the record).
  YAML     scripts/train/yamls/pretrain/mpt-<size>.yaml: d_model, n_heads,
           n_layers, expansion_ratio 4, vocab 50368; MPT config
           (llmfoundry/models/mpt/configuration_mpt.py): learned position
           embedding of max_seq_len rows (NumParams grows by d_model per
           extra position), tied output embedding.

The records file holds only the facts, one object per row, with `record`
naming path@commit for each input and `assumed` giving the reason for an
input no record holds.  `rows` turns them into POST /v1/compute bodies:
image -> cuda, attn_impl -> attention, Sharding Strategy -> zero
(FULL_SHARD 3, SHARD_GRAD_OP 2), MP Mode -> grad_precision (Composer's
get_mixed_precision, composer/distributed/mosaic_parallelism.py@1b7ba4789:
DEFAULT reduces in fp32, PURE in the compute dtype).
"""
import csv
import io
import json
import re
import subprocess
import sys

from rowsfile import rows_text

README = ("scripts/train/benchmarking/README.md", "495218376")
RUNLOG = ("scripts/train/benchmarking/h100new.csv", "beb8dee69")
SWEEP838 = ("scripts/train/benchmarking/sweep.py", "5e85bd62d")
SUBMIT838 = ("scripts/train/benchmarking/submit_benchmarks.py", "5e85bd62d")
SETUP838 = ("setup.py", "5e85bd62d")
TABLES = {
    "## H100 80GB BF16 (Large Scale, >= 128 GPUs)": "H100 BF16 >= 128 GPUs",
    "## H100 80GB BF16": "H100 BF16",
    "## A100 80GB with 1600 Gbps node-node interconnect (RoCE)": "A100 80GB",
}
# The commit whose launcher and yamls a table's runs used: PR #543's run
# log is dated 2023-08 (beb8dee69); PR #838 merged as 5e85bd62d; the two
# A100 70b rows and one 125m row predate #543 or are not in its log.
SHAPES = {  # d_model, n_heads, n_layers (the mpt-<size>.yaml)
    "125m": (768, 12, 12), "350m": (1024, 16, 24), "760m": (1536, 12, 24),
    "1b": (2048, 16, 24), "3b": (2560, 20, 32), "7b": (4096, 32, 32),
    "13b": (5120, 40, 40), "30b": (7168, 56, 48), "70b": (8192, 64, 80),
}
# MPT's block as llm-foundry writes it (llmfoundry/models/mpt/modeling_mpt.py,
# models/layers/blocks.py, attention.py @beb8dee69 and @5e85bd62d) runs
# eager but has none of the passes trainsize's layer_impl eager charges.
LAYER_WHY = (
    "llmfoundry/models/layers/blocks.py and attention.py@beb8dee69 (@5e85bd62d alike): MPT's "
    "block has no pass that layer_impl eager charges: low_precision_layernorm is one "
    "F.layer_norm, positions are learned (no rotary), the MLP is one GELU, attention is MHA "
    "(no repeat_kv), and triton_flash_attn_fn's output (attn_output.view) and flash_attn_fn's "
    "(bert_padding.pad_input) are already b s (h d), so nothing is copied contiguous for "
    "out_proj: fused")
GPU = {"h100_80gb": "h100-sxm", "a100_80gb": "a100-80"}


def at(path, commit):
    return "%s@%s" % (path, commit)


def git_show(repo, path, commit):
    return subprocess.run(["git", "-C", repo, "show", "%s:%s" % (commit, path)],
                          check=True, capture_output=True, text=True).stdout


def yaml_shape(repo, size, commit):
    """d_model, n_heads, n_layers, vocab_size and attn_impl of an mpt yaml."""
    text = git_show(repo, "scripts/train/yamls/pretrain/mpt-%s.yaml" % size, commit)
    out = {}
    for key in ("d_model", "n_heads", "n_layers", "vocab_size", "expansion_ratio"):
        m = re.search(r"^\s+%s:\s*(\d+)" % key, text, re.M)
        out[key] = int(m.group(1))
    return out


def sweep838_attn(repo):
    """model size -> attn_impl from PR #838's sweep.py."""
    text = git_show(repo, *SWEEP838)
    return {m.group(1): m.group(2) for m in re.finditer(
        r"--model_yamls (\w+)\.yaml'.*?--attn_impl (\w+)'", text, re.S)}


def install838(repo):
    """What PR #838's launcher installed: submit_benchmarks.py@5e85bd62d
    run_config's git_repo integration pip-installs llm-foundry main with
    the gpu-flash2 extra, so setup.py@5e85bd62d's pins hold: the extra's
    flash-attn and the torch range (one release, 2.1.0)."""
    sub = git_show(repo, *SUBMIT838)
    assert "'pip_install': '.[gpu-flash2]'" in sub, "PR #838's launcher no longer installs gpu-flash2"
    setup = git_show(repo, *SETUP838)
    fa = re.search(r"extra_deps\['gpu-flash2'\] = \[\s*'flash-attn==([\d.]+)'", setup).group(1)
    lo, hi = re.search(r"'torch>=([\d.]+),<([\d.]+)'", setup).groups()
    why = ("%s run_config installs llm-foundry main with pip_install '.[gpu-flash2]'; %s pins "
           "flash-attn==%s for gpu-flash2 and torch>=%s,<%s" % (at(*SUBMIT838), at(*SETUP838),
                                                               fa, lo, hi))
    return fa, lo, why


def submit_default_attn(repo, commit):
    text = git_show(repo, "scripts/train/benchmarking/submit_benchmarks.py", commit)
    return re.search(r"'--attn_impl', type=str, default='(\w+)'", text).group(1)


def extract(repo):
    runlog = {}
    for r in csv.DictReader(io.StringIO(git_show(repo, *RUNLOG))):
        key = (r["Model"], r["SeqLen (T)"], r["# GPUs"], r["GPU"], r["MicroBatchSize"],
               r["GradAccum"], r["Throughput (T/s/GPU)"])
        runlog.setdefault(key, r)
    attn838 = sweep838_attn(repo)
    fa838, torch838, why838 = install838(repo)
    assert fa838.startswith("2."), "the flash rate trainsize uses is FlashAttention-2's"
    rows = []
    table = None
    for line in git_show(repo, *README).splitlines():
        if line.startswith("## "):
            table = TABLES.get(line.strip())
            continue
        if table is None or not line.startswith("|  ") or "Model" in line or "---" in line:
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        size, seq, gpus, gpu = c[0], int(c[1]), int(c[2]), c[3]
        key = (c[0], c[1], c[2], c[3], c[7], c[8], c[12])
        log = runlog.get(key)
        readme = at(*README) + " table '%s'" % table
        row = {
            "table": table, "model": size, "seq": seq, "gpus": gpus, "gpu": gpu,
            "micro_batch": int(c[7]), "grad_accum": int(c[8]), "global_batch": int(c[9]),
            "tokens_per_gpu_second": float(c[12]), "precision": c[14], "mp_mode": c[15],
            "sharding": c[16], "activation_checkpointing": c[17] == "True",
            "num_params": int(c[19]),
        }
        record = {"columns": readme}
        assumed = {}
        if table == "H100 BF16 >= 128 GPUs":
            commit = "5e85bd62d"
            row["attn_impl"] = attn838[size]
            record["attn_impl"] = at(*SWEEP838) + " --attn_impl for %s.yaml" % size
            if row["attn_impl"] == "flash":
                record["attn_impl"] += "; FlashAttention %s: %s" % (fa838, why838)
            row["image"] = None
            row["torch"] = torch838
            record["torch"] = why838
            # Not an input trainsize needs: the CUDA toolkit does not enter
            # the step time (docs/fields.md, cuda), so none is sent.
            record["cuda (not sent)"] = (
                "sweep.py@5e85bd62d passes '--image <insert_image_name>', so the CUDA toolkit "
                "is not recorded; it does not enter the step time")
        else:
            commit = "beb8dee69" if log is not None else (
                "300cc5c58" if row["mp_mode"] == "PURE" else "b2a43a147")
            row["attn_impl"] = submit_default_attn(repo, commit)
            record["attn_impl"] = at("scripts/train/benchmarking/submit_benchmarks.py", commit) + \
                " --attn_impl default (the sweep passes none)"
            if log is not None:
                row["image"] = log["Image"]
                record["image"] = at(*RUNLOG) + " Image column of the matching run"
            else:
                row["image"] = None
                # recompute_impl needs the PyTorch, which no record gives here.
                row["torch_assumed"] = "1.13.1" if row["mp_mode"] == "PURE" else "2.1"
                record["cuda (not sent)"] = (
                    "not in the run log %s (submit_benchmarks.py@300cc5c58's default image, "
                    "pytorch:1.13.1_cu117, for the pre-#543 PURE rows); the CUDA toolkit does not "
                    "enter the step time" % at(*RUNLOG))
        # The yamls moved to yamls/pretrain/ after 300cc5c58; the shapes
        # did not change, so the older rows cite PR #543's yaml.
        ycommit = "5e85bd62d" if commit == "5e85bd62d" else "beb8dee69"
        shape = yaml_shape(repo, size, ycommit)
        assert (shape["d_model"], shape["n_heads"], shape["n_layers"]) == SHAPES[size]
        row["shape"] = shape
        record["shape"] = (at("scripts/train/yamls/pretrain/mpt-%s.yaml" % size, ycommit) +
                           "; learned position embedding and tied output embedding: "
                           "llmfoundry/models/mpt/configuration_mpt.py@" + ycommit)
        record["norm"] = at("scripts/train/benchmarking/submit_benchmarks.py", commit) + \
            " norm_type low_precision_layernorm"
        row["record"] = record
        if assumed:
            row["assumed"] = assumed
        rows.append(row)
    out = {
        "about": "Facts of llm-foundry's published MPT benchmark runs (mosaicml/llm-foundry), "
                 "one object per README table row, extracted by scripts/llmfoundry-rows.py "
                 "extract: the columns of the table, the Image the run log recorded, "
                 "attn_impl as launched, the model yaml's shape. `record` names path@commit "
                 "for each input; `assumed` gives the reason for an input no record holds.",
    }
    write_rows(out, rows)


def write_rows(head, rows):
    sys.stdout.write(rows_text(head, rows))


def image_cuda(image):
    """mosaicml/pytorch:2.1.0_cu121-... -> 12.1"""
    m = re.search(r"_cu(\d+)(\d)(?:\D|$)", image)
    return float("%s.%s" % (m.group(1), m.group(2)))


def torch_version(v):
    """'2.1.0' -> (2, 1)"""
    return tuple(int(x) for x in v.split(".")[:2])


def recompute_impl(r, record, assumed, composer):
    """Full recompute's implementation: Composer wraps each block in
    torch's checkpoint_wrapper NO_REENTRANT (the mpt-*.yaml files set
    activation_checkpointing_reentrant: false; composer
    trainer/dist_strategy.py@v0.16.3), which stops early from PyTorch 2.1
    (pytorch/pytorch#96866) and reruns the whole block before it."""
    why = ("scripts/train/yamls/pretrain/mpt-%s.yaml activation_checkpointing_reentrant: false "
           "(composer trainer/dist_strategy.py@%s checkpoint_wrapper NO_REENTRANT)" % (
               r["model"], composer))
    if r["image"] is not None:
        m = re.search(r"pytorch:(\d+)\.(\d+)", r["image"])
        torch = (int(m.group(1)), int(m.group(2)))
        record["recompute_impl"] = why + "; PyTorch from " + r["record"]["image"] + \
            " (%s)" % r["image"]
    elif "torch" in r:
        torch = torch_version(r["torch"])
        record["recompute_impl"] = why + "; PyTorch %s: %s" % (r["torch"], r["record"]["torch"])
    elif r["torch_assumed"] == "1.13.1":
        torch = torch_version(r["torch_assumed"])
        assumed["recompute_impl"] = (
            why + "; PyTorch 1.13.1 (setup.py@300cc5c58 pins torch==1.13.1 and "
            "submit_benchmarks.py@300cc5c58's default image is pytorch:1.13.1_cu117): not in the "
            "run log, no early stop before 2.1")
    else:
        torch = torch_version(r["torch_assumed"])
        assumed["recompute_impl"] = (
            why + "; PyTorch 2.1 as the rest of #543's runs: not in the run log")
    return "non_reentrant" if torch >= (2, 1) else "reentrant"


LOSS_WHY = ("llmfoundry/models/mpt/modeling_mpt.py@beb8dee69 (@5e85bd62d, @b2a43a147; "
            "mosaic_gpt.py@300cc5c58 alike) ComposerMPTCausalLM: "
            "loss_fn defaults to fused_crossentropy, flash_attn.losses.cross_entropy.CrossEntropyLoss; "
            "no pretrain or benchmarking yaml sets loss_fn (only testing.yaml and mpt-small-cpu.yaml "
            "pick torch_crossentropy). flash-attn 1.0.9's xentropy (csrc/xentropy/README.md: bfloat16, "
            "no upcast) and 2.x's triton kernel both keep the bf16 logits and write bf16 gradients")


METRICS_WHY = ("llmfoundry/models/mpt/modeling_mpt.py@beb8dee69 (@5e85bd62d, @b2a43a147; "
               "mosaic_gpt.py@300cc5c58 alike) ComposerMPTCausalLM: use_train_metrics defaults to True, "
               "train metrics [LanguageCrossEntropy(), LanguagePerplexity()], and no benchmarking or "
               "pretrain yaml sets it; composer trainer/trainer.py@%s _train_microbatch runs "
               "_eval_train_metrics after every micro-batch's backward on the held outputs "
               "(models/huggingface.py eval_forward), and metrics/nlp.py LanguageCrossEntropy.update "
               "is torch.nn.CrossEntropyLoss(reduction='sum') over the logits")


UNPAD_WHY = ("llmfoundry/models/layers/attention.py@5e85bd62d flash_attn_fn: every call builds a "
             "key_padding_mask (all ones when none is passed), unpads q, k and v with "
             "flash_attn.bert_padding.unpad_input, runs flash_attn_varlen_func and pads the output "
             "back with pad_input (flash_attn/bert_padding.py@v2.4.2)")


FSDP1_WHY = ("composer trainer/dist_strategy.py@%s prepare_fsdp_module wraps the model in "
             "torch.distributed.fsdp.FullyShardedDataParallel (flat parameters)")


def rows(path):
    rec = json.load(open(path, encoding="utf-8"))
    out_rows = []
    for r in rec["rows"]:
        s = r["shape"]
        assumed = dict(r.get("assumed", {}))
        cuda = image_cuda(r["image"]) if r["image"] is not None else None
        # The Composer release the launch installed: llm-foundry's setup.py
        # pins mosaicml>=0.16.3,<0.17 up to PR #543 and >=0.17.2,<0.18 at
        # PR #838 (0.17.2, the last 0.17 release).
        composer = "v0.17.2" if "torch" in r else "v0.16.3"
        req = {
            "layers": s["n_layers"], "hidden": s["d_model"], "heads": s["n_heads"],
            "ffn": s["expansion_ratio"] * s["d_model"], "vocab": s["vocab_size"],
            "pos_embeddings": r["seq"], "tied_embeddings": True, "norm": "layernorm",
            "qkv_bias": True, "out_bias": True, "mlp_bias": True, "norm_bias": True,
            "seq": r["seq"], "gpu": GPU[r["gpu"]], "gpus": r["gpus"],
            "micro_batch": r["micro_batch"], "global_batch": r["global_batch"],
            "zero": {"FULL_SHARD": 3, "SHARD_GRAD_OP": 2}[r["sharding"]],
            "framework": "fsdp", "fsdp_impl": "fsdp1", "loss_impl": "fused", "logit_metrics": 2,
            "attention": r["attn_impl"], "layer_impl": "fused",
            "recompute": "full" if r["activation_checkpointing"] else "none",
            "grad_precision": "fp32" if r["mp_mode"] == "DEFAULT" else "bf16",
        }
        if cuda is not None:
            req["cuda"] = cuda
        if r["attn_impl"] == "flash":
            req["attention_unpad"] = True
        record = {
            "layers, hidden, heads, ffn, vocab, pos_embeddings, tied_embeddings": r["record"]["shape"],
            "norm": r["record"]["norm"],
            "qkv_bias, out_bias, mlp_bias, norm_bias": (
                "llmfoundry/models/mpt/configuration_mpt.py@5e85bd62d no_bias default False, "
                "set by no benchmark yaml; modeling_mpt.py@5e85bd62d drops the Linear and "
                "LayerNorm biases only under no_bias"),
            "seq, gpus, gpu, micro_batch, global_batch": r["record"]["columns"],
            "zero": r["record"]["columns"] + " (Sharding Strategy %s)" % r["sharding"],
            "grad_precision": r["record"]["columns"] + " (MP Mode %s; composer "
                              "mosaic_parallelism.py@1b7ba4789 get_mixed_precision)" % r["mp_mode"],
            "recompute": r["record"]["columns"] + " (Activation Checkpointing)",
            "attention": r["record"]["attn_impl"],
            "layer_impl": LAYER_WHY,
            "fsdp_impl": FSDP1_WHY % composer,
            "loss_impl": LOSS_WHY,
            "logit_metrics": METRICS_WHY % composer,
            "measured": r["record"]["columns"] + " (Throughput (T/s/GPU))",
        }
        if r["attn_impl"] == "flash":
            record["attention_unpad"] = UNPAD_WHY
        if "image" in r["record"]:
            record["cuda"] = r["record"]["image"] + " (%s)" % r["image"]
        if "cuda (not sent)" in r["record"]:
            record["cuda (not sent)"] = r["record"]["cuda (not sent)"]
        if r["activation_checkpointing"]:
            req["recompute_impl"] = recompute_impl(r, record, assumed, composer)
        if r["image"] is not None:
            # Not an input: trainsize costs eager kernels.
            record["torch.compile (off)"] = (
                "submit_benchmarks.py made torch.compile opt-in (--torch_compile, default False; "
                "compile_config None unless set) in f4e30a0de (2023-08-23). The run log's image is "
                "the 2023-08-27 nightly, so its runs were launched after that, and no sweep script "
                "from f4e30a0de to 803e67182 passes --torch_compile true (sweep.sh@2d5038f87's one "
                "such line is commented out); Composer compiles only when compile_config is not "
                "None (trainer/trainer.py@v0.16.3): eager PyTorch, whose MPT block has none of "
                "the passes layer_impl eager charges (see layer_impl)")
        row = {
            "name": "MPT-%s %s seq %d, %d GPUs, mb %d x %d%s%s" % (
                r["model"], r["gpu"].split("_")[0].upper(), r["seq"], r["gpus"],
                r["micro_batch"], r["grad_accum"],
                ", AC" if r["activation_checkpointing"] else "",
                ", zero 2" if r["sharding"] == "SHARD_GRAD_OP" else ""),
            "origin": "llm-foundry (Composer FSDP)",
            "group": r["table"].replace(" >= 128 GPUs", ""),
            "request": req,
            "measured": {"tokens_per_gpu_second": r["tokens_per_gpu_second"]},
            "source": "mosaicml/llm-foundry %s, table '%s': Throughput (T/s/GPU)" % (
                at(*README), r["table"]),
            "record": record,
        }
        if assumed:
            row["assumed"] = assumed
        out_rows.append(row)
    out = {
        "about": "Every row of llm-foundry's H100 BF16 (both tables) and A100 80GB benchmark "
                 "tables, outliers included, with the inputs the runs' own records give "
                 "(tests/validation/llmfoundry_records.json, scripts/llmfoundry-rows.py). Each "
                 "row's error is printed; per group the median, max and mean signed error; "
                 "the median is gated. The hand-picked calibration rows, each gated, are in "
                 "step_time.json.",
        "tolerance": 0.15,
        "median_tolerance": 0.1,
        "rows_gated": False,
    }
    return rows_text(out, out_rows)


def check(path, committed):
    """The committed rows file is what `rows` makes of the records: no
    input edited by hand past the records (the test llmfoundry-rows)."""
    want = rows(path)
    with open(committed, encoding="utf-8") as f:
        have = f.read()
    if have != want:
        sys.stderr.write("%s is not what scripts/llmfoundry-rows.py rows %s prints; regenerate "
                         "it (or edit the records, not the rows)\n" % (committed, path))
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["check"] and len(sys.argv) == 4:
        check(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "extract":
        extract(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "rows":
        sys.stdout.write(rows(sys.argv[2]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
