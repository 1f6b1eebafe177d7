#!/usr/bin/env python3
"""Reference data for the quantized-type decoders: rows of llama.cpp-quantized files, dequantized
by llama.cpp's own Python package (gguf.quants.dequantize), summarised in a small text file that
tests/test_quant.c compares swa_dequantize_row against.

    pip install gguf numpy
    llama-quantize ../shared/models/quant/base-f32.gguf /tmp/peer-Q5_1.gguf Q5_1
    python3 tools/reference/ref_dequant.py [QUANT_DIR [OUT.txt [Q5_1.gguf]]]

QUANT_DIR defaults to ../shared/models/quant (files written by llama.cpp's llama-quantize: the
Q5_K_M, Q3_K_M, Q2_K, Q4_1, Q5_0, IQ4_NL and IQ4_XS mixes), OUT to tests/data/quant_ref.txt. For
each file the output has a line

    file NAME sha256 DIGEST

then for each chosen tensor a line

    tensor NAME TYPE NE0 NE1

and for each chosen row of it

    row INDEX SUM SUMSQ F0 .. F7 L0 .. L7

with the sum and the sum of squares of the row's dequantized values (added in float64) and its
first and last 8 values, all printed so that they read back exactly. ../shared has no Q5_1 file:
rows of one that llama-quantize wrote (the third argument; skipped when absent) go in whole, as

    block TYPE NE0 HEX
    values V0 .. V(NE0-1)

so that the test needs no file for them. MXFP4 has no file either (llama-quantize writes it only
for expert tensors): blocks made here, one for each E8M0 exponent worth a look (0 and 1, the
float subnormals 2^-128 and 2^-127 of ggml's halved scale; 2; 126-128 around 1; 253; 254, the
largest finite scale of the OCP format; 255, NaN there and 2^127 in ggml), each holding all 16
codes, go in as block lines, and rows of floats that gguf's MXFP4 quantizer turns into blocks go
in as

    quantize TYPE NE0 HEX
    floats V0 .. V(NE0-1)

(Gaussians, ties between codes, largest values at and just below powers of two, tiny and huge
blocks) for the test to hold the GGUF writer's quantizer to, byte for byte (made with gguf 0.19.0;
the other types' lines are from an earlier gguf, and regenerating them needs the Q5_1 file too). Only the tests read
the output; this script only writes it, and no test runs it."""

import hashlib
import os
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

# per file: tensors of each type it holds, rows of 256 and of 512 (ffn_down: two super-blocks)
FILES = {
    "peer-Q5_K_M.gguf": ["token_embd.weight", "blk.0.attn_k.weight", "blk.0.ffn_down.weight", "blk.1.attn_q.weight",
                         "output.weight", "blk.1.attn_v.weight", "blk.1.ffn_down.weight"],
    "peer-Q3_K_M.gguf": ["token_embd.weight", "blk.0.attn_k.weight", "blk.0.ffn_down.weight", "blk.0.attn_v.weight"],
    "peer-Q2_K.gguf": ["token_embd.weight", "blk.0.attn_k.weight", "blk.0.ffn_down.weight", "blk.0.attn_v.weight"],
    "peer-Q4_1.gguf": ["token_embd.weight", "blk.0.ffn_down.weight"],
    "peer-Q5_0.gguf": ["token_embd.weight", "blk.0.ffn_down.weight"],
    "peer-IQ4_NL.gguf": ["token_embd.weight", "blk.0.ffn_down.weight"],
    "peer-IQ4_XS.gguf": ["token_embd.weight", "blk.0.ffn_down.weight"],
}
ROWS = [0, 1, 37, -1]   # -1: the last row
BLOCK_ROWS = [0, 37, -1]


def rows_of(t):
    ne0, ne1 = int(t.shape[0]), int(t.shape[1])
    rows = dequantize(t.data, t.tensor_type).reshape(ne1, ne0)
    assert rows.dtype == np.float32
    return ne0, ne1, rows


