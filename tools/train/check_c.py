#!/usr/bin/python3
"""Check the exported model against the C library's tools, using only the files in --models.

    /usr/bin/python3 check_c.py [--models ../../examples/models] [--name swa-stories]

Builds build/swa-generate, swa-tokenize and swa-perplexity with the project's Makefile, then:
  1. swa-tokenize of heldout.txt equals [BOS] + sp.encode(text) (needs --tokenizer);
  2. swa-perplexity of heldout.txt is within 0.5% of the reference (and prints the difference);
  3. swa-generate --temp 0 --kv-f32 from the reference prompt ids prints exactly the reference
     greedy ids (with --min-gap G, or parts from them at a near-tie only: a step whose reference
     top-2 logit gap is below G); the same with the default F16 cache is reported, not required.
Exits 1 if any check fails.
"""

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=os.path.join(ROOT, "examples/models"))
    ap.add_argument("--name", default="swa-stories")
    ap.add_argument("--tokenizer", default=os.path.join(HERE, "work/tokenizer.model"))
    ap.add_argument("--threads", default="1")
    ap.add_argument("--min-gap", type=float, default=0.0,
                    help="the F32 greedy run may part from the reference only at a step whose reference top-2 "
                    "logit gap is below this (default 0: never)")
    a = ap.parse_args()

    bins = ["build/swa-generate", "build/swa-tokenize", "build/swa-perplexity"]
    run(["make", "-C", ROOT, "-s"] + bins)
    gen, tok, ppl = (os.path.join(ROOT, b) for b in bins)
    model = os.path.join(a.models, a.name + ".gguf")
    held = os.path.join(a.models, "heldout.txt")
    with open(os.path.join(a.models, a.name + ".ref.json")) as fp:
        ref = json.load(fp)
    ok = True

    c_ids = [int(x) for x in run([tok, "-m", model, "-f", held]).split()]
    if os.path.exists(a.tokenizer):
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
        with open(held, encoding="ascii", newline="") as fp:
            py_ids = [sp.bos_id()] + sp.encode(fp.read())
        same = c_ids == py_ids
        ok &= same
        print("tokenizer: C %d tokens, SentencePiece %d tokens: %s" % (len(c_ids), len(py_ids), "same" if same else "DIFFERENT"))
    else:
        print("tokenizer: %s not found, skipped" % a.tokenizer)

    out = run([ppl, "-m", model, "-f", held, "-t", a.threads])
    c_ppl = float(re.search(r"perplexity: ([0-9.]+)", out).group(1))
    r_ppl = ref["heldout"]["perplexity"]
    rel = abs(c_ppl - r_ppl) / r_ppl
    ok &= rel < 0.005
    print("perplexity: C %.4f, PyTorch %.4f, relative difference %.2e (limit 5e-3)" % (c_ppl, r_ppl, rel))

    # The library caches keys and values in F16 by default; --kv-f32 keeps them in F32 like the
    # reference. The F32 run must match every token (with --min-gap, until a near-tie that the
    # Q8_0 rounding of the activations flips, as on a narrow model); the default run is reported with the
    # reference's top-2 logit gap where it first differs (a near-tie that F16 rounding can flip).
    g = ref["greedy"]
    want = g["generated_ids"]
    for extra, strict in ((["--kv-f32"], True), ([], False)):
        out = run([gen, "-m", model, "--ids", ",".join(map(str, g["prompt_ids"])), "-n", str(len(want)),
                   "--temp", "0", "-t", a.threads] + extra)
        got = [int(x) for x in out.split()]
        n = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
        same = got == want
        if strict:
            same = same or (n < len(want) and len(got) == len(want) and g["top2_logit_gaps"][n] < a.min_gap)
            ok &= same
        note = "" if got == want else ", first differs at step %d where the reference's top-2 gap is %.4f" % (
            n, g["top2_logit_gaps"][n])
        print("greedy (%s cache): %d of %d generated ids match%s%s" % (
            "F32" if extra else "F16", n, len(want), note, "" if same or not strict else " (MISMATCH)"))
    print("all checks passed" if ok else "CHECKS FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
