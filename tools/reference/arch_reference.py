#!/usr/bin/env python3
"""Reference logits for tests/test_arch.c from Hugging Face transformers.

For each case below, swa-mkmodel writes a tiny random F32 model (one case with MXFP4 experts,
dequantized here by gguf-py) in llama.cpp's GGUF layout of one architecture; this script reads
the file back with the `gguf` package, undoes what
llama.cpp's converter does to the weights (Gemma's norms are stored as 1 + w), loads them into
the transformers class of that architecture (Gemma2ForCausalLM, Gemma3ForCausalLM,
Phi3ForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM; MixtralForCausalLM for llama files with
experts, with Q and K un-permuted from llama.cpp's interleaved RoPE layout, and
Qwen3MoeForCausalLM; GptOssForCausalLM; Ministral3ForCausalLM for mistral3, Q and K un-permuted
as llama's; Olmo2ForCausalLM for olmo2 files without a window, Olmo3ForCausalLM with one;
Cohere2ForCausalLM; LlamaForCausalLM for llama files without experts, Q and K un-permuted) in
float64 with eager attention, and
writes the logits of every position of a random token sequence to tests/data/arch-<case>.ref.

Llama 3.1's RoPE scaling (rope_type llama3): swa-mkmodel's --rope-llama3 F,L,H,O writes
rope_freqs.weight as llama.cpp's converter computes it; here transformers is given the same four
numbers from the arguments (not the tensor) and computes its own frequencies.

YaRN (gpt-oss, mistral3): truncate = True, as llama.cpp always rounds the correction dimensions
(gpt-oss's own config says False; docs/architectures.md).

Windows: transformers (5.x, masking_utils.sliding_window_overlay) lets query i see keys j with
i - sliding_window < j <= i, the same as swa.h's W, so sliding_window = W. The layer pattern is
left to transformers' defaults for Gemma (layer_types from sliding_window_pattern, 2 or 6),
OLMo 3 and Command R7B (three sliding layers, then a full one),
so the test also checks that swa.h derives the same windowed layers from the file; Qwen's
windows are on every layer (use_sliding_window with max_window_layers 0), Phi-3's too.

File format: one text line "swa-ref 1 <n_tokens> <n_vocab> <mkmodel arguments>", then
n_tokens int32 token ids and n_tokens x n_vocab float32 logits, little-endian.

    pip install torch transformers gguf numpy
    make build/swa-mkmodel && python3 tools/reference/arch_reference.py [CASE...]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import gguf
import transformers

V = 272   # vocabulary: swa-mkmodel's 259 special and byte tokens and a few more
N = 40    # tokens per sequence

# name, mkmodel arguments (after --type f32 --vocab V), tokens
CASES = [
    ("gemma2-w5", "--arch gemma2 --layers 4 --dim 64 --heads 4 --kv-heads 2 --head-dim 32 --ff 96 --ctx 128 --window 5"),
    ("gemma2-w12", "--arch gemma2 --layers 3 --dim 48 --heads 2 --kv-heads 1 --head-dim 32 --ff 64 --ctx 128 --window 12"),
    ("gemma3-w8", "--arch gemma3 --layers 7 --dim 64 --heads 4 --kv-heads 1 --head-dim 32 --ff 96 --ctx 128 --window 8 --rope-scale 4"),
    ("gemma3-p3", "--arch gemma3 --layers 6 --dim 32 --heads 2 --kv-heads 2 --head-dim 16 --ff 64 --ctx 128 --window 6 --pattern 3"),
    ("phi3-w7", "--arch phi3 --layers 3 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --window 7"),
    ("phi3-long-w10", "--arch phi3 --layers 2 --dim 64 --heads 4 --kv-heads 4 --ff 96 --ctx 64 --window 10 --rope-factors 16"),
    ("qwen2-w6", "--arch qwen2 --layers 3 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --window 6"),
    ("qwen2-full", "--arch qwen2 --layers 2 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --rope-base 1000000"),
    ("qwen3-w9", "--arch qwen3 --layers 3 --dim 64 --heads 4 --kv-heads 2 --head-dim 32 --ff 96 --ctx 128 --window 9"),
    ("mixtral-w7", "--arch llama --layers 3 --dim 64 --heads 4 --kv-heads 2 --ff 48 --experts 4 --experts-used 2 --ctx 128 --window 7"),
    ("mixtral-full", "--arch llama --layers 2 --dim 64 --heads 4 --kv-heads 1 --ff 32 --experts 8 --experts-used 2 --ctx 128 --rope-base 1000000"),
    ("qwen3moe-full", "--arch qwen3moe --layers 3 --dim 64 --heads 4 --kv-heads 2 --head-dim 32 --ff 96 --experts 8 --experts-used 3 --expert-ff 40 --ctx 128"),
    ("qwen3moe-w6", "--arch qwen3moe --layers 2 --dim 48 --heads 2 --kv-heads 1 --head-dim 32 --ff 64 --experts 6 --experts-used 2 --expert-ff 32 --ctx 128 --window 6"),
    ("olmo2-full", "--arch olmo2 --layers 3 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --rope-base 500000"),
    ("olmo3-w6", "--arch olmo2 --layers 5 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --window 6"),
    ("olmo3-w7-linear", "--arch olmo2 --layers 4 --dim 48 --heads 2 --kv-heads 1 --ff 64 --ctx 128 --window 7 --rope-scale 4"),
    ("olmo3-w5-yarn", "--arch olmo2 --layers 4 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --window 5 --yarn 8 --yarn-orig 16 --rope-base 500000"),
    ("cohere2-w5", "--arch cohere2 --layers 5 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --window 5"),
    ("cohere2-w8", "--arch cohere2 --layers 4 --dim 64 --heads 4 --kv-heads 1 --ff 96 --ctx 128 --window 8 --rope-base 50000"),
    ("gpt-oss-w6", "--arch gpt-oss --layers 3 --dim 64 --heads 4 --kv-heads 2 --head-dim 16 --ff 32 --experts 4 --experts-used 2 --expert-ff 32 --ctx 128 --window 6 --yarn 4 --yarn-orig 16"),
    ("gpt-oss-w9", "--arch gpt-oss --layers 4 --dim 48 --heads 8 --kv-heads 2 --head-dim 8 --ff 40 --experts 6 --experts-used 3 --expert-ff 40 --ctx 256 --window 9 --yarn 32 --yarn-orig 8 --rope-base 150000"),
    ("gpt-oss-mxfp4", "--arch gpt-oss --layers 2 --dim 64 --heads 4 --kv-heads 1 --head-dim 16 --ff 64 --experts 4 --experts-used 2 --expert-ff 64 --ctx 128 --window 7 --yarn 8 --yarn-orig 16 --expert-type mxfp4"),
    ("mistral3-temp", "--arch mistral3 --layers 2 --dim 64 --heads 4 --kv-heads 2 --head-dim 32 --ff 96 --ctx 128 --yarn 4 --yarn-orig 8 --attn-temp 0.3 --rope-base 1000000"),
    ("mistral3-beta", "--arch mistral3 --layers 3 --dim 48 --heads 2 --kv-heads 1 --head-dim 32 --ff 64 --ctx 256 --yarn 16 --yarn-orig 16 --yarn-beta-fast 8"),
    # Llama 4: chunks of 7 on three layers of four, the fourth global without RoPE and with the
    # temperature (its length 5, so that it grows within 40 tokens); experts on every other
    # layer, with the shared expert; and the QK norm off, top-2 routing on every layer
    ("llama4-c7", "--arch llama4 --layers 4 --dim 64 --heads 4 --kv-heads 2 --head-dim 16 --ff 96 --experts 4 --experts-used 1 --expert-ff 48 --moe-step 2 --ctx 128 --chunk 7 --attn-temp 0.2 --temp-len 5 --rope-base 500000"),
    # EXAONE 4: three windowed layers of four (transformers' default pattern from the period), the
    # global ones without RoPE; and a period of 3 from the file
    ("exaone4-w5", "--arch exaone4 --layers 5 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --window 5 --rope-base 1000000"),
    ("exaone4-w8-p3", "--arch exaone4 --layers 4 --dim 48 --heads 2 --kv-heads 1 --ff 64 --ctx 128 --window 8 --pattern 3"),
    ("exaone4-full", "--arch exaone4 --layers 2 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128"),   # no window: RoPE everywhere
    # AFMoE: a dense first layer, two shared experts, the selection bias, route scale 2.5, the
    # attention gate; windows 6 (three of four), and none (the fourth layer still without RoPE)
    ("afmoe-w6", "--arch afmoe --layers 5 --dim 64 --heads 4 --kv-heads 2 --head-dim 16 --ff 96 --experts 6 --experts-used 2 --expert-ff 32 --dense-lead 1 --shared 2 --route-scale 2.5 --ctx 128 --window 6"),
    ("afmoe-full", "--arch afmoe --layers 4 --dim 48 --heads 2 --kv-heads 1 --head-dim 32 --ff 64 --experts 4 --experts-used 3 --expert-ff 24 --dense-lead 2 --shared 1 --ctx 128 --rope-base 1000000"),
    # and without the chunk key or temperature keys: llama.cpp's fixed 8192 (no chunk boundary
    # within 40 tokens, the temperature 1), so llama.cpp computes what transformers does
    ("llama4-default", "--arch llama4 --layers 4 --dim 64 --heads 4 --kv-heads 2 --head-dim 16 --ff 96 --experts 4 --experts-used 1 --expert-ff 48 --moe-step 2 --ctx 128"),
    ("llama4-c6-top2", "--arch llama4 --layers 5 --dim 48 --heads 4 --kv-heads 1 --head-dim 16 --ff 64 --experts 5 --experts-used 2 --expert-ff 32 --ctx 128 --chunk 6 --attn-temp 0.5 --temp-len 9 --no-qk-norm"),
    # Llama 3.1's RoPE scaling (rope_freqs.weight): over an original context of 64, pair 0 turns
    # unscaled, pair 1 between (smoothed), the others divided by the factor; on dense llama and on
    # Llama 4's RoPE layers (no chunk key: llama.cpp's 8192, so llama.cpp computes the same)
    ("llama-rope-llama3", "--arch llama --layers 2 --dim 64 --heads 4 --kv-heads 2 --ff 96 --ctx 128 --rope-base 500000 --rope-llama3 8,1,4,64"),
    ("llama4-rope-llama3", "--arch llama4 --layers 4 --dim 64 --heads 4 --kv-heads 2 --head-dim 16 --ff 96 --experts 4 --experts-used 1 --expert-ff 48 --moe-step 2 --ctx 128 --rope-base 500000 --rope-llama3 16,1,4,64"),
]


# EmbeddingGemma: not logits but the text's embedding, tests/data/arch-<case>.ref holding "swa-emb 1
# <n_tokens> <n_embd> <mkmodel arguments>", the tokens, then two n_embd float32 vectors: the mean
# over the tokens of the final hidden state (after the output norm), then the last token's, each
# through dense_2 and dense_3 when the file has them and scaled to unit length.
EMBED_CASES = [
    ("gemma-embedding-w6", "--arch gemma-embedding --layers 6 --dim 64 --heads 4 --kv-heads 1 --head-dim 32 --ff 96 --ctx 128 --window 6 --dense 160"),
    ("gemma-embedding-w9", "--arch gemma-embedding --layers 7 --dim 48 --heads 2 --kv-heads 2 --head-dim 16 --ff 64 --ctx 128 --window 9"),
]


def field(r, key, default=None):
    f = r.fields.get(key)
    return default if f is None else f.contents()


def tensors(r):
    """Every tensor as float64; quantized ones (gpt-oss's MXFP4 experts) dequantized by gguf-py, so
    the reference runs on exactly the weights the file holds."""
    out = {}
    for t in r.tensors:
        w = t.data
        if t.tensor_type not in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            w = gguf.quants.dequantize(w, t.tensor_type)
        out[t.name] = torch.from_numpy(np.array(w, dtype=np.float64).reshape([int(n) for n in reversed(t.shape)]))
    return out


def yarn_for(k, base):
    """transformers' rope_parameters for a file that says rope.scaling.type yarn, truncate = True
    as llama.cpp's ggml_rope_yarn_corr_dims always floors and ceils (gpt-oss's config says
    False); mistral3's log multiplier is mscale_all_dim (mscale 1), as llama.cpp reads it."""
    p = {"rope_type": "yarn", "rope_theta": base, "factor": float(k("rope.scaling.factor")),
         "original_max_position_embeddings": k("rope.scaling.original_context_length"),
         "beta_fast": float(k("rope.scaling.yarn_beta_fast", 32.0)), "beta_slow": float(k("rope.scaling.yarn_beta_slow", 1.0)),
         "truncate": True}
    if k("rope.scaling.yarn_log_multiplier", 0.0):
        p.update(mscale=1.0, mscale_all_dim=float(k("rope.scaling.yarn_log_multiplier")))
    return p


