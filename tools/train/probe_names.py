#!/usr/bin/python3
"""How well a checkpoint predicts character names: the mean NLL of name tokens in the held-out
file, split into a name's first mention in a story, a repeat of a name seen fewer than W tokens
before, and a repeat from W or more tokens before (which needs information carried across
windows through the layers).

    /usr/bin/python3 probe_names.py work/swa-stories.pt [--heldout work/heldout.txt]
"""

import argparse
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch
import torch.nn.functional as F
import sentencepiece as spm

from gen_corpus import GIRL_NAMES, BOY_NAMES
from model import load_checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ckpt")
    ap.add_argument("--heldout", default=os.path.join(HERE, "work/heldout.txt"))
    ap.add_argument("--tokenizer", default=os.path.join(HERE, "work/tokenizer.model"))
    a = ap.parse_args()
    torch.set_num_threads(2)
    _, model = load_checkpoint(a.ckpt)
    cfg = model.cfg
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    with open(a.heldout, encoding="ascii") as fp:
        tokens = [sp.bos_id()] + sp.encode(fp.read())
    with torch.no_grad():
        logits = model(torch.tensor(tokens)[None, :-1])[0]
    nll = F.cross_entropy(logits, torch.tensor(tokens[1:]), reduction="none").tolist()
    # Names that are one piece after a space; a story ends at two newline bytes.
    names = {sp.encode(n)[0] for n in GIRL_NAMES + BOY_NAMES if len(sp.encode(n)) == 1}
    nl = sp.piece_to_id("<0x0A>")
    groups = {"first mention": [], "repeat, < W back": [], "repeat, >= W back": []}
    last = {}
    for i in range(1, len(tokens)):
        if tokens[i] == nl and tokens[i - 1] == nl:
            last = {}
        t = tokens[i]
        if t in names:
            if t not in last:
                key = "first mention"
            else:
                key = "repeat, < W back" if i - last[t] < cfg.window else "repeat, >= W back"
            groups[key].append(nll[i - 1])
            last[t] = i
    print("%s: held-out mean NLL %.4f over %d tokens (W = %d)" % (a.ckpt, sum(nll) / len(nll), len(nll), cfg.window))
    for k, v in groups.items():
        print("  %-18s %4d names, mean NLL %.2f" % (k, len(v), sum(v) / max(1, len(v))))


if __name__ == "__main__":
    main()
