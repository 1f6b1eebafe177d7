#!/usr/bin/env python3
"""Reference data for the K-quant decoders: rows of a llama.cpp-quantized file, dequantized by
llama.cpp's own Python package (gguf.quants.dequantize), summarised in a small text file that
tests/test_quant.c compares swa_dequantize_row against.

    pip install gguf numpy
    python3 tools/ref_dequant.py [IN.gguf [OUT.txt]]

IN defaults to ../shared/models/quant/peer-Q5_K_M.gguf (llama-quantize's Q5_K_M mix: Q5_K
matrices, Q6_K for the classifier, one attn_v and one ffn_down), OUT to tests/data/quant_ref.txt.
For each chosen tensor the file has a line

    tensor NAME TYPE NE0 NE1

and for each chosen row of it

    row INDEX SUM SUMSQ F0 .. F7 L0 .. L7

with the sum and the sum of squares of the row's dequantized values (added in float64) and its
first and last 8 values, all printed so that they read back exactly. Only the tests read the file;
this script only writes it, and no test runs it."""

import hashlib
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

# Q5_K and Q6_K tensors of the Q5_K_M file, rows of 256 and of 512 (two super-blocks)
TENSORS = ["token_embd.weight", "blk.0.attn_k.weight", "blk.0.ffn_down.weight", "blk.1.attn_q.weight",
           "output.weight", "blk.1.attn_v.weight", "blk.1.ffn_down.weight"]
ROWS = [0, 1, 37, -1]   # -1: the last row


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "../shared/models/quant/peer-Q5_K_M.gguf"
    out = sys.argv[2] if len(sys.argv) > 2 else "tests/data/quant_ref.txt"
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    reader = GGUFReader(path)
    by_name = {t.name: t for t in reader.tensors}
    lines = ["# " + path.rsplit("/", 1)[-1] + " sha256 " + digest,
             "# written by tools/ref_dequant.py with gguf.quants.dequantize: tensor NAME TYPE NE0 NE1, then",
             "# row INDEX SUM SUMSQ and the row's first and last 8 values"]
    for name in TENSORS:
        t = by_name[name]
        ne0, ne1 = int(t.shape[0]), int(t.shape[1])
        rows = dequantize(t.data, t.tensor_type).reshape(ne1, ne0)
        assert rows.dtype == np.float32
        lines.append("tensor %s %s %d %d" % (name, t.tensor_type.name, ne0, ne1))
        for r in ROWS:
            r = r % ne1
            v = rows[r]
            w = v.astype(np.float64)
            vals = " ".join("%.9g" % x for x in list(v[:8]) + list(v[-8:]))
            lines.append("row %d %.17g %.17g %s" % (r, w.sum(), (w * w).sum(), vals))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