def file_lines(path):
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    by_name = {t.name: t for t in GGUFReader(path).tensors}
    lines = ["file %s sha256 %s" % (os.path.basename(path), digest)]
    for name in FILES[os.path.basename(path)]:
        t = by_name[name]
        ne0, ne1, rows = rows_of(t)
        lines.append("tensor %s %s %d %d" % (name, t.tensor_type.name, ne0, ne1))
        for r in ROWS:
            r = r % ne1
            v = rows[r]
            w = v.astype(np.float64)
            vals = " ".join("%.9g" % x for x in list(v[:8]) + list(v[-8:]))
            lines.append("row %d %.17g %.17g %s" % (r, w.sum(), (w * w).sum(), vals))
    return lines


def block_lines(path):
    t = {t.name: t for t in GGUFReader(path).tensors}["blk.0.ffn_down.weight"]
    ne0, ne1, rows = rows_of(t)
    raw = np.asarray(t.data).reshape(ne1, -1)
    lines = []
    for r in BLOCK_ROWS:
        r = r % ne1
        lines.append("block %s %d %s" % (t.tensor_type.name, ne0, bytes(raw[r].tobytes()).hex()))
        lines.append("values " + " ".join("%.9g" % x for x in rows[r]))
    return lines


def mxfp4_lines():
    from gguf.constants import GGMLQuantizationType as T
    from gguf.quants import quantize
    lines = []
    # every code in every block: low nibbles 0..15, high nibbles 15..0
    qs = bytes(j | (15 - j) << 4 for j in range(16))
    raw = np.frombuffer(b"".join(bytes([e]) + qs for e in (0, 1, 2, 126, 127, 128, 253, 254, 255)), dtype=np.uint8)
    vals = dequantize(raw, T.MXFP4).astype(np.float32)
    lines.append("block MXFP4 %d %s" % (vals.size, raw.tobytes().hex()))
    lines.append("values " + " ".join("%.9g" % x for x in vals))
    rng = np.random.default_rng(20261203)
    rows = [rng.standard_normal(128).astype(np.float32)]
    # ties: halfway between neighbouring codes of the scale the largest (4) gives, d = 2^-2 * 2
    half = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -1.75, -5.0, 4.0] + [0.0] * 21, dtype=np.float32)
    rows.append(half)
    for k in (-3, 0, 5, 20):   # largest exactly 2^k, then just below 2^k
        a = rng.standard_normal(32).astype(np.float32) * np.float32(2.0 ** (k - 2))
        a[7] = np.float32(2.0 ** k)
        b = a.copy()
        b[7] = np.nextafter(np.float32(2.0 ** k), np.float32(0))
        rows += [a, b]
    rows.append(rng.standard_normal(32).astype(np.float32) * np.float32(2.0 ** -118))   # tiny scales
    rows.append(rng.standard_normal(32).astype(np.float32) * np.float32(1e37))          # huge ones
    rows.append(np.zeros(32, dtype=np.float32))
    for x in rows:
        q = quantize(x.reshape(1, -1), T.MXFP4)
        lines.append("quantize MXFP4 %d %s" % (x.size, q.tobytes().hex()))
        lines.append("floats " + " ".join("%.9g" % v for v in x))
    return lines


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "../shared/models/quant"
    out = sys.argv[2] if len(sys.argv) > 2 else "tests/data/quant_ref.txt"
    q5_1 = sys.argv[3] if len(sys.argv) > 3 else "/tmp/peer-Q5_1.gguf"
    lines = ["# written by tools/reference/ref_dequant.py with gguf.quants.dequantize: file NAME, tensor NAME TYPE NE0 NE1,",
             "# row INDEX SUM SUMSQ and the row's first and last 8 values; block TYPE NE0 HEX and its values;",
             "# quantize TYPE NE0 HEX and the floats gguf.quants.quantize turned into it"]
    for name in FILES:
        lines += file_lines(os.path.join(folder, name))
    if os.path.exists(q5_1):
        lines += block_lines(q5_1)
    lines += mxfp4_lines()
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
