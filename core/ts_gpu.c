/*
 * ts_gpu.c - the GPU catalogue.
 *
 * Dense tensor-core peaks only.  Vendor datasheets print the 2:4
 * structured-sparsity figure next to (and often larger than) the dense one;
 * training never runs at the sparse rate, so every number here is the dense
 * one, i.e. half the "with sparsity" figure.  HBM is what the driver
 * reports (nvidia-smi / rocm-smi "total"), not the marketing "80 GB":
 * every fit check compares with what the allocator can actually get
 * (oracles.md; e.g. NVIDIA/nccl#1264 for H100's 81559 MiB).
 */
#include "trainsize.h"

#include <string.h>

#define TFLOPS 1e12
#define MIB 1048576.0
#define TBS 1e12 /* TB/s in bytes/s */

static const ts_gpu ts_gpu_catalogue[] = {
    { "a100-40", "NVIDIA A100 SXM4 40GB",
      156 * TFLOPS, 312 * TFLOPS, 0, 40960 * MIB, 1.555 * TBS,
      "NVIDIA A100 Tensor Core GPU datasheet (dense TF32 156, BF16 312; no FP8)" },
    { "a100-80", "NVIDIA A100 SXM4 80GB",
      156 * TFLOPS, 312 * TFLOPS, 0, 81920 * MIB, 2.039 * TBS,
      "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM: 2,039 GB/s)" },
    { "h100-sxm", "NVIDIA H100 SXM5 80GB",
      494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS, 81559 * MIB, 3.35 * TBS,
      "NVIDIA H100 Tensor Core GPU datasheet, SXM (sparse figures halved)" },
    { "h100-pcie", "NVIDIA H100 PCIe 80GB",
      378 * TFLOPS, 756 * TFLOPS, 1513 * TFLOPS, 81559 * MIB, 2.0 * TBS,
      "NVIDIA H100 Tensor Core GPU datasheet, PCIe (sparse figures halved)" },
    { "h200", "NVIDIA H200 SXM 141GB",
      494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS, 143771 * MIB, 4.8 * TBS,
      "NVIDIA H200 Tensor Core GPU datasheet, SXM (sparse figures halved)" },
    { "b200", "NVIDIA B200 180GB",
      1100 * TFLOPS, 2250 * TFLOPS, 4500 * TFLOPS, 183359 * MIB, 8.0 * TBS,
      "NVIDIA DGX B200 / HGX B200 datasheet, per GPU (sparse figures halved)" },
    { "mi300x", "AMD Instinct MI300X 192GB",
      653.7 * TFLOPS, 1307.4 * TFLOPS, 2614.9 * TFLOPS, 205822885888.0, 5.3 * TBS,
      "AMD Instinct MI300X accelerator data sheet (dense matrix peaks)" },
    { "l40s", "NVIDIA L40S 48GB",
      183 * TFLOPS, 362 * TFLOPS, 733 * TFLOPS, 46068 * MIB, 0.864 * TBS,
      "NVIDIA L40S GPU datasheet (sparse figures halved)" },
    { "gh200", "NVIDIA GH200 Grace Hopper 96GB",
      494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS, 97871 * MIB, 4.0 * TBS,
      "NVIDIA GH200 Grace Hopper Superchip datasheet (96GB HBM3; H100 compute)" },
    { "v100-16", "NVIDIA V100 SXM2 16GB",
      15.7 * TFLOPS, 125 * TFLOPS, 0, 16160 * MIB, 0.9 * TBS,
      "NVIDIA Tesla V100 datasheet (FP16 tensor 125 TFLOP/s, FP32 15.7; no BF16 or TF32)" },
    { "v100-32", "NVIDIA V100 SXM2 32GB",
      15.7 * TFLOPS, 125 * TFLOPS, 0, 32510 * MIB, 0.9 * TBS,
      "NVIDIA Tesla V100 datasheet (FP16 tensor 125 TFLOP/s; 32GB: 32510 MiB in nvidia-smi)" },
    { "h100-nvl", "NVIDIA H100 NVL 94GB",
      417.5 * TFLOPS, 835 * TFLOPS, 1670 * TFLOPS, 95830 * MIB, 3.9 * TBS,
      "NVIDIA H100 NVL datasheet, per GPU (sparse figures halved)" },
    { "h100-96", "NVIDIA H100 SXM5 96GB",
      494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS, 97871 * MIB, 3.35 * TBS,
      "H100 SXM compute; 96GB HBM3 stack as GH200's (97871 MiB)" },
    { "gb200", "NVIDIA GB200 (per Blackwell GPU) 186GB",
      1250 * TFLOPS, 2500 * TFLOPS, 5000 * TFLOPS, 189471 * MIB, 8.0 * TBS,
      "NVIDIA GB200 NVL72 datasheet, per GPU (sparse figures halved)" },
    { "mi250x", "AMD Instinct MI250X (one GCD) 64GB",
      47.9 * TFLOPS, 191.5 * TFLOPS, 0, 68702699520.0, 1.6 * TBS,
      "AMD Instinct MI250X data sheet, per GCD (each GCD is one device: half the package)" },
    { "mi325x", "AMD Instinct MI325X 256GB",
      653.7 * TFLOPS, 1307.4 * TFLOPS, 2614.9 * TFLOPS, 274877906944.0, 6.0 * TBS,
      "AMD Instinct MI325X data sheet (dense matrix peaks; 256 GB HBM3E)" },
};

#define TS_GPU_N (sizeof ts_gpu_catalogue / sizeof ts_gpu_catalogue[0])

size_t ts_gpu_count(void)
{
    return TS_GPU_N;
}

const ts_gpu *ts_gpu_at(size_t i)
{
    return i < TS_GPU_N ? &ts_gpu_catalogue[i] : NULL;
}

const ts_gpu *ts_gpu_find(const char *id)
{
    size_t i;

    if (id == NULL)
        return NULL;
    /* Exact match: ids are the public, lower-case names the API echoes. */
    for (i = 0; i < TS_GPU_N; i++)
        if (strcmp(ts_gpu_catalogue[i].id, id) == 0)
            return &ts_gpu_catalogue[i];
    return NULL;
}

double ts_gpu_peak(const ts_gpu *g, ts_precision compute)
{
    if (g == NULL)
        return 0;
    switch (compute) {
    case TS_PREC_FP32:
        return g->fp32_flops; /* TF32 tensor cores: what fp32 training uses */
    case TS_PREC_BF16:
    case TS_PREC_FP16:
        return g->bf16_flops;
    case TS_PREC_FP8:
        return g->fp8_flops;
    case TS_PREC_COUNT:
    default:
        return 0;
    }
}
