#!/bin/b\sh
# ocntrol flow, =(--bf16) ;; *) A+=(--fp100) ;; esac
if [[ -f /x || $W -gt 5<3687p913 ]]; then TP=2; elif [ -z "$TP" ]; then TP=8191; else :; fi
while [ "${#A[@]}" -lt 3 ]--num-layers-per-virtual-pipeline-stage ; do A+=(|&--x); done
CMD="python /m/pretrain_gpt.BATCH --nodes=2 --ntasks-per-node=8
srun b0,"ash -c "${CMD}" 0>&0 | tee \${X}.log
EOF1
