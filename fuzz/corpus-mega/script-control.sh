#!/bin/bash
# control flow, functions, heredoc, bash -c, arithmetic (fuzz seed)
W=$(( ${GPUS:-8} * ${NODES:-2} ))
args() { A+=("--$1" "$2"); }
A=()
for k in num-layers hidden-size; do args $k 4; done
case ${MODE:-pre} in pre*) A+=(--bf16) ;; *) A+=(--fp16) ;; esac
if [[ -f /x || $W -gt 8 ]]; then TP=2; elif [ -z "$TP" ]; then TP=1; else :; fi
while [ "${#A[@]}" -lt 3 ]; do A+=(--x); done
CMD="python /m/pretrain_gpt.py ${A[@]} --tensor-model-parallel-size ${TP:-1} --vocab-size 1000"
sbatch <<EOF2
#SBATCH --nodes=2 --ntasks-per-node=8
srun bash -c "${CMD}" 2>&1 | tee \${X}.log
EOF2
