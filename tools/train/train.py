#!/usr/bin/python3
"""Train the sliding-window story model on the CPU.

    /usr/bin/python3 train.py --corpus work/corpus.txt --heldout work/heldout.txt \\
        --tokenizer work/tokenizer.model --out work/swa-stories.pt --steps 1000

Reproducible bit for bit from --seed on the same machine and packages: fixed thread count,
deterministic algorithms, weights initialised from a seeded generator, and every batch offset
drawn up front from another seeded generator, so the data order does not depend on timing.

Data: the corpus is cut into stories (blank-line separated) and consecutive stories are grouped
into documents of 1 to 4 stories joined by a blank line, each encoded as [BOS] + sp.encode(text),
which is exactly how the held-out perplexity is defined. The documents are concatenated into one
token stream, and each training sequence is seq_len + 1 tokens read from a random offset.

The log (--log, default loss.tsv beside this script) has one line per step: step, learning
rate, training loss, held-out loss (every --eval-every steps, else empty) and seconds elapsed.
"""

import argparse
import math
import os
import random
import sys
import time

# Under a shared machine, OpenMP's default spin-waiting makes two threads several times slower
# than one; passive waiting keeps them useful. It must be set before torch starts OpenMP.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch
import torch.nn.functional as F
import sentencepiece as spm

from model import Config, Model

HERE = os.path.dirname(os.path.abspath(__file__))


def stories(path):
    with open(path, encoding="ascii") as fp:
        return [s.strip("\n") for s in fp.read().split("\n\n") if s.strip()]


def token_stream(sp, texts, seed):
    """Group consecutive stories into documents and encode each as [BOS] + ids."""
    rng = random.Random(seed)
    docs, i = [], 0
    while i < len(texts):
        n = rng.randint(1, 4)
        docs.append("\n\n".join(texts[i:i + n]))
        i += n
    out = []
    for ids in sp.encode(docs):
        out.append(sp.bos_id())
        out.extend(ids)
    return torch.tensor(out, dtype=torch.int64)


def heldout_tokens(sp, path):
    """The held-out text exactly as the perplexity is defined: [BOS] + sp.encode(whole file)."""
    with open(path, encoding="ascii") as fp:
        text = fp.read()
    return torch.tensor([sp.bos_id()] + sp.encode(text), dtype=torch.int64)


@torch.no_grad()
def sequence_nll(model, tokens):
    """Per-token negative log-likelihood of tokens[1:] given everything before, one pass over
    positions 0..N-1 (the window mask caps attention, so any length works)."""
    model.eval()
    logits = model(tokens[None, :-1])[0].float()
    nll = F.cross_entropy(logits, tokens[1:], reduction="none")
    model.train()
    return nll


def lr_at(step, steps, peak, warmup, floor):
    if step < warmup:
        return peak * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return floor + 0.5 * (peak - floor) * (1.0 + math.cos(math.pi * t))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.path.join(HERE, "work/corpus.txt"))
    ap.add_argument("--heldout", default=os.path.join(HERE, "work/heldout.txt"))
    ap.add_argument("--tokenizer", default=os.path.join(HERE, "work/tokenizer.model"))
    ap.add_argument("--out", default=os.path.join(HERE, "work/swa-stories.pt"))
    ap.add_argument("--log", default=os.path.join(HERE, "loss.tsv"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=704)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr", type=float, default=2e-4)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--save-every", type=int, default=100)
    ap.add_argument("--resume", action="store_true", help="continue from --out if it exists")
    ap.add_argument("--init", help="a second phase: start from this checkpoint's weights with a fresh "
                    "optimizer and schedule; steps, data and log continue after its steps")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(a.seed)

    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    cfg = Config(vocab=sp.vocab_size(), dim=a.dim, n_layer=a.layers, n_head=a.heads,
                 n_kv_head=a.kv_heads, ffn=a.ffn, window=a.window, seq_len=a.seq_len)
    t0 = time.time()
    data = token_stream(sp, stories(a.corpus), a.seed)
    held = heldout_tokens(sp, a.heldout)
    print("corpus %d tokens, held-out %d tokens (%.1fs)" % (len(data), len(held), time.time() - t0), file=sys.stderr)

    model = Model(cfg)
    model.init_weights(torch.Generator().manual_seed(a.seed))
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    base = 0
    if a.init:
        ck = torch.load(a.init)
        assert Config(**ck["cfg"]) == cfg, "--init checkpoint has another shape"
        model.load_state_dict(ck["model"])
        base = ck["step"]
        print("phase 2 from %s (step %d)" % (a.init, base), file=sys.stderr)
    g = torch.Generator().manual_seed(a.seed + 1 + base)
    offsets = torch.randint(0, len(data) - a.seq_len - 1, (a.steps, a.batch), generator=g)
    ar = torch.arange(a.seq_len + 1)

    start, elapsed0 = 0, 0.0
    if a.resume and os.path.exists(a.out):
        ck = torch.load(a.out)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        start, elapsed0 = ck["step"], ck["elapsed"]
        print("resumed at step %d" % start, file=sys.stderr)
    print("model: %s, %d parameters" % (cfg.to_dict(), n_params), file=sys.stderr)

    def save(step, elapsed, final):
        ck = {"cfg": cfg.to_dict(), "model": model.state_dict(), "step": step, "elapsed": elapsed,
              "seed": a.seed, "steps": a.steps, "args": vars(a), "base_step": base,
              "total_steps": base + step, "tokens_seen": (base + step) * a.batch * a.seq_len}
        if not final:
            ck["opt"] = opt.state_dict()
        tmp = a.out + ".tmp"
        torch.save(ck, tmp)
        os.replace(tmp, a.out)

    mode = "a" if start or base else "w"
    log = open(a.log, mode)
    if not start and not base:
        log.write("step\tlr\ttrain_loss\theldout_loss\tseconds\n")
    t_start = time.time() - elapsed0
    model.train()
    for step in range(start, a.steps):
        lr = lr_at(step, a.steps, a.lr, a.warmup, a.min_lr)
        for grp in opt.param_groups:
            grp["lr"] = lr
        batch = data[offsets[step][:, None] + ar[None, :]]
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        done = step + 1
        hl = ""
        if done % a.eval_every == 0 or done == a.steps:
            hl = "%.4f" % sequence_nll(model, held).mean().item()
        el = time.time() - t_start
        log.write("%d\t%.6g\t%.4f\t%s\t%.1f\n" % (base + done, lr, loss.item(), hl, el))
        log.flush()
        if done % 10 == 0 or hl:
            print("step %d/%d lr %.2e loss %.4f%s %.0fs" % (done, a.steps, lr, loss.item(),
                  " held-out %s" % hl if hl else "", el), file=sys.stderr, flush=True)
        if done % a.save_every == 0 and done != a.steps:
            save(done, el, False)
    save(a.steps, time.time() - t_start, True)
    print("saved %s" % a.out, file=sys.stderr)


if __name__ == "__main__":
    main()
