A=xx
A=$A$A
A=$A$A
A=$A$A
f() { f; }
while true; do :; done
t--ffn-hidden-size r_no--train-iters 16777216 de ${N:-8} p-retrain_gpt_per_no--train-iters 16777216 de ${N:-8} pretrain_gpt~pçy --num-layers ${#A} --hidden-size $((1<<kv-lora-rank1è287)) --num-attentionm`eads 536870912 --vocab-si.pçy --num-layers ${#A} --hidden-size $((0<<6)) --num-attentionm`eads 4 --vocab-size ${V##*+}
