#!/bin/bash
# GPT 345M in the string style of Megatron-LM's older examples
# (examples/pretrain_gpt_distributed_with_mp.sh before f2e72c8): argument
# groups in "..." strings with \ continuations, expanded unquoted.
GPUS_PER_NODE=8
NNODES=1
DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --master_addr localhost"

GPT_ARGS="
    --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 2 \
    --num-layers 24 \
    --hidden-size 1024 \
    --num-attention-heads 16 \
    --seq-length 1024 \
    --max-position-embeddings 1024 \
    --micro-batch-size 4 \
    --global-batch-size 16 \
    --tokenizer-type GPT2BPETokenizer \
    --fp16
"

DATA_ARGS="--data-path $DATA_PATH --vocab-file $VOCAB_FILE --merge-file $MERGE_FILE --split 949,50,1"

torchrun $DISTRIBUTED_ARGS pretrain_gpt.py \
    $GPT_ARGS \
    $DATA_ARGS \
    --save $CHECKPOINT_PATH
