#!/usr/bin/env python3
"""Carry llama.cpp's JSON Schema test facts into tests/data/schema/ (run once; the output is committed).

    python3 tools/reference/schema_llamacpp_cases.py /path/to/llama.cpp > tests/data/schema/llamacpp.txt

From tests/test-grammar-integration.cpp: each test_schema(description, schema, passing, failing)
call. From tests/test-json-schema-to-grammar.cpp: the schemas it expects to fail. The format:
"== description" starts a case, the schema's JSON follows on lines of its own, then "+ text" for a
text that must match and "- text" for one that must not (the text is the rest of the line, exact);
"!= description" starts a schema that must be refused.
"""
import re
import sys


def tokens(body):
    """The string literals (R\"\"\"(...)\"\"\" and "...") and braces of a C++ argument list, comments skipped."""
    i = 0
    while i < len(body):
        if body.startswith('//', i):
            i = body.index('\n', i)
        elif body.startswith('R"""(', i):
            j = body.index(')"""', i)
            yield 'str', body[i + 5:j]
            i = j + 4
        elif body[i] == '"':
            j, s = i + 1, ''
            while body[j] != '"':
                if body[j] == '\\':
                    s += {'n': '\n', 't': '\t', '"': '"', '\\': '\\'}[body[j + 1]]
                    j += 2
                else:
                    s += body[j]
                    j += 1
            yield 'str', s
            i = j + 1
        elif body[i] in '{}':
            yield body[i], None
            i += 1
        else:
            i += 1


def calls(src, name):
    """The argument text of each call name(...), by balanced parentheses outside strings."""
    for m in re.finditer(r'\b' + name + r'\(', src):
        i, depth = m.end(), 1
        while depth:
            if src.startswith('R"""(', i):
                i = src.index(')"""', i) + 4
                continue
            if src[i] == '"':
                i += 1
                while src[i] != '"':
                    i += 2 if src[i] == '\\' else 1
            elif src.startswith('//', i):
                i = src.index('\n', i)
            elif src[i] == '(':
                depth += 1
            elif src[i] == ')':
                depth -= 1
            i += 1
        yield src[m.end():i - 1]


def main():
    root = sys.argv[1]
    src = open(root + '/tests/test-grammar-integration.cpp').read()
    print('# llama.cpp tests/test-grammar-integration.cpp, test_schema cases: schema, texts that match (+) and not (-)')
    for args in calls(src, 'test_schema'):
        if 'const std::string' in args:
            continue                                     # the definition
        toks = list(tokens(args))
        desc, schema = toks[0][1], toks[1][1]
        lists, cur = [], None
        for kind, text in toks[2:]:
            if kind == '{':
                cur = []
            elif kind == '}':
                lists.append(cur)
            else:
                cur.append(text)
        print('== ' + (desc or 'unnamed'))
        print('\n'.join(l for l in schema.strip('\n').splitlines() if l.strip()))
        for sign, lst in zip('+-', lists):
            for s in lst:
                assert '\n' not in s
                print(sign + ' ' + s)
    src = open(root + '/tests/test-json-schema-to-grammar.cpp').read()
    for m in re.finditer(r'FAILURE,\s*"([^"]*)",\s*R"""\((.*?)\)"""', src, re.S):
        print('!= ' + m.group(1))
        print('\n'.join(l for l in m.group(2).strip('\n').splitlines() if l.strip()))


main()
