#!/bin/bash
# Llama 3 8B in the array style of Megatron-LM's examples/llama: variables,
# bash arrays, a conditional block, ${VAR:-default}, a torchrun wrapper.
NUM_LAYERS=32
DTYPE="fp8"

MODEL_ARGS=(
    --num-layers $NUM_LAYERS
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --kv-channels 128
    --seq-length 8192
    --max-position-embeddings 8192
    --position-embedding-type rope
    --swiglu
    --normalization RMSNorm
    --untie-embeddings-and-output-weights
    --disable-bias-linear
)

TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 128
    --bf16
)
if [[ "$DTYPE" == "fp8" ]]; then
    TRAINING_ARGS+=(
        "--fp8-format hybrid"
    )
fi

TOKENIZER=${TOKENIZER:-meta-llama/Meta-Llama-3-8B}
DISTRIBUTED_ARGS=(
    --nproc_per_node 8
    --nnodes ${NNODES:-2}
    --master_addr $MASTER_ADDR
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    --tokenizer-type HuggingFaceTokenizer \
    --tokenizer-model $TOKENIZER \
    --tensor-model-parallel-size 2 \
    --use-distributed-optimizer
