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

#include <math.h>
#include <string.h>

#define TFLOPS 1e12
#define MIB    1048576.0
#define TBS    1e12 /* TB/s in bytes/s */

#define GBS 1e9 /* GB/s in bytes/s */

/* Network, host link and achievable-efficiency figures (issue 11), one
 * line per entry so the HBM / compute lines above them stay untouched.
 * nvlink: scale-up bandwidth per GPU, bidirectional, as datasheets print
 * it; net: scale-out NIC per GPU, one direction (400 Gb/s = 50 GB/s);
 * pcie: host link one direction.  mamf: Maximum Achievable Matmul FLOPS
 * (BF16, best of a shape scan) over the dense peak, and the shape that
 * reached it (S. Bekman, ml-engineering, compute/accelerator/README.md,
 * "Maximum Achievable Matmul FLOPS comparison table").  attn: fused
 * attention forward+backward fraction of peak in FlashAttention-2's FLOP
 * convention (backward 2.5x forward): ~60 % on A100 (Dao 2023, Fig. 4-5,
 * causal, head dim 128), ~35 % on H100 (Shah et al. 2024, FlashAttention-3,
 * Sec. 1); 37.6 % on MI300X: AMD's AITER FMHA v3 kernels, the ones
 * MLPerf v5.1's MI300X/MI325X Llama-2-70B LoRA runs select through ROCm
 * Transformer Engine (NVTE_CK_USES_FWD_V3/BWD_V3, bf16 atomics), measured
 * at that run's shape (batch 1, 64 query and 8 KV heads, s 8192, head dim
 * 128, causal: fwd 518.29, bwd 481.895 TFLOP/s in FA2's convention, causal
 * halved; ROCm/aiter op_tests/cpp/mha/README.md@a83421be):
 * 3.5 / (1/518.29 + 2.5/481.895) = 491.8 of 1307.4.  MI325X: the same
 * die and kernels, no measurement of its own (assumed).
 * sustain: Maximum Sustainable over Maximum Achievable Matmul FLOPS
 * (MSMF / MAMF, the same ml-engineering table at 082816f): a training
 * step keeps the chip at its power limit, where the SM clock settles
 * below the boost clock the MAMF burst runs at.  Measured on H200 SXM
 * (708.5 / 841.9, 700 W, 1465 vs 1980 MHz) and B200 (1456.3 / 1770.9,
 * 1000 W); H100 SXM (80 and 96 GB) is the same GH100 die at the same
 * 700 W limit.  GB200, B300, GB300: derived from B200's (settle_b200,
 * ts_gpu_settled).  Other GPUs: not measured, no derating.
 * MI300X and MI325X take the table's current BF16 rows
 * (stas00/ml-engineering@744d01e): MI300X 668.4 (torch 2.5.1 + ROCm 6.3),
 * which replaced the 781.9 of its ROCm 6.2 scan (removed in e695968),
 * and MI325X 784.9 (torch 2.6.0 + ROCm 6.2.4 at 1000 W) measured on the
 * part itself; the NVIDIA rows moved by under 1.5 % between the two.
 * GB200 takes its own row of that table (1822.0 of 2500 at
 * 4096x9728x2048, torch 2.10 + CUDA 13.0) as its burst.  Its MSMF is
 * not measured; it is B200's die at a 1,200 W limit where B200 has
 * 1,000 W, so its settled rate is B200's settled one at the clock the
 * larger budget buys (ts_gpu_settled below), not its burst.
 * mesh: no switch between the node's GPUs; each GPU's links run point to
 * point, split evenly over its peers (nvlink_topology).  V100 SXM2: six
 * NVLink 2 links (300 GB/s) and no NVSwitch on SXM2 boards (NVSwitch came
 * with the SXM3 DGX-2); a 4-GPU board gives each pair two.  MI300X and
 * MI325X: "seven ... Infinity Fabric links" per GPU, one to each of the
 * platform's other seven, 128 GB/s bidirectional each (AMD Instinct
 * MI300X platform data sheet: 896 GB/s per GPU).  MI250X stays
 * unmarked: its GCDs pair up inside a package over four links and reach
 * the other packages' over one or two, not an even split. */
#define TS_SUSTAIN_HOPPER_700W (708.5 / 841.9)
/* Hopper's sustain as measured: H200 SXM at 700 W (ts_gpu_sustain scales
 * it to a part held at a lower limit). */
#define SUSTAIN_HOPPER .sustain = TS_SUSTAIN_HOPPER_700W, .sustain_w = 700
/* B200's settled points, the MSMF rows of the same table at 082816f:
 * BF16 1456.3 TFLOP/s at ~994 W and 1339 MHz (9472x8192x20480), FP8
 * 2795.7 of the 4500 dense FP8 peak at ~990 W and 1331 MHz
 * (9472x8192x16384), a settled figure like the FP8 sweeps below. */
#define TS_B200_MSMF_BF16   1456.3
#define TS_B200_MSMF_BF16_W 994.0
#define TS_B200_MSMF_FP8    2795.7
#define TS_B200_MSMF_FP8_W  990.0
#define TS_SUSTAIN_B200     (TS_B200_MSMF_BF16 / 1770.9)
#define TS_B200_FP8_MSMF    (TS_B200_MSMF_FP8 / 4500)
#define NET(nv, ne, pc, mf, mm, mn, mk, at, src)                                      \
    .nvlink_bw = (nv), .net_bw = (ne), .pcie_bw = (pc), .mamf = (mf), .mamf_m = (mm), \
    .mamf_n = (mn), .mamf_k = (mk), .attn_eff = (at), .net_source = (src)
#define TS_NET_A100                                                                                \
    "DGX A100: NVLink3 600 GB/s, 8x HDR 200 Gb/s IB (25 GB/s per GPU), PCIe Gen4; MAMF 267.9/312 " \
    "(ml-engineering)"
#define TS_NET_H100                                                                             \
    "DGX H100: NVLink4 900 GB/s, 8x NDR 400 Gb/s (50 GB/s per GPU), PCIe Gen5; MAMF 792.1/989 " \
    "(ml-engineering)"
#define TS_NET_H100_PCIE                                                                       \
    "H100 PCIe: no NVSwitch, peers over PCIe Gen5 x16 (128 GB/s bidirectional); 400 Gb/s NIC " \
    "assumed; MAMF ratio of H100 SXM assumed"
