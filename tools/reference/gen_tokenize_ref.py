#!/usr/bin/env python3
"""Expected ids for tests/test_tokenizer.c on a mixed-script text, from llama.cpp itself.

Writes tests/data/mixed_text.txt: 8000 characters drawn (seeded) from Latin, Cyrillic, CJK,
kana, Hangul, Devanagari and Arabic letters, digits, punctuation, symbols, combining marks,
emoji, contractions and every kind of whitespace; and, for each vocabulary given, the ids
llama.cpp's llama-tokenize gives for it (no BOS, no special-token parsing) as
tests/data/mixed_text.NAME.ids, one line of numbers.

    python3 tools/reference/gen_tokenize_ref.py ../peers/llama.cpp/build/bin/llama-tokenize \\
        ../shared/testdata/ggml-vocab-gpt-2.gguf ../shared/testdata/ggml-vocab-llama-bpe.gguf
"""
import os
import random
import subprocess
import sys

POOL = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") * 3 + [" "] * 40 +
        list("\n\r\t") + list(".,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`") + list("éèüößÀÉÜÑçłńŁąęæøåÆØÅ") +
        list("Привет мирАБВ") + list("中文字符测试标点。，、") + list("日本語のテキストカタカナ") + list("한국어텍스트") +
        ["🦙", "🔥", "©", "™", "€", "½", "²", "\u0301", "\u0308", "\u00a0", "\u2003", "\u3000", "ǅ", "ﬁ",
         "\u2126", "\u212a", "µ", "'s", "'S", "'ll", "'RE", "  ", "\n\n", "   ", "٣", "١٢", "मस्ते", "।", "…", "—"])


def main():
    tool, vocabs = sys.argv[1], sys.argv[2:]
    random.seed(7)
    text = "".join(random.choice(POOL) for _ in range(8000))
    here = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data")
    path = os.path.join(here, "mixed_text.txt")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    for v in vocabs:
        name = os.path.basename(v)[len("ggml-vocab-"):-len(".gguf")]
        out = subprocess.run([tool, "-m", v, "-f", path, "--ids", "--log-disable", "--no-escape",
                              "--no-parse-special", "--no-bos"], capture_output=True, text=True, check=True).stdout
        ids = out.strip().strip("[]").replace(",", " ").split()
        with open(os.path.join(here, "mixed_text.%s.ids" % name), "w") as f:
            f.write(" ".join(ids) + "\n")


if __name__ == "__main__":
    main()
