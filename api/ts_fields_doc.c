/*
 * ts_fields_doc.c - what each request field means (ts_fields_doc.h): the
 * docs columns of the registry (core/ts_fields.def), the dashboard's
 * groups and the import members' docs.
 *
 * doc is copied verbatim into api/openapi.json by tools/ts_gen_openapi
 * (ninja -C BUILD regen-fields), cli into the CLI's --help, so write them
 * for those readers: doc a full sentence ending in a period and naming the
 * default, cli a short lower-case phrase.
 */
#include <stddef.h>

#include "ts_fields_doc.h"

/* The dashboard's fieldsets in its order (web/fields.js), and the /v1/fit
 * and /v1/search extras. */
const ts_field_group ts_field_groups[] = {
    { "model", "Model" },
    { "mode", "Pre-training or fine-tuning" },
    { "work", "Precision, optimizer and data" },
    { "parallel", "Parallelism and memory savers" },
    { "hardware", "Hardware and cost" },
    { "ckpt", "Checkpoints and failures" },
    { "fit", "POST /v1/fit (and, but solve, POST /v1/search) only" },
    { "search", "POST /v1/search only" },
    { "budget", "POST /v1/budget only" },
    { NULL, NULL }
};

/* The docs columns of the registry (core/ts_fields.def), per row: the
 * other columns are the runtime table's (core/ts_fields.c). */
const ts_field_doc ts_field_docs[TS_FI_COUNT] = {
#define TS_FIELD(ID, NAME, TYPE, KIND, MEMBER, LO, HI, FLAGS, DEF, VALUES, ...) \
    [ID] = { __VA_ARGS__ },
#define TS_EXTRA(ID, NAME, TYPE, LO, HI, FLAGS, DEF, VALUES, ...) [ID] = { __VA_ARGS__ },
#include "ts_fields.def"
};