#define TS_NET_B200                                                                              \
    "DGX B200: NVLink5 1.8 TB/s, 400 Gb/s ConnectX-7 per GPU; MAMF 1745/2250 (ml-engineering); " \
    "attention fraction of H100 assumed"
#define TS_NET_B300                                                                         \
    "DGX B300: NVLink5 1.8 TB/s, 800 Gb/s ConnectX-8 per GPU, PCIe Gen6; MAMF 1769.0/2250 " \
    "(ml-engineering, torch 2.9.1 + cu130); settled rate B200's at 1,100 W (derived); "     \
    "attention fraction of H100 assumed"
#define TS_NET_GB300                                                                            \
    "GB300 NVL72: NVLink5 1.8 TB/s (set gpus_per_node 72 for the NVL72 domain), NVLink-C2C to " \
    "Grace, 800 Gb/s ConnectX-8 per GPU; MAMF of B300 (the same Blackwell Ultra die) assumed, " \
    "settled rate B200's at 1,400 W (derived); attention fraction of H100 assumed"
#define TS_NET_MI300X                                                                          \
    "AMD MI300X: Infinity Fabric 896 GB/s per GPU, 400 Gb/s NIC assumed; MAMF 668.4/1300 "     \
    "(ml-engineering, torch 2.5.1 + ROCm 6.3); attention 0.376: AITER FMHA v3 (bf16, causal, " \
    "s 8192, d 128) fwd 518.3 + bwd 481.9 TFLOP/s (ROCm/aiter op_tests/cpp/mha/README.md)"
#define TS_NET_MI325X                                                                           \
    "AMD MI325X: Infinity Fabric 896 GB/s per GPU, 400 Gb/s NIC assumed; MAMF 784.9/1300 "      \
    "(ml-engineering, torch 2.6.0 + ROCm 6.2.4, 1000 W); attention fraction of MI300X assumed " \
    "(the same gfx942 die and AITER kernels; no MI325X measurement)"
#define TS_NET_L40S                                                                             \
    "L40S: no NVLink, PCIe Gen4 x16 (64 GB/s bidirectional); 400 Gb/s NIC assumed; matmul and " \
    "attention fractions assumed (not measured)"
#define TS_NET_V100                                                                              \
    "V100 SXM2: NVLink2 300 GB/s; 100 Gb/s per GPU and PCIe Gen3 assumed; matmul and attention " \
    "fractions assumed (not measured)"
#define TS_NET_GB200                                                                            \
    "GB200 NVL72: NVLink5 1.8 TB/s (set gpus_per_node 72 for the NVL72 domain), NVLink-C2C to " \
    "Grace, 400 Gb/s per GPU; MAMF 1822.0/2500 (ml-engineering, torch 2.10 + cu130); settled "  \
    "rate B200's at 1,200 W (derived)"
#define TS_NET_MI250X                                                                        \
    "MI250X GCD: Infinity Fabric ~400 GB/s per GCD and 200 Gb/s per GCD pair assumed; MAMF " \
    "147.0/191.5 per GCD (ml-engineering)"
#define TS_NET_A100_PCIE                                                                         \
    "A100 80GB PCIe: no NVSwitch, peers over PCIe Gen4 x16 (ai-dynamo/aiconfigurator "           \
    "systems/a100_pcie.yaml: 32 GB/s a direction; an NVLink bridge not modelled), 200 Gb/s per " \
    "GPU; MAMF 252.9/312 (ml-engineering, A100 PCIe); attention fraction of A100 SXM (the same " \
    "GA100 die) assumed"
#define TS_NET_RTX_PRO_6000                                                                     \
    "RTX PRO 6000 Blackwell: no NVLink, peers over PCIe Gen5 x16 (ai-dynamo/aiconfigurator "    \
    "systems/rtx_pro_6000_server.yaml: 64 GB/s a direction), 400 Gb/s NIC assumed; matmul and " \
    "attention fractions assumed (not measured)"
#define TS_NET_MI355X                                                                            \
    "AMD MI355X: Infinity Fabric mesh, 7 links of 153 GB/s (read as duplex: 1071 GB/s per GPU, " \
    "ml-engineering network/README.md), 400 Gb/s NIC assumed; MAMF 1565.0 TFLOP/s "              \
    "(ml-engineering, torch 2.8.0 + ROCm 7.0.2; listed against 2300, AMD's dense 2500 used "     \
    "here); attention fraction of MI300X assumed (no gfx950 measurement)"
#define TS_NET_A30                                                                               \
    "A30: no NVSwitch, peers over PCIe Gen4 x16 (ai-dynamo/aiconfigurator systems/a30.yaml: 32 " \
    "GB/s a direction; an NVLink bridge not modelled), 200 Gb/s per GPU; A100 PCIe's MAMF "      \
    "fraction and A100's attention fraction (the same GA100 die) assumed"
#define TS_NET_GH200                                                                       \
    "GH200: NVLink4 900 GB/s, NVLink-C2C 900 GB/s to Grace, 400 Gb/s NIC; MAMF 821.0/989 " \
    "(ml-engineering)"

#define TS_NET_H800                                                                               \
    "H800 SXM5 (H100's export variant): NVLink4 cut to 400 GB/s (ai-dynamo/aiconfigurator#968), " \
    "8x NDR 400 Gb/s assumed; MAMF and sustain of H100 SXM (the same GH100 die at 700 W)"
#define TS_NET_A800                                                                              \
    "A800 SXM4 (A100's export variant): NVLink3 cut to 400 GB/s, 8x HDR 200 Gb/s assumed; MAMF " \
    "of A100 (the same GA100 die)"
#define TS_NET_H200_NVL                                                                          \
    "H200 NVL: peers over PCIe Gen5 x16 (128 GB/s bidirectional; the 2- or 4-way NVLink bridge " \
    "not modelled); 400 Gb/s NIC assumed; MAMF ratio of H100 SXM assumed"
/* PCIe cards without a measured matmul rate: GeForce, RTX workstation and
 * small data-centre parts.  The fractions are assumed, as for L40S. */
