#!/usr/bin/python3
"""Export a checkpoint to GGUF (Q8_0 matrices, F32 norms) and write the reference outputs.

    /usr/bin/python3 export.py --ckpt work/swa-stories.pt --tokenizer work/tokenizer.model \\
        --heldout-src work/heldout.txt --outdir ../../examples/models

Writes, in --outdir:
  heldout.txt               whole held-out stories, about --heldout-kb KB, from --heldout-src
  swa-stories.gguf          the model, architecture "llama", with llama.attention.sliding_window
  swa-stories.ref.json      perplexity of heldout.txt and a greedy continuation of --prompt

The references are computed from the exported weights: every Q8_0 matrix is dequantized back to
float32 (d * q, as a reader does) and the PyTorch model runs in float32 with those values, so
quantization cannot make the C library and this script disagree. The perplexity is
    tokens = [BOS] + sp.encode(text of heldout.txt)
    ppl = exp(mean over t = 1..N-1 of -log softmax(logits[t-1])[tokens[t]])
with every position attending through the sliding-window mask (past the training length too),
and the same figure is stored in the file as swa.train.heldout_perplexity. The exporter then
reads its file back and checks that every tensor holds the bytes the references used.
"""

import argparse
import hashlib
import json
import math
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch
import torch.nn.functional as F
import sentencepiece as spm

import gguf
from model import load_checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))


def tensor_plan(model):
    """(GGUF name, tensor, quantize?) in file order. A Linear weight is (out, in): written
    row-major as it is, that is ggml's ne = [in, out]."""
    plan = [("token_embd.weight", model.tok.weight, True),
            ("output_norm.weight", model.norm.weight, False)]
    for i, b in enumerate(model.layers):
        p = "blk.%d." % i
        plan += [(p + "attn_norm.weight", b.attn_norm.weight, False),
                 (p + "attn_q.weight", b.wq.weight, True),
                 (p + "attn_k.weight", b.wk.weight, True),
                 (p + "attn_v.weight", b.wv.weight, True),
                 (p + "attn_output.weight", b.wo.weight, True),
                 (p + "ffn_norm.weight", b.ffn_norm.weight, False),
                 (p + "ffn_gate.weight", b.w_gate.weight, True),
                 (p + "ffn_up.weight", b.w_up.weight, True),
                 (p + "ffn_down.weight", b.w_down.weight, True)]
    return plan


def quantize_model(model):
    """Replace the model's weights by what the file will hold; return [(name, ne, type, raw)]."""
    out = []
    for name, p, quant in tensor_plan(model):
        w = p.detach().float().numpy()
        if quant:
            rows, n = w.shape
            raw = gguf.q8_0_quantize(w)
            back = gguf.q8_0_dequantize(raw, rows, n)
            out.append((name, [n, rows], gguf.GGML_Q8_0, raw))
        else:
            raw = np.ascontiguousarray(w, dtype="<f4").tobytes()
            back = w
            out.append((name, [w.shape[0]], gguf.GGML_F32, raw))
        with torch.no_grad():
            p.copy_(torch.from_numpy(np.array(back, dtype=np.float32)))
    return out


def vocab(sp):
    """Pieces, scores and GGUF token types (1 normal, 2 unknown, 3 control, 6 byte)."""
    pieces, scores, types = [], [], []
    for i in range(sp.vocab_size()):
        pieces.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        types.append(2 if sp.is_unknown(i) else 3 if sp.is_control(i) else 6 if sp.is_byte(i) else 1)
    return pieces, scores, types


@torch.no_grad()
def perplexity(model, tokens):
    logits = model(torch.tensor(tokens)[None, :-1])[0]
    nll = F.cross_entropy(logits, torch.tensor(tokens[1:]), reduction="none").double()
    mean = nll.mean().item()
    se = (nll.std(unbiased=True) / math.sqrt(len(nll))).item()
    return math.exp(mean), mean, se


