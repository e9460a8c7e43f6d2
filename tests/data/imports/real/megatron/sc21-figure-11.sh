#!/bin/bash
# The SC21 paper's figure 11 run (pipeline size 1, global batch 8) as one
# file: our rewrite of NVIDIA/Megatron-LM examples/academic_paper_scripts/sc21/
# run_figure_11.sh, CONFIG.sh and SRUN.sh @d98e8a64ddf34856e74b24714e3bedb2f5a39553, with the
# two files run_figure_11.sh sources (CONFIG.sh, then SBATCH.sh submitting
# SRUN.sh) written in where it sources them (same variables, options string,
# placeholders, #SBATCH line, srun wrapper and sh -c command string).

PP=1
GBS=8
NLS=$((3*PP))
NNODES=${PP}
TP=8
MBS=1
HS=20480
NAH=128
DDP=local
MEGATRON_EXTRA_PARAMS="--activations-checkpoint-method uniform "
export JOB_NAME=results_figure_11_pipeline_parallel_size_${PP}_batch_size_${GBS}

# --- CONFIG.sh ---
export SLURM_PARTITION=<slurm partition, used to feed -p option in slurm>
export SLURM_ACCOUNT=<slurm account, used to feed -A option in slurm>
export MEGATRON_CODE_DIR=<megatron source code directory>
export DOCKER_MOUNT_DIR=<megatron dataset and bpe tokenizer vocab path>
MEGATRON_DATA=<path to megatron processed data>
BPE_VOCAB_FILE=<path to bpe vocab file>
BPE_MERGE_FILE=<path to bpe merges file>
export MEGATRON_PARAMS=" ${MEGATRON_EXTRA_PARAMS} \
  --tensor-model-parallel-size ${TP} \
  --pipeline-model-parallel-size ${PP} \
  --micro-batch-size ${MBS} \
  --global-batch-size ${GBS} \
  --num-layers ${NLS} \
  --hidden-size ${HS} \
  --num-attention-heads ${NAH} \
  --DDP-impl ${DDP} \
  --data-path ${MEGATRON_DATA} \
  --vocab-file ${BPE_VOCAB_FILE} \
  --merge-file ${BPE_MERGE_FILE} \
  --log-interval 5 \
  --seq-length 2048 \
  --max-position-embeddings 2048 \
  --train-iters 500 \
  --lr-decay-iters 320 \
  --lr 0.0001 \
  --min-lr 0.00001 \
  --lr-decay-style cosine \
  --lr-warmup-fraction 0.01 \
  --split 969,30,1 \
  --eval-iters 100 \
  --eval-interval 1000 \
  --clip-grad 1.0 \
  --fp16 \
  --loss-scale 8192 "

# --- SRUN.sh (SBATCH.sh submits it: sbatch --nodes=${NNODES} ... SRUN.sh) ---
#SBATCH -t 0:30:00 --exclusive --mem=0 --overcommit --ntasks-per-node=8
THIS_DIR=`pwd`
DATETIME=`date +'date_%y-%m-%d_time_%H-%M-%S'`
mkdir -p ${THIS_DIR}/logs
CMD="python -u ${MEGATRON_CODE_DIR}/pretrain_gpt.py ${MEGATRON_PARAMS}"
srun -l \
  --container-image "nvcr.io#nvidia/pytorch:20.12-py3" \
  --container-mounts "${THIS_DIR}:${THIS_DIR},${MEGATRON_CODE_DIR}:${MEGATRON_CODE_DIR},${DOCKER_MOUNT_DIR}:${DOCKER_MOUNT_DIR}" \
  --output=${THIS_DIR}/logs/%x_%j_$DATETIME.log sh -c "${CMD}"