#define TS_NET_PCIE_CARD                                                                         \
    "PCIe card: no NVSwitch, peers over PCIe Gen4 x16 (64 GB/s bidirectional; an NVLink bridge " \
    "not modelled; GeForce 40 has no peer-to-peer, through host memory); 100 Gb/s NIC assumed; " \
    "matmul and attention fractions assumed (no sustained measurement)"
/* Their figures, one set: PCIe Gen4 between cards and to the host, a
 * 100 Gb/s NIC, the L40S's assumed matmul and attention fractions. */
#define NET_PCIE_CARD \
    NET(64 * GBS, 12.5 * GBS, 32 * GBS, 0.70, 8192, 8192, 8192, 0.50, TS_NET_PCIE_CARD)
#define TS_NET_T4                                                                             \
    "T4: peers over PCIe Gen3 x16 (32 GB/s bidirectional); 100 Gb/s NIC assumed; matmul and " \
    "attention fractions assumed (not measured)"

/* Measured rates of the software stack (issues 26/30), Azure's public
 * benchmark suite run on its ND VMs (Azure/AI-benchmarking-guide
 * Azure_Results/ND_{A100_v4,H100_v5,H200_v5}_results.md@8fd0c6e1;
 * MI300X: the same suite's ND_MI300X_v5_results.md in
 * yosoyjay/AI-benchmarking-guide@a8263ef1):
 * stream: BabelStream copy over the datasheet HBM bandwidth (A100 80GB
 * 1.61 / 2.039 TB/s, H100 2.90 / 3.35, H200 4.01 / 4.8, MI300X
 * 4.15 / 5.3): what memory-bound kernels (norms, casts, the optimizer)
 * reach; elsewhere the step model's default fraction.
 * fp8: the best FP8 cuBLASLt / hipBLASLt GEMM of the sweep over the dense
 * FP8 peak (H100 1382.2 / 1979 at 32768^3, H200 1366.3 / 1979 at
 * 16384^3, MI300X 1222.9 / 2614.9 at 8192^3; MI325X 1527.7 / 2614.9 at
 * 4096x3648x32896 and 1,464 MHz, AMD's own hipBLASLt measurement at the
 * 1,000 W limit, ROCm/rocm-blogs measuring-max-achievable-flops-part2
 * footnote 4, which also gives MI300X 1223.6): FP8 matmuls reach less of
 * their peak than BF16 ones (H100 BF16 MAMF 0.80, FP8 0.70). */
#define MEAS(fp8, stream) .mamf_fp8 = (fp8), .stream_eff = (stream)

/* Board power (issue 28): the vendor's maximum, what a training step
 * holds the chip at (the sustain note above) and what the model cards
 * multiply GPU-hours by (Llama 2: A100-80GB 400 W; Llama 3: H100-80GB
 * 700 W).  Configurable parts are at their top setting. */
#define PWR(w, src) .board_watts = (w), .power_source = (src)