def rope_for(args, base):
    """transformers' rope_parameters for swa-mkmodel's --rope-llama3 F,L,H,O, else the default."""
    a = args.split()
    if "--rope-llama3" not in a:
        return {"rope_type": "default", "rope_theta": base}
    f, lo, hi, orig = a[a.index("--rope-llama3") + 1].split(",")
    return {"rope_type": "llama3", "rope_theta": base, "factor": float(f), "low_freq_factor": float(lo),
            "high_freq_factor": float(hi), "original_max_position_embeddings": int(orig)}


def config_for(arch, r, args=""):
    k = lambda s, d=None: field(r, f"{arch}.{s}", d)
    d = k("embedding_length")
    heads = k("attention.head_count")
    c = dict(vocab_size=V, hidden_size=d, intermediate_size=k("feed_forward_length"),
             num_hidden_layers=k("block_count"), num_attention_heads=heads,
             num_key_value_heads=k("attention.head_count_kv"),
             head_dim=k("attention.key_length", d // heads), rms_norm_eps=k("attention.layer_norm_rms_epsilon"),
             max_position_embeddings=k("context_length"), attention_dropout=0.0,
             bos_token_id=1, eos_token_id=2, pad_token_id=0)
    window = k("attention.sliding_window", 0)
    base = k("rope.freq_base", 10000.0)
    if arch in ("gemma2", "gemma3"):
        c.update(query_pre_attn_scalar=c["head_dim"], hidden_activation="gelu_pytorch_tanh",
                 tie_word_embeddings=True, sliding_window=window)
    if arch == "gemma2":
        c.update(attn_logit_softcapping=k("attn_logit_softcapping"), final_logit_softcapping=k("final_logit_softcapping"),
                 rope_parameters={"rope_type": "default", "rope_theta": base})
        return transformers.Gemma2Config(**c), transformers.Gemma2ForCausalLM
    if arch == "gemma3":
        full = {"rope_type": "default", "rope_theta": base}
        if k("rope.scaling.type") == "linear":
            full = {"rope_type": "linear", "factor": k("rope.scaling.factor"), "rope_theta": base}
        elif k("rope.scaling.type") == "yarn":
            full = yarn_for(k, base)
        c.update(rope_parameters={"full_attention": full, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
                 sliding_window_pattern=k("attention.sliding_window_pattern", 6))
        return transformers.Gemma3TextConfig(**c), transformers.Gemma3ForCausalLM
    if arch == "olmo2":   # OLMo 3 when the file has a window: its windowed layers' RoPE unscaled
        c.pop("head_dim")
        full = {"rope_type": "default", "rope_theta": base}
        if k("rope.scaling.type") == "linear":
            full = {"rope_type": "linear", "factor": k("rope.scaling.factor"), "rope_theta": base}
        elif k("rope.scaling.type") == "yarn":
            full = yarn_for(k, base)
        c.update(tie_word_embeddings=False, attention_bias=False, hidden_act="silu")
        if not window:
            return transformers.Olmo2Config(**c, rope_parameters=full), transformers.Olmo2ForCausalLM
        c.update(sliding_window=window,
                 rope_parameters={"full_attention": full, "sliding_attention": {"rope_type": "default", "rope_theta": base}})
        return transformers.Olmo3Config(**c), transformers.Olmo3ForCausalLM
    if arch == "cohere2":
        c.pop("head_dim"), c.pop("rms_norm_eps")
        c.update(layer_norm_eps=k("attention.layer_norm_epsilon"), logit_scale=k("logit_scale"), sliding_window=window,
                 rope_parameters={"rope_type": "default", "rope_theta": base}, tie_word_embeddings=True,
                 attention_bias=False, hidden_act="silu")
        return transformers.Cohere2Config(**c), transformers.Cohere2ForCausalLM
    if arch == "gpt-oss":   # layer_types left to transformers: even layers windowed, as llama.cpp's pattern
        rope = yarn_for(k, base) if k("rope.scaling.type") == "yarn" else {"rope_type": "default", "rope_theta": base}
        c.update(intermediate_size=k("expert_feed_forward_length"), num_local_experts=k("expert_count"),
                 num_experts_per_tok=k("expert_used_count"), sliding_window=window, rope_parameters=rope,
                 tie_word_embeddings=False, output_router_logits=False, router_aux_loss_coef=0.0, attention_bias=True)
        return transformers.GptOssConfig(**c), transformers.GptOssForCausalLM
    if arch == "mistral3":
        rope = yarn_for(k, base) if k("rope.scaling.type") == "yarn" else {"rope_type": "default", "rope_theta": base}
        rope["llama_4_scaling_beta"] = float(k("attention.temperature_scale", 0.0))
        c.update(rope_parameters=rope, tie_word_embeddings=False, sliding_window=window or None, hidden_act="silu")
        return transformers.Ministral3Config(**c), transformers.Ministral3ForCausalLM
    if arch == "gemma-embedding":   # Gemma 3 as an encoder: transformers' window W // 2 + 1 exclusive = |i - j| <= W / 2
        c.update(query_pre_attn_scalar=c["head_dim"], hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                 sliding_window=window, use_bidirectional_attention=True, sliding_window_pattern=6,
                 rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": base},
                                  "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})
        return transformers.Gemma3TextConfig(**c), transformers.Gemma3TextModel
    if arch == "afmoe":   # llama.cpp always scales the embeddings (Trinity's mup_enabled)
        c.update(moe_intermediate_size=k("expert_feed_forward_length"), num_dense_layers=k("leading_dense_block_count"),
                 num_experts=k("expert_count"), num_experts_per_tok=k("expert_used_count"),
                 num_shared_experts=k("expert_shared_count"), route_scale=float(k("expert_weights_scale", 1.0)),
                 global_attn_every_n_layers=4, sliding_window=window or 1 << 20, mup_enabled=True,   # no window: one past every position
                 rope_parameters={"rope_type": "default", "rope_theta": base}, tie_word_embeddings=False, hidden_act="silu")
        return transformers.AfmoeConfig(**c), transformers.AfmoeForCausalLM
    if arch == "exaone4":
        c.update(sliding_window=window or None, sliding_window_pattern=k("attention.sliding_window_pattern", 4) if window else None,
                 rope_parameters={"rope_type": "default", "rope_theta": base}, tie_word_embeddings=False, hidden_act="silu")
        if not window:   # transformers' default layer types divide by the period, 0 without a window
            c.update(layer_types=["full_attention"] * c["num_hidden_layers"])
        return transformers.Exaone4Config(**c), transformers.Exaone4ForCausalLM
    if arch == "llama4":   # layer types, NoPE layers and MoE layers left to transformers' defaults
        E = k("expert_count", 0)
        c.update(intermediate_size=k("expert_feed_forward_length", c["intermediate_size"]),
                 intermediate_size_mlp=c["intermediate_size"], num_local_experts=E,
                 num_experts_per_tok=k("expert_used_count", 1), interleave_moe_layer_step=k("interleave_moe_layer_step"),
                 use_qk_norm=bool(k("use_qk_norm", E != 128)), attention_chunk_size=k("attention.chunk_size", 8192),
                 attn_temperature_tuning=True, floor_scale=k("attention.temperature_length", 8192),
                 attn_scale=float(k("attention.temperature_scale", 0.1)),
                 rope_parameters=rope_for(args, base), tie_word_embeddings=False,
                 hidden_act="silu", output_router_logits=False, router_aux_loss_coef=0.0)
        return transformers.Llama4TextConfig(**c), transformers.Llama4ForCausalLM
    if arch == "llama" and not k("expert_count"):
        c.update(rope_parameters=rope_for(args, base), tie_word_embeddings=False, hidden_act="silu",
                 attention_bias=False, mlp_bias=False)
        return transformers.LlamaConfig(**c), transformers.LlamaForCausalLM
    if arch == "phi3":
        c.pop("head_dim")
        rope = {"rope_type": "default", "rope_theta": base}
        if "rope_factors_long.weight" in [t.name for t in r.tensors]:
            t = {x.name: np.array(x.data, dtype=np.float64).tolist() for x in r.tensors if x.name.startswith("rope_factors")}
            rope = {"rope_type": "longrope", "rope_theta": base, "long_factor": t["rope_factors_long.weight"],
                    "short_factor": t["rope_factors_short.weight"],
                    "original_max_position_embeddings": k("rope.scaling.original_context_length"),
                    "attention_factor": float(k("rope.scaling.attn_factor"))}
            c["original_max_position_embeddings"] = k("rope.scaling.original_context_length")
        c.update(rope_parameters=rope, sliding_window=window or None, tie_word_embeddings=False,
                 hidden_act="silu", resid_pdrop=0.0, embd_pdrop=0.0)
        return transformers.Phi3Config(**c), transformers.Phi3ForCausalLM
    c.update(rope_parameters={"rope_type": "default", "rope_theta": base}, tie_word_embeddings=False,
             use_sliding_window=bool(window), sliding_window=window or None, max_window_layers=0, hidden_act="silu")
    if arch == "qwen2":
        return transformers.Qwen2Config(**c), transformers.Qwen2ForCausalLM
    if arch == "qwen3":
        return transformers.Qwen3Config(**c), transformers.Qwen3ForCausalLM
    experts = dict(num_experts_per_tok=k("expert_used_count"), output_router_logits=False, router_aux_loss_coef=0.0)
    if arch == "llama":   # Mixtral: softmax over all experts, top k, weights renormalized over them
        c.pop("use_sliding_window"), c.pop("max_window_layers")
        c.update(num_local_experts=k("expert_count"), **experts)
        return transformers.MixtralConfig(**c), transformers.MixtralForCausalLM
    c.update(num_experts=k("expert_count"), moe_intermediate_size=k("expert_feed_forward_length"),
             norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[], **experts)
    return transformers.Qwen3MoeConfig(**c), transformers.Qwen3MoeForCausalLM


# llama.cpp's tensor names to transformers' (the inverse of convert_hf_to_gguf.py's map)
LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias", "attn_v.bias": "self_attn.v_proj.bias",
    "attn_output.bias": "self_attn.o_proj.bias",
    "attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
    "attn_qkv.weight": "self_attn.qkv_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight",
}
GEMMA_NAMES = {"ffn_norm.weight": "pre_feedforward_layernorm.weight",
               "post_attention_norm.weight": "post_attention_layernorm.weight",
               "post_ffw_norm.weight": "post_feedforward_layernorm.weight"}


def unpermute(w, n_head):
    """llama.cpp's converter interleaves each head's rotary halves for llama's RoPE; undo it."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def experts_state(model, l, rest, w, sd):
    """The router and 3-D expert tensors under the names the transformers class has: fused
    (experts.gate_up_proj [E][2 ff][d], gate first; experts.down_proj) or one module per expert."""
    keys = [k for k in model.state_dict() if k.startswith(f"model.layers.{l}.")]
    prefix = f"model.layers.{l}." + ("block_sparse_moe." if any(".block_sparse_moe." in k for k in keys) else "mlp.")
    fused = any(k.endswith("experts.gate_up_proj") for k in keys)
    per = {"ffn_gate_exps.weight": ("w1", "gate_proj"), "ffn_up_exps.weight": ("w3", "up_proj"),
           "ffn_down_exps.weight": ("w2", "down_proj")}
    if rest == "ffn_gate_inp.weight":
        sd[prefix + "gate.weight"] = w
    elif fused:
        if rest == "ffn_down_exps.weight":
            sd[prefix + "experts.down_proj"] = w
        else:
            sd.setdefault("_fused", {})[(l, rest)] = w
            g, u = sd["_fused"].get((l, "ffn_gate_exps.weight")), sd["_fused"].get((l, "ffn_up_exps.weight"))
            if g is not None and u is not None:
                sd[prefix + "experts.gate_up_proj"] = torch.cat([g, u], dim=1)
    else:
        mixtral = ".block_sparse_moe." in prefix
        for e in range(w.shape[0]):
            sd[f"{prefix}experts.{e}.{per[rest][0 if mixtral else 1]}.weight"] = w[e]


def gpt_oss_state(l, rest, w, sd):
    """gpt-oss's names: the sinks, the router (mlp.router) and the experts fused as transformers
    holds them, gate_up_proj [E][d][2 ff] with gate and up interleaved (column 2j gate j, 2j + 1
    up j, which llama.cpp's converter splits), down_proj [E][ff][d], and their biases."""
    pre = f"model.layers.{l}."
    names = {"attn_sinks.weight": "self_attn.sinks", "attn_output.bias": "self_attn.o_proj.bias",
             "post_attention_norm.weight": "post_attention_layernorm.weight",
             "ffn_gate_inp.weight": "mlp.router.weight", "ffn_gate_inp.bias": "mlp.router.bias"}
    if rest in names:
        sd[pre + names[rest]] = w
        return True
    if rest == "ffn_down_exps.weight":
        sd[pre + "mlp.experts.down_proj"] = w.transpose(1, 2).contiguous()
    elif rest == "ffn_down_exps.bias":
        sd[pre + "mlp.experts.down_proj_bias"] = w
    elif rest in ("ffn_gate_exps.weight", "ffn_up_exps.weight"):
        E, ff, d = w.shape
        t = sd.setdefault(pre + "mlp.experts.gate_up_proj", torch.zeros(E, d, 2 * ff, dtype=torch.float64))
        t[:, :, 0 if rest.startswith("ffn_gate") else 1::2] = w.transpose(1, 2)
    elif rest in ("ffn_gate_exps.bias", "ffn_up_exps.bias"):
        E, ff = w.shape
        t = sd.setdefault(pre + "mlp.experts.gate_up_proj_bias", torch.zeros(E, 2 * ff, dtype=torch.float64))
        t[:, 0 if rest.startswith("ffn_gate") else 1::2] = w
    else:
        return False
    return True


def llama4_state(l, rest, w, sd):
    """Llama 4's feed-forward names: feed_forward.{gate,up,down}_proj (dense layers), router,
    experts.gate_up_proj [E][d][2 ff] (gate's columns first) and down_proj [E][ff][d], and
    shared_expert.*; the norms are llama's."""
    pre = f"model.layers.{l}.feed_forward."
    names = {"ffn_gate.weight": "gate_proj.weight", "ffn_up.weight": "up_proj.weight", "ffn_down.weight": "down_proj.weight",
             "ffn_gate_inp.weight": "router.weight", "ffn_gate_shexp.weight": "shared_expert.gate_proj.weight",
             "ffn_up_shexp.weight": "shared_expert.up_proj.weight", "ffn_down_shexp.weight": "shared_expert.down_proj.weight"}
    if rest in names:
        sd[pre + names[rest]] = w
    elif rest == "ffn_down_exps.weight":
        sd[pre + "experts.down_proj"] = w.transpose(1, 2).contiguous()
    elif rest in ("ffn_gate_exps.weight", "ffn_up_exps.weight"):
        E, ff, d = w.shape
        t = sd.setdefault(pre + "experts.gate_up_proj", torch.zeros(E, d, 2 * ff, dtype=torch.float64))
        (t[:, :, :ff] if rest.startswith("ffn_gate") else t[:, :, ff:]).copy_(w.transpose(1, 2))
    else:
        return False
    return True


def afmoe_state(l, rest, w, sd):
    """AFMoE's names: the attention gate, Gemma-like norms on both sides of each block under its own
    names, the router with its selection bias, the experts (gate_up_proj [E][2 ff][d], gate's
    rows first; down_proj [E][d][ff]) and the shared experts as one MLP."""
    pre = f"model.layers.{l}."
    names = {"attn_gate.weight": "self_attn.gate_proj.weight", "post_attention_norm.weight": "post_attention_layernorm.weight",
             "ffn_norm.weight": "pre_mlp_layernorm.weight", "post_ffw_norm.weight": "post_mlp_layernorm.weight",
             "ffn_gate_inp.weight": "mlp.router.gate.weight", "exp_probs_b.bias": "mlp.expert_bias",
             "ffn_down_exps.weight": "mlp.experts.down_proj", "ffn_gate_shexp.weight": "mlp.shared_experts.gate_proj.weight",
             "ffn_up_shexp.weight": "mlp.shared_experts.up_proj.weight",
             "ffn_down_shexp.weight": "mlp.shared_experts.down_proj.weight"}
    if rest in names:
        sd[pre + names[rest]] = w
    elif rest in ("ffn_gate_exps.weight", "ffn_up_exps.weight"):
        E, ff, d = w.shape
        t = sd.setdefault(pre + "mlp.experts.gate_up_proj", torch.zeros(E, 2 * ff, d, dtype=torch.float64))
        (t[:, :ff] if rest.startswith("ffn_gate") else t[:, ff:]).copy_(w)
    else:
        return False
    return True


def state_dict(arch, r, model=None, cfg=None):
    sd = {}
    gemma = arch in ("gemma2", "gemma3", "gemma-embedding")
    for name, w in tensors(r).items():
        if name.startswith("rope_factors") or name == "rope_freqs.weight":
            continue
        if gemma and name.endswith("norm.weight"):
            w = w - 1.0   # the converter stores 1 + w
        if name.startswith("dense_"):
            continue
        if name == "token_embd.weight":
            sd["model.embed_tokens.weight"] = w
        elif name == "output_norm.weight":
            sd["model.norm.weight"] = w
        elif name == "output.weight":
            sd["lm_head.weight"] = w
        else:
            _, l, rest = name.split(".", 2)
            if arch == "gpt-oss" and gpt_oss_state(l, rest, w, sd):
                continue
            if arch == "llama4" and llama4_state(l, rest, w, sd):
                continue
            if arch == "afmoe" and afmoe_state(l, rest, w, sd):
                continue
            if "gate_inp" in rest or "_exps" in rest:
                experts_state(model, l, rest, w, sd)
                continue
            if arch in ("llama", "mistral3") and rest in ("attn_q.weight", "attn_k.weight"):
                w = unpermute(w, cfg.num_attention_heads if rest == "attn_q.weight" else cfg.num_key_value_heads)
            hf = (GEMMA_NAMES.get(rest) if gemma or arch in ("olmo2", "exaone4") else None) or LAYER_NAMES[rest]
            if arch == "phi3" and rest == "ffn_up.weight":
                hf = "mlp.gate_up_proj.weight"   # gate rows first, as in both files
            sd[f"model.layers.{l}.{hf}"] = w
    if gemma or arch == "cohere2":
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
    sd.pop("_fused", None)
    return sd


def embedding(model, r, tokens):
    """The mean and the last token's final hidden state, through dense_2 and dense_3 if present, normalized."""
    w = {t.name: torch.from_numpy(np.array(t.data, dtype=np.float64).reshape([int(n) for n in reversed(t.shape)]))
         for t in r.tensors if t.name.startswith("dense_")}
    with torch.no_grad():
        h = model(torch.from_numpy(tokens.astype(np.int64))[None]).last_hidden_state[0]
    out = []
    for v in (h.mean(dim=0), h[-1]):
        if "dense_2.weight" in w:
            v = w["dense_3.weight"] @ (w["dense_2.weight"] @ v)
        out.append((v / v.norm()).numpy().astype(np.float32))
    return out


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository, above tools/reference/
    mkmodel = os.path.join(root, "build", "swa-mkmodel")
    out_dir = os.path.join(root, "tests", "data")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    only = sys.argv[1:]   # case names, or every case
    for case, args in CASES + EMBED_CASES:
        if only and case not in only:
            continue
        embed = (case, args) in EMBED_CASES
        args = f"--shape custom --type f32 --vocab {V} {args}"
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.gguf")
            subprocess.run([mkmodel] + args.split() + [path], check=True, capture_output=True)
            r = gguf.GGUFReader(path)
            arch = field(r, "general.architecture")
            cfg, cls = config_for(arch, r, args)
            cfg._attn_implementation = "eager"
            cfg._experts_implementation = "eager"   # float64: the grouped kernels want float32
            model = cls(cfg).to(torch.float64).eval()
            sd = state_dict(arch, r, model, cfg)
            if embed:   # the bare text model: no "model." prefix, no output head
                sd = {k[len("model."):]: v for k, v in sd.items() if k.startswith("model.")}
            missing, unexpected = model.load_state_dict(sd, strict=False)
            missing = [m for m in missing if "rotary" not in m]
            if missing or unexpected:
                sys.exit(f"{case}: missing {missing}, unexpected {unexpected}")
            rng = np.random.RandomState(sum(map(ord, case)))
            tokens = rng.randint(3, V, size=N).astype(np.int32)
            if embed:
                vecs = embedding(model, r, tokens)
            else:
                with torch.no_grad():
                    logits = model(torch.from_numpy(tokens.astype(np.int64))[None]).logits[0].numpy().astype(np.float32)
        if embed:
            with open(os.path.join(out_dir, f"arch-{case}.ref"), "wb") as f:
                f.write(f"swa-emb 1 {N} {len(vecs[0])} {args}\n".encode())
                f.write(tokens.astype("<i4").tobytes())
                for v in vecs:
                    f.write(v.astype("<f4").tobytes())
            print(f"{case}: {cls.__name__}, layer types {cfg.layer_types}, sliding window {cfg.sliding_window}", file=sys.stderr)
            continue
        with open(os.path.join(out_dir, f"arch-{case}.ref"), "wb") as f:
            f.write(f"swa-ref 1 {N} {V} {args}\n".encode())
            f.write(tokens.astype("<i4").tobytes())
            f.write(logits.astype("<f4").tobytes())
        print(f"{case}: {cls.__name__}, layer types {getattr(cfg, 'layer_types', None)}, "
              f"logits {np.abs(logits).max():.3f} max", file=sys.stderr)


if __name__ == "__main__":
    main()
