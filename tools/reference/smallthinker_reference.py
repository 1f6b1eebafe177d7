#!/usr/bin/env python3
"""Reference logits for tests/test_arch.c's SmallThinker cases, in float64 numpy.

transformers has no SmallThinker class, so this is a forward pass of its own, written from the
description of the architecture in llama.cpp's December 2025 graph (src/models/smallthinker.cpp)
and sharing nothing with swa.h: for each layer, the router's logits from the layer's input
(before the attention's norm); RMSNorm, Q, K, V, NeoX RoPE on every layer but the first of each
four (when the file has a window; on every layer without one), causal attention with the window
i - W < j <= i on the layers other than the first of each four; the residual; RMSNorm, then a
mixture of experts: softmax (expert_gating_func 1) or sigmoid (2) over the logits, the top
expert_used_count experts (ties to the lower number), their weights divided by their sum, each
expert down(relu(gate x) * up x); the residual. Output norm, output matrix.

swa-mkmodel writes each model (F32), this script reads it back with the `gguf` package and
writes tests/data/arch-<case>.ref in tools/reference/arch_reference.py's format.

    pip install numpy gguf
    make build/swa-mkmodel && python3 tools/reference/smallthinker_reference.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf

V, N = 272, 40
CASES = [
    ("smallthinker-w6", "--arch smallthinker --layers 5 --dim 64 --heads 4 --kv-heads 2 --ff 96 --experts 4 --experts-used 2 --expert-ff 48 --ctx 128 --window 6"),
    ("smallthinker-w5-sigmoid", "--arch smallthinker --layers 4 --dim 48 --heads 2 --kv-heads 1 --ff 64 --experts 6 --experts-used 3 --expert-ff 32 --ctx 128 --window 5 --gating 2 --rope-base 1000000"),
    ("smallthinker-full", "--arch smallthinker --layers 2 --dim 64 --heads 4 --kv-heads 4 --ff 96 --experts 4 --experts-used 1 --expert-ff 40 --ctx 128"),
]


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def neox(v, base):
    """v [n, heads, hd] turned at positions 0..n-1: dimension i with i + hd/2."""
    n, _, hd = v.shape
    half = hd // 2
    ang = np.arange(n)[:, None] * base ** (-2.0 * np.arange(half) / hd)[None, :]
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = v[..., :half], v[..., half:]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)


def forward(r, tokens):
    k = lambda s, d=None: (lambda f: d if f is None else f.contents())(r.fields.get(f"smallthinker.{s}"))
    t = {x.name: np.array(x.data, dtype=np.float64).reshape([int(n) for n in reversed(x.shape)]) for x in r.tensors}
    L, H, KV = k("block_count"), k("attention.head_count"), k("attention.head_count_kv")
    E, K, eps, base = k("expert_count"), k("expert_used_count"), k("attention.layer_norm_rms_epsilon"), k("rope.freq_base")
    W, gating = k("attention.sliding_window", 0), k("expert_gating_func")
    x = t["token_embd.weight"][tokens]
    n, d = x.shape
    hd = d // H
    for l in range(L):
        b = f"blk.{l}."
        windowed = W > 0 and l % 4 != 0
        turns = W == 0 or windowed
        logits = x @ t[b + "ffn_gate_inp.weight"].T
        h = rmsnorm(x, t[b + "attn_norm.weight"], eps)
        q = (h @ t[b + "attn_q.weight"].T).reshape(n, H, hd)
        kk = (h @ t[b + "attn_k.weight"].T).reshape(n, KV, hd)
        v = (h @ t[b + "attn_v.weight"].T).reshape(n, KV, hd)
        if turns:
            q, kk = neox(q, base), neox(kk, base)
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        mask = (j <= i) & ((i - j < W) if windowed else True)
        att = np.zeros((n, H, hd))
        for hh in range(H):
            g = hh // (H // KV)
            sc = q[:, hh] @ kk[:, g].T / np.sqrt(hd)
            sc = np.where(mask, sc, -np.inf)
            p = np.exp(sc - sc.max(axis=1, keepdims=True))
            att[:, hh] = (p / p.sum(axis=1, keepdims=True)) @ v[:, g]
        x = x + att.reshape(n, H * hd) @ t[b + "attn_output.weight"].T
        h = rmsnorm(x, t[b + "ffn_norm.weight"], eps)
        if gating == 2:
            probs = 1.0 / (1.0 + np.exp(-logits))
        else:
            e = np.exp(logits - logits.max(axis=1, keepdims=True))
            probs = e / e.sum(axis=1, keepdims=True)
        out = np.zeros_like(x)
        for tok in range(n):
            pick = np.argsort(-probs[tok], kind="stable")[:K]
            w = probs[tok, pick] / max(probs[tok, pick].sum(), 6.103515625e-5)
            for e_, we in zip(pick, w):
                g = t[b + "ffn_gate_exps.weight"][e_] @ h[tok]
                u = t[b + "ffn_up_exps.weight"][e_] @ h[tok]
                out[tok] += we * (t[b + "ffn_down_exps.weight"][e_] @ (np.maximum(g, 0.0) * u))
        x = x + out
    x = rmsnorm(x, t["output_norm.weight"], eps)
    return x @ t["output.weight"].T


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mkmodel = os.path.join(root, "build", "swa-mkmodel")
    only = sys.argv[1:]
    for case, args in CASES:
        if only and case not in only:
            continue
        args = f"--shape custom --type f32 --vocab {V} {args}"
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.gguf")
            subprocess.run([mkmodel] + args.split() + [path], check=True, capture_output=True)
            r = gguf.GGUFReader(path)
            rng = np.random.RandomState(sum(map(ord, case)))
            tokens = rng.randint(3, V, size=N).astype(np.int32)
            logits = forward(r, tokens).astype(np.float32)
        with open(os.path.join(root, "tests", "data", f"arch-{case}.ref"), "wb") as f:
            f.write(f"swa-ref 1 {N} {V} {args}\n".encode())
            f.write(tokens.astype("<i4").tobytes())
            f.write(logits.astype("<f4").tobytes())
        print(f"{case}: logits {np.abs(logits).max():.3f} max", file=sys.stderr)


if __name__ == "__main__":
    main()