static const ts_gpu ts_gpu_catalogue[] = {
    { "a100-40", "NVIDIA A100 SXM4 40GB", 156 * TFLOPS, 312 * TFLOPS, 0, 40960 * MIB, 1.555 * TBS,
      "NVIDIA A100 Tensor Core GPU datasheet (dense TF32 156, BF16 312; no FP8)",
      NET(600 * GBS, 25 * GBS, 32 * GBS, 0.859, 6912, 16384, 2048, 0.60, TS_NET_A100), .sm = 80,
      PWR(400, "NVIDIA A100 datasheet: SXM4 max TDP 400 W") },
    { "a100-80", "NVIDIA A100 SXM4 80GB", 156 * TFLOPS, 312 * TFLOPS, 0, 81920 * MIB, 2.039 * TBS,
      "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM: 2,039 GB/s)",
      NET(600 * GBS, 25 * GBS, 32 * GBS, 0.859, 6912, 16384, 2048, 0.60, TS_NET_A100), .sm = 80,
      MEAS(0, 1.61 / 2.039), PWR(400, "NVIDIA A100 datasheet: SXM4 max TDP 400 W") },
    { "h100-sxm", "NVIDIA H100 SXM5 80GB", 494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS, 81559 * MIB,
      3.35 * TBS, "NVIDIA H100 Tensor Core GPU datasheet, SXM (sparse figures halved)",
      NET(900 * GBS, 50 * GBS, 64 * GBS, 0.801, 6144, 17920, 2816, 0.35, TS_NET_H100), .sm = 90,
      SUSTAIN_HOPPER, MEAS(1382.2 / 1979, 2.90 / 3.35),
      PWR(700, "NVIDIA H100 datasheet: SXM max TDP up to 700 W (configurable)") },
    { "h100-pcie", "NVIDIA H100 PCIe 80GB", 378 * TFLOPS, 756 * TFLOPS, 1513 * TFLOPS, 81559 * MIB,
      2.0 * TBS, "NVIDIA H100 Tensor Core GPU datasheet, PCIe (sparse figures halved)",
      NET(128 * GBS, 50 * GBS, 64 * GBS, 0.801, 6144, 17920, 2816, 0.35, TS_NET_H100_PCIE),
      .sm = 90, PWR(350, "NVIDIA H100 datasheet: PCIe max TDP 300-350 W (configurable)") },
    { "h200", "NVIDIA H200 SXM 141GB", 494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS, 143771 * MIB,
      4.8 * TBS, "NVIDIA H200 Tensor Core GPU datasheet, SXM (sparse figures halved)",
      NET(900 * GBS, 50 * GBS, 64 * GBS, 0.803, 6144, 17920, 2816, 0.35, TS_NET_H100), .sm = 90,
      SUSTAIN_HOPPER, MEAS(1366.3 / 1979, 4.01 / 4.8),
      PWR(700, "NVIDIA H200 datasheet: SXM max TDP up to 700 W (configurable)") },
    { "b200", "NVIDIA B200 180GB", 1100 * TFLOPS, 2250 * TFLOPS, 4500 * TFLOPS, 183359 * MIB,
      8.0 * TBS, "NVIDIA DGX B200 / HGX B200 datasheet, per GPU (sparse figures halved)",
      NET(1800 * GBS, 50 * GBS, 64 * GBS, 0.776, 6144, 17920, 2816, 0.35, TS_NET_B200), .sm = 100,
      .sustain = TS_SUSTAIN_B200, .mamf_fp8 = TS_B200_FP8_MSMF,
      PWR(1000, "NVIDIA HGX B200 datasheet: up to 1,000 W per GPU") },
    /* Blackwell Ultra, as deployed ("NVIDIA B300 SXM6 AC", "NVIDIA GB300").
     * Peaks, memory as nvidia-smi reports it, bandwidth, links and power:
     * NVIDIA's own ai-dynamo/aiconfigurator systems/b300_sxm.yaml and
     * gb300.yaml@dec5f4cd (the Blackwell Ultra datasheet: B300 BF16 2250,
     * FP8 4500 dense, 62 TB/s over 8 GPUs, configurable up to 1,100 W,
     * 275040 MiB; GB300 BF16 2500, FP8 5000, 8 TB/s, 1,400 W, 284208 MiB).
     * MAMF: ml-engineering@744d01e's B300 rows (BF16 1769.0 at
     * 12288x18432x1024, FP8 3353.3 at 3072x6144x7168), bursts with no MSMF;
     * GB300 takes them as its fractions (the same die, assumed: no GB300
     * measurement).  Settled rates: B200's moved to each part's power
     * limit (ts_gpu_settled; B300's 1,100 W is its configurable top, a
     * DGX B300 capped at 1,000 W settles as B200). */
    { "b300", "NVIDIA B300 SXM6 AC 288GB", 1125 * TFLOPS, 2250 * TFLOPS, 4500 * TFLOPS,
      275040 * MIB, 7.75 * TBS,
      "NVIDIA Blackwell Ultra datasheet, B300 per GPU (dense; 62 TB/s HGX total / 8); nvidia-smi "
      "275040 MiB (ai-dynamo/aiconfigurator systems/b300_sxm.yaml)",
      NET(1800 * GBS, 100 * GBS, 128 * GBS, 1769.0 / 2250, 12288, 18432, 1024, 0.35, TS_NET_B300),
      .sm = 103, .settle_b200 = true,
      PWR(1100, "NVIDIA Blackwell Ultra datasheet: B300 configurable up to 1,100 W") },
    { "gb300", "NVIDIA GB300 (per Blackwell Ultra GPU) 288GB", 1250 * TFLOPS, 2500 * TFLOPS,
      5000 * TFLOPS, 284208 * MIB, 8.0 * TBS,
      "NVIDIA Blackwell Ultra datasheet, GB300 NVL72 per GPU (dense); nvidia-smi 284208 MiB "
      "(ai-dynamo/aiconfigurator systems/gb300.yaml)",
      NET(1800 * GBS, 100 * GBS, 450 * GBS, 1769.0 / 2250, 12288, 18432, 1024, 0.35, TS_NET_GB300),
      .sm = 103, .settle_b200 = true,
      PWR(1400, "NVIDIA Blackwell Ultra datasheet: 1,400 W per GB300 GPU (the superchip's Grace "
                "not included)") },
    { "mi300x", "AMD Instinct MI300X 192GB", 653.7 * TFLOPS, 1307.4 * TFLOPS, 2614.9 * TFLOPS,
      205822885888.0, 5.3 * TBS, "AMD Instinct MI300X accelerator data sheet (dense matrix peaks)",
      NET(896 * GBS, 50 * GBS, 64 * GBS, 668.4 / 1300, 10240, 15360, 8192, 0.376, TS_NET_MI300X),
      MEAS(1222.9 / 2614.9, 4.15 / 5.3), .mesh = true,
      PWR(750, "AMD Instinct MI300X data sheet: 750 W peak total board power") },
    { "l40s", "NVIDIA L40S 48GB", 183 * TFLOPS, 362 * TFLOPS, 733 * TFLOPS, 46068 * MIB,
      0.864 * TBS, "NVIDIA L40S GPU datasheet (sparse figures halved)",
      NET(64 * GBS, 50 * GBS, 32 * GBS, 0.70, 8192, 8192, 8192, 0.50, TS_NET_L40S), .sm = 89,
      PWR(350, "NVIDIA L40S datasheet: max power consumption 350 W") },
    { "gh200", "NVIDIA GH200 Grace Hopper 96GB", 494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS,
      97871 * MIB, 4.0 * TBS,
      "NVIDIA GH200 Grace Hopper Superchip datasheet (96GB HBM3; H100 compute)",
      NET(900 * GBS, 50 * GBS, 450 * GBS, 0.830, 11264, 19712, 1536, 0.35, TS_NET_GH200), .sm = 90,
      PWR(1000, "NVIDIA GH200 datasheet: module power 450-1,000 W configurable, Grace CPU and "
                "memory included") },
    { "v100-16", "NVIDIA V100 SXM2 16GB", 15.7 * TFLOPS, 125 * TFLOPS, 0, 16160 * MIB, 0.9 * TBS,
      "NVIDIA Tesla V100 datasheet (FP16 tensor 125 TFLOP/s, FP32 15.7; no BF16 or TF32)",
      NET(300 * GBS, 12.5 * GBS, 16 * GBS, 0.75, 8192, 8192, 8192, 0.30, TS_NET_V100), .sm = 70,
      .mesh = true, PWR(300, "NVIDIA Tesla V100 datasheet: SXM2 300 W") },
    { "v100-32", "NVIDIA V100 SXM2 32GB", 15.7 * TFLOPS, 125 * TFLOPS, 0, 32510 * MIB, 0.9 * TBS,
      "NVIDIA Tesla V100 datasheet (FP16 tensor 125 TFLOP/s; 32GB: 32510 MiB in nvidia-smi)",
      NET(300 * GBS, 12.5 * GBS, 16 * GBS, 0.75, 8192, 8192, 8192, 0.30, TS_NET_V100), .sm = 70,
      .mesh = true, PWR(300, "NVIDIA Tesla V100 datasheet: SXM2 300 W") },
    { "h100-nvl", "NVIDIA H100 NVL 94GB", 417.5 * TFLOPS, 835 * TFLOPS, 1670 * TFLOPS, 95830 * MIB,
      3.9 * TBS, "NVIDIA H100 NVL datasheet, per GPU (sparse figures halved)",
      NET(128 * GBS, 50 * GBS, 64 * GBS, 0.801, 6144, 17920, 2816, 0.35, TS_NET_H100_PCIE),
      .sm = 90, SUSTAIN_HOPPER,
      PWR(400, "NVIDIA H100 NVL datasheet: 350-400 W per GPU (configurable)") },
    /* The 96 GB H100 SXM as torchtitan's benchmarks describe Meta's Grand
     * Teton hosts, the part's one public record (pytorch/torchtitan
     * benchmarks/llama3_h100_202412_torchtitan.md): "96GB HBM2e with
     * 2.4 TB/sec peak memory bandwidth", "the default 500W power limit".
     * A 500 W limit settles the clock below the 700 W one the Hopper
     * sustain was measured at: by the cube-root rule, cbrt(500 / 700) =
     * 0.894 of it (ts_gpu_sustain; derived, not measured). */
    { "h100-96", "NVIDIA H100 SXM5 96GB HBM2e", 494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS,
      97871 * MIB, 2.4 * TBS,
      "H100 SXM compute; 96GB HBM2e at 2.4 TB/s and a 500 W default limit (torchtitan "
      "benchmarks, Grand Teton); 97871 MiB as GH200's 96 GB",
      NET(900 * GBS, 50 * GBS, 64 * GBS, 0.801, 6144, 17920, 2816, 0.35, TS_NET_H100), .sm = 90,
      SUSTAIN_HOPPER,
      PWR(500, "torchtitan benchmarks (Grand Teton H100 96GB): the default 500 W power limit") },
    { "gb200", "NVIDIA GB200 (per Blackwell GPU) 186GB", 1250 * TFLOPS, 2500 * TFLOPS,
      5000 * TFLOPS, 189471 * MIB, 8.0 * TBS,
      "NVIDIA GB200 NVL72 datasheet, per GPU (sparse figures halved)",
      NET(1800 * GBS, 50 * GBS, 450 * GBS, 1822.0 / 2500, 4096, 9728, 2048, 0.35, TS_NET_GB200),
      .sm = 100, .settle_b200 = true,
      PWR(1200, "NVIDIA GB200 NVL72: up to 1,200 W per Blackwell GPU (the superchip's Grace not "
                "included)") },
    { "mi250x", "AMD Instinct MI250X (one GCD) 64GB", 47.9 * TFLOPS, 191.5 * TFLOPS, 0,
      68702699520.0, 1.6 * TBS,
      "AMD Instinct MI250X data sheet, per GCD (each GCD is one device: half the package)",
      NET(400 * GBS, 25 * GBS, 32 * GBS, 0.767, 1024, 14080, 19968, 0.30, TS_NET_MI250X),
      PWR(280, "AMD Instinct MI250X data sheet: 560 W per OAM package, half per GCD") },
    { "mi325x", "AMD Instinct MI325X 256GB", 653.7 * TFLOPS, 1307.4 * TFLOPS, 2614.9 * TFLOPS,
      274877906944.0, 6.0 * TBS,
      "AMD Instinct MI325X data sheet (dense matrix peaks; 256 GB HBM3E)",
      NET(896 * GBS, 50 * GBS, 64 * GBS, 784.9 / 1300, 13312, 10240, 8192, 0.376, TS_NET_MI325X),
      MEAS(1527.7 / 2614.9, 0), .mesh = true,
      PWR(1000, "AMD Instinct MI325X data sheet: 1,000 W peak total board power") },
    /* AMD Instinct MI355X (CDNA 4), ml-engineering@744d01e's tables: BF16
     * 2500 and FP8 5000 dense (AMD's figures; 2516.6 from 2400 MHz x 1024
     * Matrix Cores x 512 FMA x 2), 288 GB HBM3E at 8 TB/s, 1,400 W; no TF32
     * figure is published, so fp32 is the 157.3 vector rate.  Memory as
     * MI325X's 256 GB reads (256 GiB in rocm-smi): 288 GiB, assumed.  Its
     * BF16 MAMF row (1565.0) is listed against a theory of 2300, MI350X's
     * clock; the absolute rate is what enters, as a fraction of 2500. */
    { "mi355x", "AMD Instinct MI355X 288GB", 157.3 * TFLOPS, 2500 * TFLOPS, 5000 * TFLOPS,
      309237645312.0, 8.0 * TBS,
      "AMD Instinct MI355X specifications as ml-engineering@744d01e tabulates them (dense BF16 "
      "2500, FP8 5000, FP32 157.3; 288 GB HBM3E, 8.0 TB/s)",
      NET(1071 * GBS, 50 * GBS, 64 * GBS, 1565.0 / 2500, 12288, 8192, 8192, 0.376, TS_NET_MI355X),
      .mesh = true,
      PWR(1400, "AMD Instinct MI355X: 1,400 W typical board power (ml-engineering)") },
    /* Export variants: the same dies as H100 SXM and A100 80GB, NVLink cut
     * to 400 GB/s; nvidia-smi reports the same totals ("NVIDIA H800"
     * 81559 MiB, "NVIDIA A800-SXM4-80GB" 81920 MiB). */
    { "h800", "NVIDIA H800 SXM5 80GB", 494.7 * TFLOPS, 989 * TFLOPS, 1979 * TFLOPS, 81559 * MIB,
      3.35 * TBS,
      "H100 SXM compute and HBM3 (ai-dynamo/aiconfigurator#968: identical to H100 SXM but NVLink "
      "400 GB/s); nvidia-smi 81559 MiB",
      NET(400 * GBS, 50 * GBS, 64 * GBS, 0.801, 6144, 17920, 2816, 0.35, TS_NET_H800), .sm = 90,
      SUSTAIN_HOPPER, MEAS(1382.2 / 1979, 2.90 / 3.35),
      PWR(700, "H800 SXM: 700 W (nvidia-smi power cap, as H100 SXM)") },
    { "a800-80", "NVIDIA A800 SXM4 80GB", 156 * TFLOPS, 312 * TFLOPS, 0, 81920 * MIB, 2.039 * TBS,
      "A100 80GB SXM compute and HBM2e, NVLink 400 GB/s; nvidia-smi 81920 MiB",
      NET(400 * GBS, 25 * GBS, 32 * GBS, 0.859, 6912, 16384, 2048, 0.60, TS_NET_A800), .sm = 80,
      MEAS(0, 1.61 / 2.039), PWR(400, "A800 SXM4: 400 W (nvidia-smi power cap, as A100 SXM4)") },
    { "h200-nvl", "NVIDIA H200 NVL 141GB", 417.5 * TFLOPS, 835.5 * TFLOPS, 1670.5 * TFLOPS,
      143771 * MIB, 4.8 * TBS,
      "NVIDIA H200 datasheet, NVL column (BF16 1,671 / FP8 3,341 with sparsity, halved); "
      "nvidia-smi 143771 MiB as H200 SXM",
      NET(128 * GBS, 50 * GBS, 64 * GBS, 0.801, 6144, 17920, 2816, 0.35, TS_NET_H200_NVL), .sm = 90,
      SUSTAIN_HOPPER, PWR(600, "NVIDIA H200 NVL: up to 600 W (configurable)") },
    /* PCIe data-centre parts whose figures NVIDIA's own ai-dynamo/
     * aiconfigurator@095f58a5 states (systems/<name>.yaml: tensor peaks,
     * memory, bandwidth, power, links).  A100 80GB PCIe: A100's compute
     * (312 BF16, 156 TF32 dense), 80 GiB at 1.935 TB/s, 300 W; its MAMF is
     * ml-engineering's A100 PCIe row.  A30: GA100 at 165 BF16 / 82.5 TF32,
     * 24 GiB at 933 GB/s, 165 W, A100 PCIe's fractions (assumed).  RTX PRO 6000 Blackwell (Server Edition):
     * 467.8 BF16 / 935.6 FP8 dense at the 2430 MHz its node reports,
     * 97887 MiB, GDDR7 1.792 TB/s, 600 W, sm_120; TF32 half of BF16, as on
     * every other tensor-core part (assumed). */
    { "a100-pcie-80", "NVIDIA A100 80GB PCIe", 156 * TFLOPS, 312 * TFLOPS, 0, 81920 * MIB,
      1.935 * TBS,
      "ai-dynamo/aiconfigurator systems/a100_pcie.yaml (312 TFLOPS BF16, 80 GiB, 1.935 TB/s); "
      "A100 datasheet TF32 156 dense",
      NET(64 * GBS, 25 * GBS, 32 * GBS, 252.9 / 312, 2048, 5120, 6144, 0.60, TS_NET_A100_PCIE),
      .sm = 80, PWR(300, "ai-dynamo/aiconfigurator systems/a100_pcie.yaml: 300 W") },
    { "a30", "NVIDIA A30 24GB", 82.5 * TFLOPS, 165 * TFLOPS, 0, 24576 * MIB, 0.933 * TBS,
      "ai-dynamo/aiconfigurator systems/a30.yaml (165 TFLOPS BF16, 24 GiB, 933 GB/s); TF32 half of "
      "BF16",
      NET(64 * GBS, 25 * GBS, 32 * GBS, 252.9 / 312, 2048, 5120, 6144, 0.60, TS_NET_A30), .sm = 80,
      PWR(165, "ai-dynamo/aiconfigurator systems/a30.yaml: 165 W") },
    { "rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell 96GB", 233.9 * TFLOPS, 467.8 * TFLOPS,
      935.6 * TFLOPS, 97887 * MIB, 1.792 * TBS,
      "ai-dynamo/aiconfigurator systems/rtx_pro_6000_server.yaml (467.8 BF16 / 935.6 FP8 dense at "
      "2430 MHz, 97887 MiB, GDDR7 1.792 TB/s); TF32 half of BF16 (assumed)",
      NET(128 * GBS, 50 * GBS, 64 * GBS, 0.70, 8192, 8192, 8192, 0.50, TS_NET_RTX_PRO_6000),
      .sm = 120,
      PWR(600, "ai-dynamo/aiconfigurator systems/rtx_pro_6000_server.yaml: 600 W power limit") },
    /* Cards people fine-tune on.  The BF16 figure is the tensor rate with
     * FP32 accumulate, what PyTorch's mixed precision runs: on GeForce
     * parts half the FP16-accumulate rate the marketing pages print (Ada
     * whitepaper v2.1 and Ampere GA102 whitepaper, Appendix A).  Memory as
     * nvidia-smi reports it: GDDR6 with ECC on loses 1/16 (the L40's 46068
     * MiB; the RTX A6000 ships with ECC off, 49140). */
    { "rtx-4090", "NVIDIA GeForce RTX 4090 24GB", 82.6 * TFLOPS, 165.2 * TFLOPS, 330.3 * TFLOPS,
      24564 * MIB, 1.008 * TBS,
      "NVIDIA Ada Lovelace GPU architecture whitepaper v2.1, Appendix A (BF16 with FP32 accumulate "
      "165.2, FP8 330.3, TF32 82.6 dense; 1,008 GB/s); nvidia-smi 24564 MiB",
      NET_PCIE_CARD, .sm = 89, PWR(450, "RTX 4090: 450 W total graphics power") },
    { "rtx-3090", "NVIDIA GeForce RTX 3090 24GB", 35.6 * TFLOPS, 71 * TFLOPS, 0, 24576 * MIB,
      0.936 * TBS,
      "NVIDIA Ampere GA102 GPU architecture whitepaper, Appendix A (BF16 with FP32 accumulate 71, "
      "TF32 35.6 dense; 936 GB/s); nvidia-smi 24576 MiB",
      NET_PCIE_CARD, .sm = 86, PWR(350, "RTX 3090 Founders Edition: 350 W total graphics power") },
    { "rtx-a6000", "NVIDIA RTX A6000 48GB", 77.4 * TFLOPS, 154.8 * TFLOPS, 0, 49140 * MIB,
      0.768 * TBS,
      "NVIDIA Ampere GA102 whitepaper v2 (RTX A6000: BF16 with FP32 accumulate 154.8 dense) and "
      "RTX A6000 datasheet (768 GB/s); nvidia-smi 49140 MiB with ECC off, its default",
      NET_PCIE_CARD, .sm = 86, PWR(300, "RTX A6000 datasheet: 300 W") },
    { "l40", "NVIDIA L40 48GB", 90.5 * TFLOPS, 181.05 * TFLOPS, 362.1 * TFLOPS, 46068 * MIB,
      0.864 * TBS,
      "NVIDIA L40 datasheet (BF16 181.05, FP8 362, TF32 90.5 dense; 864 GB/s); nvidia-smi 46068 "
      "MiB with ECC on, its default",
      NET_PCIE_CARD, .sm = 89, PWR(300, "NVIDIA L40 datasheet: 300 W max") },
    { "a10g", "NVIDIA A10G 24GB", 35 * TFLOPS, 70 * TFLOPS, 0, 23028 * MIB, 0.6 * TBS,
      "AWS EC2 G5 (A10G): 70 TFLOPS dense BF16/FP16 with FP32 accumulate, 600 GB/s; nvidia-smi "
      "23028 MiB (NVIDIA/DCGM#232)",
      NET_PCIE_CARD, .sm = 86, PWR(300, "A10G: 300 W power cap in nvidia-smi (NVIDIA/DCGM#232)") },
    /* Data-centre GA102 / AD104 parts: BF16 with FP32 accumulate at the
     * full tensor rate (the datasheets' dense figure, half the sparse
     * one), unlike GeForce; GDDR6 with ECC on, as nvidia-smi reports it
     * in public outputs ("NVIDIA A10 ... 23028MiB / 150W", "NVIDIA L4 ...
     * 23034MiB / 72W"). */
    { "a10", "NVIDIA A10 24GB", 62.5 * TFLOPS, 125 * TFLOPS, 0, 23028 * MIB, 0.6 * TBS,
      "NVIDIA A10 datasheet (BF16 125, TF32 62.5 dense, 250 / 125 with sparsity; 600 GB/s); "
      "nvidia-smi 23028 MiB with ECC on",
      NET_PCIE_CARD, .sm = 86, PWR(150, "NVIDIA A10 datasheet: 150 W max") },
    { "l4", "NVIDIA L4 24GB", 60 * TFLOPS, 121 * TFLOPS, 242.5 * TFLOPS, 23034 * MIB, 0.3 * TBS,
      "NVIDIA L4 datasheet (BF16 242, FP8 485, TF32 120 with sparsity, halved; 300 GB/s); "
      "nvidia-smi 23034 MiB with ECC on",
      NET_PCIE_CARD, .sm = 89, PWR(72, "NVIDIA L4 datasheet: 72 W max") },
    /* Turing: FP16 tensor cores only (no BF16, no TF32; fp32 is the CUDA
     * cores' rate, as V100's). */
    { "t4", "NVIDIA T4 16GB", 8.1 * TFLOPS, 65 * TFLOPS, 0, 15360 * MIB, 0.32 * TBS,
      "NVIDIA T4 datasheet (mixed-precision FP16/FP32 65 TFLOPS, FP32 8.1; no BF16; 256-bit GDDR6 "
      "at 10 Gb/s = 320 GB/s); nvidia-smi 15360 MiB (drivers 525 on; 470 reported 15109)",
      NET(32 * GBS, 12.5 * GBS, 16 * GBS, 0.70, 8192, 8192, 8192, 0.50, TS_NET_T4), .sm = 75,
      PWR(70, "NVIDIA T4 datasheet: 70 W") },
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

/* The names people type for each GPU: nvidia-smi's product names
 * ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"), datasheet names and
 * the short forms of cloud instance pages.  Where a bare name covers two
 * memory sizes it means the larger, the one clusters are built with
 * (A100 -> 80 GB, V100 -> 32 GB); the answer's inputs echo the id. */
static const struct {
    const char *alias, *id;
} ts_gpu_aliases[] = {
    { "h100", "h100-sxm" },
    { "h100-80gb", "h100-sxm" },
    { "h100-sxm5", "h100-sxm" },
    { "h100-sxm5-80gb", "h100-sxm" },
    { "h100-80gb-hbm3", "h100-sxm" },
    { "h100-sxm-80gb", "h100-sxm" },
    { "h100-pcie-80gb", "h100-pcie" },
    { "h100-nvl-94gb", "h100-nvl" },
    { "h100-96gb", "h100-96" },
    { "h100-sxm5-96gb", "h100-96" },
    { "h200-141gb", "h200" },
    { "h200-sxm", "h200" },
    { "h200-sxm-141gb", "h200" },
    { "gh200-96gb", "gh200" },
    { "grace-hopper", "gh200" },
    { "b200-180gb", "b200" },
    { "b200-sxm", "b200" },
    { "gb200-nvl72", "gb200" },
    { "b300-sxm6-ac", "b300" }, /* nvidia-smi's name */
    { "b300-sxm6", "b300" },
    { "b300-sxm", "b300" },
    { "b300-288gb", "b300" },
    { "hgx-b300", "b300" },
    { "dgx-b300", "b300" },
    { "gb300-nvl72", "gb300" },
    { "a100", "a100-80" },
    { "a100-80gb", "a100-80" },
    { "a100-sxm4-80gb", "a100-80" },
    { "a100-sxm-80gb", "a100-80" },
    { "a100-40gb", "a100-40" },
    { "a100-sxm4-40gb", "a100-40" },
    { "a100-sxm-40gb", "a100-40" },
    { "l40s-48gb", "l40s" },
    { "v100", "v100-32" },
    { "v100-32gb", "v100-32" },
    { "v100-sxm2-32gb", "v100-32" },
    { "v100-16gb", "v100-16" },
    { "v100-sxm2-16gb", "v100-16" },
    { "mi300", "mi300x" },
    { "mi250x-gcd", "mi250x" },
    { "mi355", "mi355x" },
    { "mi355x-288gb", "mi355x" },
    { "a100-pcie", "a100-pcie-80" },
    { "a100-80gb-pcie", "a100-pcie-80" }, /* nvidia-smi's name */
    { "a100-pcie-80gb", "a100-pcie-80" },
    { "a30-24gb", "a30" },
    { "rtx-pro-6000-blackwell", "rtx-pro-6000" },
    { "rtx-pro-6000-blackwell-server-edition", "rtx-pro-6000" }, /* nvidia-smi's name */
    { "rtx-pro-6000-blackwell-workstation-edition", "rtx-pro-6000" },
    { "rtx-pro-6000-server", "rtx-pro-6000" },
    { "pro-6000", "rtx-pro-6000" },
    /* nvidia-smi names of the cards above (vendor words dropped). */
    { "gh200-480gb", "gh200" }, /* 480 GB counts Grace's LPDDR5X; the GPU has 96 GB */
    { "h800-80gb", "h800" },
    { "h800-sxm5", "h800" },
    { "a800", "a800-80" },
    { "a800-sxm4-80gb", "a800-80" },
    { "a800-80gb", "a800-80" },
    { "4090", "rtx-4090" },
    { "3090", "rtx-3090" },
    { "a6000", "rtx-a6000" },
    { "l40-48gb", "l40" },
    { "a10g-24gb", "a10g" },
    { "a10-24gb", "a10" },
    { "l4-24gb", "l4" },
    { "t4-16gb", "t4" },
};
#define TS_GPU_ALIAS_N (sizeof ts_gpu_aliases / sizeof ts_gpu_aliases[0])

/* Vendor words people put in front: "NVIDIA", "Tesla", "GeForce",
 * "AMD Instinct". */
static const char *gpu_key_body(const char *key)
{
    static const char *const vendor[] = { "nvidia", "tesla", "geforce", "amd", "instinct" };
    size_t i;
    int again = 1;

    while (again) {
        again = 0;
        for (i = 0; i < sizeof vendor / sizeof vendor[0]; i++) {
            size_t n = strlen(vendor[i]);

            if (strncmp(key, vendor[i], n) == 0 && key[n] != '\0') {
                key += n;
                again = 1;
            }
        }
    }
    return key;
}

const ts_gpu *ts_gpu_find(const char *id)
{
    char typed[TS_NAME_KEY_MAX], k[TS_NAME_KEY_MAX];
    const char *body;
    size_t i;

    if (id == NULL)
        return NULL;
    /* Exact match first: ids are the public, lower-case names the API echoes. */
    for (i = 0; i < TS_GPU_N; i++)
        if (strcmp(ts_gpu_catalogue[i].id, id) == 0)
            return &ts_gpu_catalogue[i];
    if (ts_name_key(id, typed, sizeof typed) == 0)
        return NULL;
    body = gpu_key_body(typed);
    for (i = 0; i < TS_GPU_N; i++)
        if (ts_name_key(ts_gpu_catalogue[i].id, k, sizeof k) > 0 && strcmp(k, body) == 0)
            return &ts_gpu_catalogue[i];
    for (i = 0; i < TS_GPU_ALIAS_N; i++)
        if (ts_name_key(ts_gpu_aliases[i].alias, k, sizeof k) > 0 && strcmp(k, body) == 0)
            return ts_gpu_find(ts_gpu_aliases[i].id);
    return NULL;
}

const char *ts_gpu_suggest(const char *typed)
{
    char key[TS_NAME_KEY_MAX];
    ts_name_suggest s;
    const char *best;
    size_t i;

    if (ts_name_key(typed, key, sizeof key) == 0)
        return NULL;
    ts_name_suggest_init(&s, gpu_key_body(key));
    for (i = 0; i < TS_GPU_N; i++)
        ts_name_suggest_try(&s, ts_gpu_catalogue[i].id);
    for (i = 0; i < TS_GPU_ALIAS_N; i++)
        ts_name_suggest_try(&s, ts_gpu_aliases[i].alias);
    best = ts_name_suggest_best(&s);
    /* Suggest the id the closest name stands for: the one the API echoes. */
    return best != NULL ? ts_gpu_find(best)->id : NULL;
}

const char *ts_gpu_alias(const char *id, size_t i)
{
    size_t k;

    for (k = 0; k < TS_GPU_ALIAS_N; k++) {
        if (strcmp(ts_gpu_aliases[k].id, id) != 0)
            continue;
        if (i == 0)
            return ts_gpu_aliases[k].alias;
        i--; /* never below 0: no wrap-around for the fuzz builds' checks */
    }
    return NULL;
}

bool ts_gpu_bf16(const ts_gpu *g)
{
    return g != NULL && !(g->sm > 0 && g->sm < 80);
}

bool ts_gpu_fp8_tn_only(const ts_gpu *g)
{
    return g->sm < 100 || (g->sm >= 120 && g->sm < 130);
}

/* Blackwell at its power-limited clock where no MSMF is measured (issue
 * 26): derived, not measured.  A saturated matmul holds the chip at its
 * limit (ml-engineering@082816f); switching power is C V^2 f and V rises
 * with f along the DVFS curve, so power goes as f^3, the settled clock as
 * the cube root of the limit, and the rate with the clock: B200's
 * settled rate times cbrt(board_watts / B200's watts at it).  GB200 at
 * 1,200 W: ~1426 MHz, BF16 1550.7 (under its own 1822.0 burst) and FP8
 * 2980.8 TFLOP/s; B300 (1,100 W) 1506.3 and 2895.6; GB300 (1,400 W)
 * 1632.4 and 3138.0.  GB200 is B200's die; B300 and GB300 (Blackwell
 * Ultra) have B200's dense peaks and burst MAMF, and their rate and power
 * per clock are assumed B200's.  Leakage and HBM power that do not follow
 * the clock would make each a few percent higher. */
double ts_gpu_settled(const ts_gpu *g, bool fp8)
{
    if (g == NULL || !g->settle_b200 || !(g->board_watts > 0))
        return 0;
    return fp8 ? TS_B200_MSMF_FP8 * TFLOPS * cbrt(g->board_watts / TS_B200_MSMF_FP8_W)
               : TS_B200_MSMF_BF16 * TFLOPS * cbrt(g->board_watts / TS_B200_MSMF_BF16_W);
}

/* The same rule for a part held below the limit its sustain was measured
 * at: the matmul rate follows the settled clock, which goes as the cube
 * root of the power (ts_gpu_settled).  Grand Teton's H100 96GB at its
 * default 500 W: 708.5 x cbrt(500 / 700) = 633.3 TFLOP/s settled, where
 * H200 measured 708.5 at 700 W.  The other GH100 parts with all 132 SMs
 * below 700 W take it too (H100 NVL at 400 W: sustain x 0.830, H200 NVL at
 * 600 W: x 0.950); H100 PCIe's 114 SMs draw differently per clock and keep
 * their burst.  Derived, not measured; never raised above the measured
 * figure. */
double ts_gpu_sustain(const ts_gpu *g)
{
    if (g == NULL || !(g->sustain > 0 && g->sustain <= 1))
        return 0;
    if (g->sustain_w > 0 && g->board_watts > 0 && g->board_watts < g->sustain_w)
        return g->sustain * cbrt(g->board_watts / g->sustain_w);
    return g->sustain;
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
