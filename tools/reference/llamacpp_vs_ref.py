#!/usr/bin/env python3
"""How far llama.cpp's logits are from transformers' on test_arch's reference files.

For each tests/data/arch-*.ref named (default: all), rebuilds the tiny model from the
swa-mkmodel arguments on the file's first line, runs llama.cpp's library on the same tokens
through tools/reference/llamacpp_logits.cpp (built by tools/bench/build-llamacpp.sh beside a
llama.cpp tree, outside this repository) and prints, per file, the largest difference over the
largest logit, the same measure test_arch applies to swa.h. A file llama.cpp refuses is reported
with its exit status.

With --write, llama.cpp's logits of each file named are also written, in the same format, to
tests/data/llamacpp/arch-X.ref, which test_arch then holds swa.h to as well. We commit them for
the files on which llama.cpp computes what transformers does (not the windowed llama, qwen2,
qwen3, qwen3moe and phi3 ones, whose window llama.cpp ignores, nor Gemma's, whose GELU it reads
from an F16 table):

    python3 tools/reference/llamacpp_vs_ref.py LLAMACPP_LOGITS [--write] [tests/data/arch-X.ref ...]

Needs numpy only; build/swa-mkmodel must exist (make build/swa-mkmodel).
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np


def read_ref(path):
    with open(path, "rb") as f:
        line = f.readline()
        head = line.decode().split()
        assert head[:2] == ["swa-ref", "1"], path
        n, v, args = int(head[2]), int(head[3]), head[4:]
        tokens = np.frombuffer(f.read(4 * n), "<i4")
        logits = np.frombuffer(f.read(4 * n * v), "<f4").reshape(n, v)
    return line, args, tokens, logits


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    exe = sys.argv[1]
    write = "--write" in sys.argv[2:]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    refs = [a for a in sys.argv[2:] if a != "--write"] or sorted(glob.glob(os.path.join(root, "tests", "data", "arch-*.ref")))
    mkmodel = os.path.join(root, "build", "swa-mkmodel")
    for ref in refs:
        line, args, tokens, want = read_ref(ref)
        name = os.path.basename(ref)[len("arch-"):-len(".ref")]
        with tempfile.TemporaryDirectory() as tmp:
            model, tok, out = (os.path.join(tmp, x) for x in ("m.gguf", "t.bin", "l.bin"))
            subprocess.run([mkmodel] + args + [model], check=True, capture_output=True)
            tokens.astype("<i4").tofile(tok)
            r = subprocess.run([exe, model, str(len(tokens)), tok, out], capture_output=True, text=True)
            if r.returncode != 0:
                last = (r.stderr.strip().splitlines() or [""])[-1]
                print(f"{name}: llama.cpp refused it (status {r.returncode}) {last}")
                continue
            got = np.fromfile(out, "<f4").reshape(want.shape)
        if write:
            os.makedirs(os.path.join(root, "tests", "data", "llamacpp"), exist_ok=True)
            with open(os.path.join(root, "tests", "data", "llamacpp", os.path.basename(ref)), "wb") as f:
                f.write(line + tokens.astype("<i4").tobytes() + got.astype("<f4").tobytes())
        diff = np.abs(got.astype(np.float64) - want).max(axis=1) / np.abs(want).max()
        first = int(np.argmax(diff > 1e-4)) if (diff > 1e-4).any() else None
        print(f"{name}: llama.cpp against transformers {diff.max():.3g} (largest difference over largest logit)"
              + (f", above 1e-4 from position {first}" if first is not None else ""))


if __name__ == "__main__":
    main()
