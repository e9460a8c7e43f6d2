A=xx
A=$A$A
A=$A$A
A=$A$A
f() { f; }
while true; do :; done
torchrun --nproc_per_node ${N:-8} pretrain_gpt.py --num-layers ${#A} --hidden-size $((1<<6)) --num-attention-heads 4 --vocab-size ${V##*/}
