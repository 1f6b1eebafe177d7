#!/usr/bin/env python3
"""Writes a vocabulary-only GGUF of OpenAI's o200k_base byte-level BPE (gpt-4o, gpt-oss), the
200k vocabulary swa-grammar-bench and tools/bench/llamacpp_grammar.cpp measure beside the 32k
and 128k ones of the tokenizer tests.

    python3 tools/bench/make-o200k-vocab.py RANKS OUT.gguf [PRE]

RANKS is o200k_base's ranks, as tiktoken keeps them (o200k_base.tiktoken: a base64 token and its
rank a line) or as the PyPI package quicktok-v1 ships them (quicktok/data/o200k.vocab in its
wheel: a little-endian u32 count, then per token a u16 length, the bytes and a u32 rank). The
file has tokenizer.ggml.model "gpt2", pre PRE (default "gpt-4o"; llama.cpp before its gpt-4o
pre-tokenizer loads the file with "llama-bpe", and a grammar sampler never tokenizes), the 199,998
ranked tokens in GPT-2's byte-to-character spelling, <|endoftext|> (199999, EOS) and
<|endofprompt|> (200018) as control tokens and <|reserved_N|> unused ones between them, and the
merges read back from the ranks (each token's bytes merged by the lower-ranked tokens, lowest
first, until two parts are left: those two are its merge); it holds no tensors.
Needs the gguf package (pip install gguf)."""
import base64
import struct
import sys

import gguf


def read_ranks(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x3e\x0d\x03\x00" and b"\n" in data[:200]:
        ranks = {}
        for line in data.splitlines():
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
        return ranks
    (count,) = struct.unpack_from("<I", data, 0)
    at, ranks = 4, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<H", data, at)
        tok = data[at + 2:at + 2 + n]
        (rank,) = struct.unpack_from("<I", data, at + 2 + n)
        ranks[tok] = rank
        at += 2 + n + 4
    return ranks


def byte_chars():
    """GPT-2's printable character for each byte."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


def last_merge(t, ranks):
    """The two parts BPE joins last to make t: its bytes merged pair by pair, the pair of lowest
    rank first, with tokens of lower rank than t's only."""
    parts, limit = [t[i:i + 1] for i in range(len(t))], ranks[t]
    while len(parts) > 2:
        best = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < limit and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    if len(parts) != 2:
        sys.exit(f"token {t!r}: its bytes do not merge into two parts")
    return parts


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    ranks = read_ranks(sys.argv[1])
    n_ranked = max(ranks.values()) + 1
    if n_ranked != 199998 or len(ranks) != n_ranked:
        sys.exit(f"{sys.argv[1]}: {len(ranks)} tokens up to rank {n_ranked - 1}, not o200k_base's 199998")
    bc = byte_chars()
    spell = lambda t: "".join(bc[b] for b in t)
    by_rank = sorted(ranks, key=ranks.get)
    tokens = [spell(t) for t in by_rank]
    types = [gguf.TokenType.NORMAL] * n_ranked
    special = {199999: "<|endoftext|>", 200018: "<|endofprompt|>"}
    for i in range(n_ranked, 200019):
        tokens.append(special.get(i, f"<|reserved_{i}|>"))
        types.append(gguf.TokenType.CONTROL if i in special else gguf.TokenType.UNUSED)
    merges = []
    for t in by_rank:
        if len(t) >= 2:
            a, b = last_merge(t, ranks)
            merges.append(spell(a) + " " + spell(b))
    w = gguf.GGUFWriter(sys.argv[2], "gpt2")
    w.add_name("o200k_base vocabulary")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(sys.argv[3] if len(sys.argv) == 4 else "gpt-4o")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(199999)
    w.add_bos_token_id(199999)
    w.add_add_bos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{sys.argv[2]}: {len(tokens)} tokens, {len(merges)} merges")


if __name__ == "__main__":
    main()
