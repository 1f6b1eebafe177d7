"""The escaping of the grammar reference files (tests/data/grammar/cases.txt and random.txt), which
tests/test_grammar.c undoes: shared by gen_grammar_cases.py and gen_grammar_ref.py."""


def escape(s, invisible=False):
    """s with \\\\ \\n \\t \\r and \\xNN for the other C0 controls; with invisible, DEL as \\x7f and
    the C1 controls, U+2028 and U+2029 as \\uNNNN too (random.txt's strings hold them)."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or (invisible and o == 0x7F):
            out.append("\\x%02x" % o)
        elif invisible and (0x80 <= o < 0xA0 or o in (0x2028, 0x2029)):
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    return "".join(out)