/* The import members, each one sentence for openapi.json. */
const ts_import_doc ts_import_docs[TS_IMP_COUNT] = {
    [TS_IMP_HF] = { false, 0,
                    "A Hugging Face config.json, applied after the preset and before "
                    "deepspeed_config, megatron_args and the request's own members. model_type one "
                    "of llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, gemma, gemma2, "
                    "gemma3_text, gemma3 (text_config), phi3, gpt2, gpt_neox, deepseek_v2, "
                    "deepseek_v3, falcon, bloom, starcoder2, granite, granitemoe, olmo, olmo2, "
                    "phimoe, qwen2_moe, internlm2, gpt_oss, kimi_k2, kimi_k25 (text_config), "
                    "glm4_moe, "
                    "minimax_m2; any other with num_hidden_layers, "
                    "hidden_size, num_attention_heads, intermediate_size and vocab_size is read "
                    "as Llama-like (noted), else a 400 naming the missing keys; one whose keys say "
                    "Mamba layers (mamba_d_state, state_size, ...) or experts (num_experts > 1, "
                    "...) is a 400 at that key. Errors name the imported key "
                    "(/hf_config/num_hidden_layers). At most 2048 values, 8 levels deep." },
    [TS_IMP_AXOLOTL] = { true, TS_IMPORT_ARGS_MAX,
                         "An axolotl YAML config (the text of the .yml), applied after hf_config "
                         "and before deepspeed_config: sequence_len, micro_batch_size, "
                         "gradient_accumulation_steps, max_steps (tokens = max_steps x "
                         "global_batch x seq), bf16/fp16 (without FSDP or DeepSpeed the "
                         "model trains in that dtype: no master copy, and with flash, flex or "
                         "xformers attention a full fine-tune's torch AdamW moments in bf16), "
                         "gradient_checkpointing, adapter "
                         "lora/qlora with lora_r, lora_dropout, lora_modules_to_save "
                         "(embed_tokens, lm_head) and load_in_4bit/8bit, optimizer, "
                         "flash/sdp attention, fsdp (framework hf with zero 3; hf without fsdp "
                         "or deepspeed), the LigerPlugin's liger_rope, liger_rms_norm and "
                         "liger_glu_activation (liger_kernels); base_model, a Hub id, gives the "
                         "shape from the model catalogue as model would (another organisation's "
                         "copy noted) unless the request's model, shape or hf_config does, and "
                         "is not fetched when the catalogue lacks it (send its config.json as "
                         "hf_config); the parallel layout keys "
                         "(tensor_parallel_size, ...) are noted, not read. Read as "
                         "PyYAML's safe_load reads it: one document, YAML 1.1 "
                         "scalars (1.5e3 is a string), tags !!str/!!int/!!float/!!bool/!!null; "
                         "aliases, merge keys, other tags and NUL characters are a 400. Errors "
                         "name /axolotl_config/<key>. Needs a build with libyaml, else 400." },
    [TS_IMP_LLAMAFACTORY] = { true, TS_IMPORT_ARGS_MAX,
                              "A LLaMA-Factory training YAML (the text of the .yaml that "
                              "llamafactory-cli train reads), applied after axolotl_config and "
                              "before nemo_config. A key left out is LLaMA-Factory's default, "
                              "sent as such: finetuning_type lora (lora_rank 8, lora_target "
                              "all, a comma list or a list) or full, lora_dropout, "
                              "additional_target (lora_modules_to_save; resize_vocab without it: "
                              "both embeddings), quantization_bit 4/8 with bitsandbytes "
                              "(nf4/int8; other methods quantize only a checkpoint already "
                              "quantized: noted; hqq, eetq a 400), bf16/fp16/pure_bf16 (none: a "
                              "full fine-tune in fp32; pure_bf16 alone: no master copy without "
                              "FSDP or under the Trainer's own fsdp option, and a full "
                              "fine-tune's torch AdamW moments in bf16; refused under ZeRO-3), "
                              "cutoff_len (2048), max_steps (tokens = max_steps x global_batch x "
                              "seq), per_device_train_batch_size "
                              "(8), gradient_accumulation_steps (1), gradient checkpointing (on "
                              "unless disable_gradient_checkpointing; use_reentrant_gc), "
                              "flash_attn, optim, deepspeed (a path: send its JSON as "
                              "deepspeed_config), fsdp (the Trainer's FSDP option: true, or "
                              "words; hf with zero 0 without it, an accelerate config's FSDP is "
                              "the request's zero), enable_liger_kernel, torch_compile; "
                              "model_name_or_path, a "
                              "Hub id, gives the shape from the model catalogue as axolotl's "
                              "base_model does. The freeze and OFT types, DoRA, the rm/ppo/dpo/"
                              "kto stages, GaLore, APOLLO, BAdam, Adam-mini, Muon, LLaMA Pro, "
                              "mixture-of-depths, KTransformers, the Megatron Core, Megatron "
                              "Bridge and HyperParallel backends, v1 configs (model, dist_config) "
                              "and an axolotl_config beside it are a 400 at their key. Read "
                              "as axolotl_config is (YAML 1.1, no aliases). Errors name "
                              "/llamafactory_config/<key>. Needs a build with libyaml, else 400." },
    [TS_IMP_NEMO] = { true, TS_IMPORT_ARGS_MAX,
                      "A NeMo training YAML (the text of NeMo-Framework-Launcher's "
                      "conf/training/<family>/<model>.yaml), applied after axolotl_config and "
                      "before deepspeed_config: trainer.num_nodes x trainer.devices GPUs, "
                      "trainer.precision, trainer.max_steps; model.num_layers, hidden_size, "
                      "ffn_hidden_size, num_attention_heads, num_query_groups, kv_channels, "
                      "normalization, bias, activation, position_embedding_type, "
                      "share_embeddings_and_output_weights, num_moe_experts, moe_router_topk, "
                      "micro/global_batch_size, tensor/pipeline/virtual/context/expert parallel "
                      "sizes, sequence_parallel, activations_checkpoint_granularity, fp8, fsdp, "
                      "optim.name, the tokenizer (GPT2BPETokenizer, or a Hugging Face tokenizer "
                      "of the catalogue) and peft (peft_scheme lora: lora_tuning.adapter_dim, "
                      "adapter_dropout, target_modules), NeMo's defaults for the rest. OmegaConf "
                      "interpolations "
                      "${.key}, ${training.path} and the launcher's "
                      "multiply/divide_ceil/divide_floor are evaluated; others in a key that is "
                      "read are a 400. Keys not read are listed in import_notes; a Mamba / "
                      "hybrid model's keys (hybrid_override_pattern, mamba_ssm_ngroups, ...) are "
                      "a 400 at the key; errors name "
                      "/nemo_config/<path>. Needs a build with libyaml, else 400." },
    [TS_IMP_DS] = { false, 0,
                    "A DeepSpeed JSON config: zero_optimization.stage and offload devices, "
                    "train_micro_batch_size_per_gpu, gradient_accumulation_steps and "
                    "train_batch_size by DeepSpeed's rule (train_batch_size = micro x steps x dp; "
                    "any two give the third, train_batch_size alone means 1 step, all three must "
                    "agree), bf16/fp16, optimizer.type, activation_checkpointing; \"auto\" values "
                    "keep the member's value and are reported in import_notes." },
    [TS_IMP_MEGA] = { true, TS_IMPORT_ARGS_MAX,
                      "A Megatron-LM launch script, args file or command line, read as bash reads "
                      "it without running anything: VAR=value, arrays, ${VAR:-default}, "
                      "$((arithmetic)), if/case/for, functions, torchrun / python -m "
                      "torch.distributed.run / deepspeed / srun / sbatch heredoc / bash -c "
                      "wrappers. The training command (a *.py entry point, the one with the most "
                      "--flags) gives the flags; its launcher's options give gpus "
                      "(--nproc_per_node x --nnodes, ...). The vocabulary is --vocab-size or the "
                      "tokenizer's (GPT2BPETokenizer 50257; HuggingFaceTokenizer: the catalogue "
                      "model --tokenizer-model names), padded as Megatron pads it. A variable "
                      "never assigned, a script argument or a command's output is ignored in a "
                      "flag not read and a 400 naming it and its line in a flag that is (unless "
                      "the request gives that member). Unmapped flags are reported in "
                      "import_notes. At most 32768 bytes and 2048 words in the command." },
};
