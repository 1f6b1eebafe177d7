#!/usr/bin/python3
"""Train the SentencePiece BPE vocabulary on the corpus.

    /usr/bin/python3 train_tokenizer.py --corpus work/corpus.txt --prefix work/tokenizer --vocab 1536

The options mirror Llama's tokenizer (identity normalization, a dummy prefix, whitespace kept as
it is, digits split, byte fallback, ids unk 0 / bos 1 / eos 2 and no pad), so a llama.cpp-style
SPM tokenizer (greedy merges of the best-scoring pair, bytes for the rest) reproduces it.

SentencePiece trains on lines; the corpus has one paragraph per line, and newlines never reach
the vocabulary, so "\\n" is always encoded as the byte piece <0x0A>. Every line of the corpus is
used (input_sentence_size=0), so no sampling happens and one thread gives the same model each
run.
"""

import argparse
import sentencepiece as spm


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="work/corpus.txt")
    ap.add_argument("--prefix", default="work/tokenizer")
    ap.add_argument("--vocab", type=int, default=1536)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if hasattr(spm, "set_random_generator_seed"):
        spm.set_random_generator_seed(a.seed)
    spm.SentencePieceTrainer.train(
        input=a.corpus,
        model_prefix=a.prefix,
        model_type="bpe",
        vocab_size=a.vocab,
        character_coverage=1.0,
        byte_fallback=True,
        normalization_rule_name="identity",
        add_dummy_prefix=True,
        remove_extra_whitespaces=False,
        split_digits=True,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
        input_sentence_size=0,
        shuffle_input_sentence=False,
        max_sentence_length=16384,
        num_threads=1,
        minloglevel=1,
    )


if __name__ == "__main__":
    main()
