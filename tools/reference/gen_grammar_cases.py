#!/usr/bin/env python3
"""The GBNF cases of llama.cpp's grammar tests as data for tests/test_grammar.c.

    python3 tools/reference/gen_grammar_cases.py /work/peers/llama.cpp > tests/data/grammar/cases.txt

Reads tests/test-grammar-integration.cpp (every test_grammar call: a grammar, strings that must
match and strings that must not; the grammars its failure tests expect to be refused) and
tests/test-grammar-parser.cpp (grammars verify_parsing expects to parse, and those
verify_failure expects to be refused). Output, per case:

    === description
    the grammar's lines
    --- parses            (or: --- fails)
    + a string that must match      (escaped: \\n \\t \\r \\\\ \\xNN)
    - a string that must not
"""
import os
import re
import sys

from grammar_escape import escape


def c_unescape(body):
    out = bytearray()
    i = 0
    raw = body.encode("utf-8")
    simple = {ord("n"): 10, ord("t"): 9, ord("r"): 13, ord("\\"): 92, ord('"'): 34, ord("'"): 39, ord("0"): 0}
    while i < len(raw):
        c = raw[i]
        if c != 92:
            out.append(c)
            i += 1
            continue
        d = raw[i + 1]
        if d == ord("x"):
            j = i + 2
            while j < len(raw) and chr(raw[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(raw[i + 2:j], 16) & 0xFF)
            i = j
        elif d in simple:
            out.append(simple[d])
            i += 2
        else:
            raise SystemExit("unknown escape \\%c" % d)
    return out.decode("utf-8")


LITERAL = re.compile(r'R"""\((.*?)\)"""|"((?:[^"\\\n]|\\.)*)"', re.S)


def literals(text):
    """The string literals of text in order (adjacent ones joined), comments skipped."""
    text = re.sub(r"//[^\n]*", "", text)
    out = []
    for m in LITERAL.finditer(text):
        out.append(m.group(1) if m.group(1) is not None else c_unescape(m.group(2)))
    return out


def calls(src, name):
    """The argument text of each call name(...), parentheses balanced, literals respected."""
    for m in re.finditer(r"\b%s\(" % re.escape(name), src):
        i = m.end()
        depth = 1
        while depth:
            if src.startswith('R"""(', i):
                i = src.index(')"""', i) + 4
                continue
            c = src[i]
            if c == '"':
                i += 1
                while src[i] != '"':
                    i += 2 if src[i] == "\\" else 1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
        yield src[m.end():i - 1]


def emit(desc, grammar, verdict, passing=(), failing=()):
    print("=== " + desc)
    print(grammar.strip("\n"))
    print("--- " + verdict)
    for s in passing:
        print("+ " + escape(s))
    for s in failing:
        print("- " + escape(s))


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    root = sys.argv[1]
    integ = open(os.path.join(root, "tests", "test-grammar-integration.cpp"), encoding="utf-8").read()
    parser = open(os.path.join(root, "tests", "test-grammar-parser.cpp"), encoding="utf-8").read()
    print("# llama.cpp's GBNF test cases, made by tools/reference/gen_grammar_cases.py from")
    print("# tests/test-grammar-integration.cpp and tests/test-grammar-parser.cpp.")
    for args in calls(integ, "test_grammar"):
        if "::=" not in args:
            continue                                # the function's own definition
        ms = list(LITERAL.finditer(args))
        desc, grammar = [literals(m.group(0))[0] for m in ms[:2]]
        rest = args[ms[1].end():]
        lists, depth, start = [], 0, 0
        for m in re.finditer(r'R"""\(.*?\)"""|"(?:[^"\\\n]|\\.)*"|[{}]', rest, re.S):
            if m.group(0) == "{":
                depth += 1
                start = m.end()
            elif m.group(0) == "}":
                depth -= 1
                lists.append(rest[start:m.start()])
        emit(desc, grammar, "parses", literals(lists[0]), literals(lists[1]))
    for fn in ("test_failure_missing_root", "test_failure_missing_reference", "test_failure_left_recursion"):
        body = integ[integ.index("static void %s()" % fn):]
        body = body[:body.index("\n}\n")]
        for k, g in enumerate(literals(body)):
            if "::=" in g:
                emit("%s %d" % (fn, k), g, "fails")
    for verdict, fn in (("fails", "verify_failure"), ("parses", "verify_parsing")):
        for k, args in enumerate(a for a in calls(parser, fn) if a.lstrip().startswith('R"""(')):
            emit("%s %d" % (fn, k), literals(args)[0], verdict)


if __name__ == "__main__":
    main()
