#!/usr/bin/env python3
"""Reference verdicts for tests/test_grammar.c's property test: random strings, most of them
near-valid (valid samples with a few characters inserted, deleted, replaced or moved), judged
by llama.cpp's llama-gbnf-validator.

    python3 tools/reference/gen_grammar_ref.py /path/to/llama-gbnf-validator > tests/data/grammar/random.txt

Each output line: grammar file name, a tab, 1 (valid) or 0 and the character position of the
error llama-gbnf-validator reports ("0 17"), a tab, the string with \\n \\t \\r \\\\ and \\xNN /
\\uNNNN escapes for other control characters. The grammars are tests/data/grammar/*.gbnf
(copied from llama.cpp's grammars/). The seed is fixed, so the file is reproducible."""
import os
import random
import re
import subprocess
import sys
import tempfile

from grammar_escape import escape

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data", "grammar")

SAMPLES = {
    "json.gbnf": [
        '{"a": 1}', '{}', '{"name": "swa", "n": [1, 2.5, -3e4], "ok": true, "x": null}',
        '{\n  "k": {"nested": [{"deep": "v\\u00e9"}]},\n  "s": "tab\\tquote\\"end"\n}',
        '{"list": [], "o": {}, "f": false, "e": 1.0E-2}', '{"unicodé": "日本語", "n": 0}',
    ],
    "arithmetic.gbnf": [
        "x=1\n", "(a + b) * 3 = c\n", "foo_1 / (2 - bar) = 42\n1+2= 3\n", "((x))=y\n", "a*b*c-d=e9\n",
    ],
    "list.gbnf": [
        "- one\n", "- item one\n- item two\n", "- 日本\n- x y z\n- !@#$%\n", "- a\n- b\n- c\n",
    ],
    "chess.gbnf": [
        "1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 dxc4\n3. O-O O-O-O\n",
        "1. e4 e5\n2. Qh5 Nc6\n3. Bc4 Nf6\n4. Qxf7#\n", "1. a4 h5\n10. axb5 e8=Q+\n",
    ],
    "japanese.gbnf": [
        "こんにちは", "カタカナ ひらがな", "日本語、テスト。", "一二三\n四五六", "ァヿ\tぁゟ",
    ],
}

ALPHABET = {
    "json.gbnf": list('{}[]":,. -+0123456789eEtrufalsn\\\n\t') + ["é", "日", "\u00a0"],
    "arithmetic.gbnf": list("()+-*/= \t\nabxyz0123456789_"),
    "list.gbnf": list("- \nabc\r\x0b\x0c") + ["\u0085", "\u2028", "\u2029", "日"],
    "chess.gbnf": list("12345678 9.\nabcdefghNBKQRxO-=+#"),
    "japanese.gbnf": ["あ", "ゟ", "ァ", "ヿ", "、", "〾", "一", "鿿", " ", "\t", "\n", "a", "\u3040", "\u309f", "\u30a0"],
}


def mutate(rng, s, alphabet):
    chars = list(s)
    for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3])):
        op = rng.random()
        i = rng.randrange(len(chars) + 1)
        if op < 0.3:
            chars.insert(i, rng.choice(alphabet))
        elif op < 0.55 and chars:
            del chars[min(i, len(chars) - 1)]
        elif op < 0.8 and chars:
            chars[min(i, len(chars) - 1)] = rng.choice(alphabet)
        elif chars:
            j = rng.randrange(len(chars))
            k = min(len(chars), j + rng.randrange(1, 5))
            piece = chars[j:k]
            del chars[j:k]
            p = rng.randrange(len(chars) + 1)
            chars[p:p] = piece
    return "".join(chars)


def verdict(validator, grammar, text):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
        path = f.name
    try:
        out = subprocess.run([validator, grammar, path], capture_output=True, check=True).stdout.decode("utf-8", "replace")
    finally:
        os.unlink(path)
    if "Input string is valid" in out:
        return "1"
    m = re.search(r"at position (\d+)", out)
    if not m:
        raise SystemExit("unexpected output from %s: %r" % (validator, out))
    return "0 " + m.group(1)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    validator = sys.argv[1]
    rng = random.Random(20240607)
    for name in sorted(SAMPLES):
        grammar = os.path.join(DATA, name)
        seen = set()
        count = 0
        while count < 700:
            base = rng.choice(SAMPLES[name])
            if rng.random() < 0.5:  # two samples back to back: longer texts, other joins
                base += rng.choice(SAMPLES[name])
            s = mutate(rng, base, ALPHABET[name]) if rng.random() < 0.85 else base
            if s in seen or "\x00" in s:
                continue
            seen.add(s)
            count += 1
            print("%s\t%s\t%s" % (name, verdict(validator, grammar, s), escape(s, invisible=True)))


if __name__ == "__main__":
    main()
