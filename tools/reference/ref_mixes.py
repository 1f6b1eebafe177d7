#!/usr/bin/env python3
"""Reference data for swa-quantize's mixes: the type llama.cpp's llama-quantize gives each matrix
of two models in each named mix, written to a small text file that tests/test_quant.c compares
swa-quantize's choices against.

    pip install gguf
    python3 tools/reference/ref_mixes.py LLAMA_BIN_DIR [OUT.txt]

The models: ../shared/models/quant/base-f32.gguf (2 layers, 4 query heads per 2 key/value heads)
and one that swa-mkmodel writes with the arguments on the "model" line below (16 layers, 4 query
heads per key/value head, an FFN of 352, which is not whole K-quant blocks, so llama.cpp's
fallbacks show). The types depend only on the names, shapes and metadata, never on the weights.
Lines:

    model NAME ARGS        (ARGS: swa-mkmodel's, or "file PATH")
    mix MIX TENSOR=TYPE ...

Only the tests read the output; this script only writes it, and no test runs it."""

import os
import subprocess
import sys
import tempfile

from gguf import GGUFReader

MIXES = ["Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "Q8_0", "Q4_0",
         "Q4_1", "Q5_0", "Q5_1", "IQ4_NL", "IQ4_XS"]
MKMODEL = "--shape custom --layers 16 --dim 256 --heads 8 --kv-heads 2 --ff 352 --vocab 260 --ctx 64 --type f32"


def main():
    bindir = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else "tests/data/mix_types.txt"
    tmp = tempfile.mkdtemp()
    mk = os.path.join(tmp, "mk.gguf")
    subprocess.run(["build/swa-mkmodel"] + MKMODEL.split() + [mk], check=True, capture_output=True)
    models = [("base-f32", "file ../shared/models/quant/base-f32.gguf", "../shared/models/quant/base-f32.gguf"),
              ("mkmodel16", "mkmodel " + MKMODEL, mk)]
    lines = ["# written by tools/reference/ref_mixes.py from llama.cpp's llama-quantize: per model and mix, each matrix's type"]
    for name, args, path in models:
        lines.append("model %s %s" % (name, args))
        for mix in MIXES:
            q = os.path.join(tmp, "q.gguf")
            subprocess.run([os.path.join(bindir, "llama-quantize"), path, q, mix], check=True, capture_output=True)
            types = sorted("%s=%s" % (t.name, t.tensor_type.name) for t in GGUFReader(q).tensors if len(t.shape) > 1)
            lines.append("mix %s %s" % (mix, " ".join(types)))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