@torch.no_grad()
def greedy(model, ids, n_new):
    """Argmax decoding; each step reruns the whole sequence under the window mask, which is what
    the rolling cache computes incrementally. Ties go to the lowest id, as swa_argmax does.
    Also returns, per step, the gap between the best and second-best logit: an implementation
    whose logits differ by less than half of it picks the same token."""
    ids = list(ids)
    out, gaps = [], []
    for _ in range(n_new):
        logits = model(torch.tensor(ids)[None])[0, -1]
        top = torch.topk(logits, 2).values
        nxt = int(torch.argmax(logits).item())
        out.append(nxt)
        gaps.append(float(top[0] - top[1]))
        ids.append(nxt)
    return out, gaps


def heldout_sample(src, kb):
    """The first whole stories of src whose total stays within kb KB, in the corpus format."""
    with open(src, encoding="ascii") as fp:
        stories = [s.strip("\n") for s in fp.read().split("\n\n") if s.strip()]
    keep, size = [], 0
    for s in stories:
        if keep and size + len(s) + 2 > kb * 1000:
            break
        keep.append(s)
        size += len(s) + 2
    return "\n\n".join(keep) + "\n"


def sha256(path):
    with open(path, "rb") as fp:
        return hashlib.sha256(fp.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ckpt", default=os.path.join(HERE, "work/swa-stories.pt"))
    ap.add_argument("--tokenizer", default=os.path.join(HERE, "work/tokenizer.model"))
    ap.add_argument("--heldout-src", default=os.path.join(HERE, "work/heldout.txt"))
    ap.add_argument("--heldout-kb", type=float, default=15.0)
    ap.add_argument("--outdir", default=os.path.join(HERE, "../../examples/models"))
    ap.add_argument("--name", default="swa-stories")
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--n-gen", type=int, default=320)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.use_deterministic_algorithms(True)
    ck, model = load_checkpoint(a.ckpt)
    cfg = model.cfg
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    assert sp.vocab_size() == cfg.vocab and sp.bos_id() == 1 and sp.eos_id() == 2 and sp.unk_id() == 0

    tensors = quantize_model(model)

    os.makedirs(a.outdir, exist_ok=True)
    held_path = os.path.join(a.outdir, "heldout.txt")
    with open(held_path, "w", encoding="ascii", newline="\n") as fp:
        fp.write(heldout_sample(a.heldout_src, a.heldout_kb))
    with open(held_path, encoding="ascii", newline="") as fp:
        text = fp.read()
    held = [sp.bos_id()] + sp.encode(text)
    t0 = time.time()
    ppl, nll, se = perplexity(model, held)
    print("held-out: %d tokens, perplexity %.4f (mean NLL %.5f +- %.5f), %.1fs"
          % (len(held), ppl, nll, se, time.time() - t0), file=sys.stderr)

    prompt = [sp.bos_id()] + sp.encode(a.prompt)
    t0 = time.time()
    gen, gaps = greedy(model, prompt, a.n_gen)
    print("greedy: %d tokens in %.1fs, smallest top-2 logit gap %.4f at step %d"
          % (len(gen), time.time() - t0, min(gaps), gaps.index(min(gaps))), file=sys.stderr)

    w = gguf.Writer()
    S, U32, U64, F32, BOOL, ARR = gguf.STRING, gguf.U32, gguf.U64, gguf.F32, gguf.BOOL, gguf.ARRAY
    w.add("general.architecture", S, "llama")
    w.add("general.name", S, a.name)
    w.add("general.description", S, "A small story model trained by swa.h's tools/train with "
          "sliding-window attention (W=%d) on a synthetic corpus of our own." % cfg.window)
    w.add("general.license", S, "MIT")
    w.add("general.file_type", U32, 7)          # llama.cpp's LLAMA_FTYPE_MOSTLY_Q8_0
    w.add("general.alignment", U32, gguf.ALIGN)
    w.add("llama.vocab_size", U32, cfg.vocab)
    w.add("llama.context_length", U32, cfg.seq_len)
    w.add("llama.embedding_length", U32, cfg.dim)
    w.add("llama.block_count", U32, cfg.n_layer)
    w.add("llama.feed_forward_length", U32, cfg.ffn)
    w.add("llama.attention.head_count", U32, cfg.n_head)
    w.add("llama.attention.head_count_kv", U32, cfg.n_kv_head)
    w.add("llama.rope.freq_base", F32, cfg.rope_base)
    w.add("llama.rope.dimension_count", U32, cfg.head_dim)
    w.add("llama.attention.layer_norm_rms_epsilon", F32, cfg.norm_eps)
    w.add("llama.attention.sliding_window", U32, cfg.window)
    w.add("swa.train.seed", U32, ck["seed"])
    w.add("swa.train.steps", U32, ck.get("total_steps", ck["step"]))
    w.add("swa.train.tokens", U64, ck["tokens_seen"])
    w.add("swa.train.heldout_perplexity", F32, ppl)
    w.add("swa.train.heldout_perplexity_se", F32, ppl * se)
    w.add("swa.train.heldout_tokens", U32, len(held))
    pieces, scores, types = vocab(sp)
    w.add("tokenizer.ggml.model", S, "llama")
    w.add("tokenizer.ggml.tokens", ARR, (S, pieces))
    w.add("tokenizer.ggml.scores", ARR, (F32, scores))
    w.add("tokenizer.ggml.token_type", ARR, (gguf.I32, types))
    w.add("tokenizer.ggml.bos_token_id", U32, sp.bos_id())
    w.add("tokenizer.ggml.eos_token_id", U32, sp.eos_id())
    w.add("tokenizer.ggml.unknown_token_id", U32, sp.unk_id())
    w.add("tokenizer.ggml.add_bos_token", BOOL, True)
    w.add("tokenizer.ggml.add_eos_token", BOOL, False)
    w.add("tokenizer.ggml.add_space_prefix", BOOL, True)
    for name, ne, gtype, raw in tensors:
        w.add_tensor(name, ne, gtype, raw)
    gguf_path = os.path.join(a.outdir, a.name + ".gguf")
    w.write(gguf_path)

    # Read the file back: every tensor must hold the bytes the references were computed from.
    meta, back = gguf.read(gguf_path)
    assert [t[0] for t in tensors] == list(back)
    for name, ne, gtype, raw in tensors:
        assert back[name] == (ne, gtype, raw), name
    assert meta["tokenizer.ggml.tokens"] == pieces and meta["llama.attention.sliding_window"] == cfg.window

    ref = {
        "model": os.path.basename(gguf_path),
        "model_sha256": sha256(gguf_path),
        "note": "computed by tools/train/export.py in float32 from the dequantized Q8_0 weights",
        "window": cfg.window,
        "heldout": {
            "file": "heldout.txt",
            "sha256": sha256(held_path),
            "definition": "tokens = [BOS] + sp.encode(file text); ppl = exp(mean over t=1..N-1 of "
                          "-log softmax(logits[t-1])[tokens[t]]), positions 0..N-1, window mask",
            "n_tokens": len(held),
            "perplexity": ppl,
            "mean_nll": nll,
            "mean_nll_se": se,
            "perplexity_se": ppl * se,
        },
        "greedy": {
            "prompt": a.prompt,
            "prompt_ids": prompt,
            "n_generated": len(gen),
            "generated_ids": gen,
            "min_top2_logit_gap": min(gaps),
            "top2_logit_gaps": [round(x, 5) for x in gaps],
            "min_top2_logit_gap_step": gaps.index(min(gaps)),
            "text": sp.decode(gen),
            "full_text": sp.decode(prompt[1:] + gen),
        },
        "train": {"seed": ck["seed"], "steps": ck.get("total_steps", ck["step"]), "tokens": ck["tokens_seen"], "config": ck["cfg"]},
    }
    ref_path = os.path.join(a.outdir, a.name + ".ref.json")
    with open(ref_path, "w") as fp:
        json.dump(ref, fp, indent=1)
        fp.write("\n")
    print("wrote %s (%d bytes), %s, %s" % (gguf_path, os.path.getsize(gguf_path), ref_path, held_path),
          file=sys.stderr)
    print("prompt ids: %s" % ",".join(map(str, prompt)), file=sys.stderr)
    print(ref["greedy"]["full_text"], file=sys.stderr)


if __name__ == "__main__":
    main()
