#!/usr/bin/env python3
"""JSON texts and Python jsonschema's verdicts on them, for tests/test_schema.c (run once; committed).

    pip install jsonschema rfc3339-validator
    python3 tools/reference/schema_reference.py tests/data/schema/reference.txt

For each schema below: valid documents drawn at random from it and mutations of them (a property
dropped, added or moved, a value of another type, out of range, off the pattern or enum, ...),
each serialised as json.dumps writes it (and a few indented by 2). jsonschema (Draft 2020-12,
formats checked) gives the verdict. A text is written as

    + text      valid, and in the form llama.cpp's grammars promise: must match
    - text      invalid: must not match
    ~ reason    valid, but outside that form (the next line, "  text", is not checked): properties
                out of order or not in "properties", a tuple shorter than prefixItems, an integer
                written as 5.0, more than 16 digits, indentation past 20 columns

"== name" starts a schema, whose JSON follows on one line. A text's newlines (in the indented
ones) are written as the pilcrow, which no text here holds otherwise.
"""
import copy
import json
import random
import sys

import jsonschema

SCHEMAS = {
    'person': {
        'type': 'object',
        'properties': {
            'name': {'type': 'string', 'minLength': 1, 'maxLength': 12},
            'age': {'type': 'integer', 'minimum': 0, 'maximum': 150},
            'email': {'type': 'string', 'pattern': '^[a-z]+@[a-z]+\\.[a-z]{2,3}$'},
            'tags': {'type': 'array', 'items': {'type': 'string'}, 'maxItems': 3},
        },
        'required': ['name', 'age'],
    },
    'nested': {
        'type': 'object',
        'properties': {
            'id': {'type': 'integer'},
            'address': {
                'type': 'object',
                'properties': {
                    'street': {'type': 'string'},
                    'city': {'type': 'string'},
                    'zip': {'type': 'string', 'pattern': '^[0-9]{5}$'},
                },
                'required': ['street', 'city'],
            },
            'meta': {'type': 'object', 'additionalProperties': {'type': 'integer'}},
        },
        'required': ['id', 'address'],
    },
    'enums': {
        'type': 'object',
        'properties': {
            'color': {'enum': ['red', 'green', 'blue']},
            'kind': {'const': 'shape'},
            'size': {'enum': [1, 2.5, None, True]},
        },
        'required': ['color', 'kind'],
        'additionalProperties': False,
    },
    'int_array': {
        'type': 'array',
        'items': {'type': 'integer', 'minimum': -50, 'maximum': 50},
        'minItems': 2,
        'maxItems': 4,
    },
    'tree': {
        '$defs': {
            'node': {
                'type': 'object',
                'properties': {
                    'value': {'type': 'integer'},
                    'children': {'type': 'array', 'items': {'$ref': '#/$defs/node'}, 'maxItems': 2},
                },
                'required': ['value'],
            }
        },
        '$ref': '#/$defs/node',
    },
    'int_bounds': {'type': 'integer', 'minimum': -1000, 'exclusiveMaximum': 12345},
    'pattern': {'type': 'string', 'pattern': '^(ab|cd)+-[A-Z][0-9]{2,4}(\\.x)?$'},
    'formats': {
        'type': 'object',
        'properties': {
            'd': {'type': 'string', 'format': 'date'},
            't': {'type': 'string', 'format': 'time'},
            'dt': {'type': 'string', 'format': 'date-time'},
            'u': {'type': 'string', 'format': 'uuid'},
        },
        'required': ['d', 't', 'dt', 'u'],
    },
    'any_of': {
        'anyOf': [
            {'type': 'integer', 'minimum': 0, 'maximum': 9},
            {'type': 'string', 'maxLength': 3},
            {'type': 'null'},
        ]
    },
    'extra_and_tuple': {
        'type': 'object',
        'properties': {
            'flag': {'type': 'boolean'},
            'pair': {'type': 'array', 'prefixItems': [{'type': 'string'}, {'type': 'number'}], 'items': False},
        },
        'required': ['flag'],
        'additionalProperties': {'type': 'number'},
    },
}

PILCROW = '\u00b6'
WORDS = ['ab', 'x', 'hello', 'Zoë', 'a b', 'q"t', 'tab\tx', '']


def rstr(r, lo=0, hi=8):
    return ''.join(r.choice('abcdefghij') for _ in range(r.randint(lo, hi)))


def resolve(root, s):
    while '$ref' in s:
        s = root['$defs'][s['$ref'].split('/')[-1]]
    return s


def sample(root, s, r, depth=0):
    """A valid value of schema s (for the schemas above)."""
    s = resolve(root, s)
    if 'anyOf' in s:
        return sample(root, r.choice(s['anyOf']), r, depth)
    if 'const' in s:
        return s['const']
    if 'enum' in s:
        return r.choice(s['enum'])
    t = s.get('type')
    if t == 'object':
        out = {}
        req = s.get('required', [])
        props = s.get('properties', {})
        for k in [k for k in props if k in req] + [k for k in props if k not in req]:
            if k in req or r.random() < 0.6:
                if k == 'children' and depth > 2:
                    continue
                out[k] = sample(root, props[k], r, depth + 1)
        extra = s.get('additionalProperties')
        if isinstance(extra, dict):
            for _ in range(r.randint(0, 2)):
                out['k' + rstr(r, 1, 4)] = sample(root, extra, r, depth + 1)
        return out
    if t == 'array':
        if 'prefixItems' in s:
            return [sample(root, x, r, depth + 1) for x in s['prefixItems']]
        n = r.randint(s.get('minItems', 0), s.get('maxItems', 3))
        return [sample(root, s['items'], r, depth + 1) for _ in range(n)]
    if t == 'integer':
        lo = s.get('minimum', -10 ** 6)
        hi = s.get('maximum', s.get('exclusiveMaximum', 10 ** 6 + 1) - 1)
        return r.choice([lo, hi, r.randint(lo, hi), r.randint(lo, hi)])
    if t == 'number':
        return r.choice([0, -3, round(r.uniform(-1000, 1000), 3), 1.5e10])
    if t == 'boolean':
        return r.random() < 0.5
    if t == 'null':
        return None
    if t == 'string':
        fmt = s.get('format')
        if fmt == 'date':
            return '%04d-%02d-%02d' % (r.randint(1900, 2100), r.randint(1, 12), r.randint(1, 28))
        if fmt == 'time':
            return '%02d:%02d:%02d%s' % (r.randint(0, 23), r.randint(0, 59), r.randint(0, 59),
                                         r.choice(['Z', '+01:00', '.123Z', '-05:30']))
        if fmt == 'date-time':
            return sample(root, {'type': 'string', 'format': 'date'}, r) + 'T' + \
                sample(root, {'type': 'string', 'format': 'time'}, r)
        if fmt == 'uuid':
            h = '%032x' % r.getrandbits(128)
            return '%s-%s-%s-%s-%s' % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
        if 'pattern' in s:
            return pattern_sample(s['pattern'], r)
        lo, hi = s.get('minLength', 0), s.get('maxLength', 8)
        w = r.choice(WORDS + [rstr(r, lo, hi)] * 4)
        return w if lo <= len(w) <= hi else rstr(r, lo, hi)
    raise ValueError(s)


def pattern_sample(p, r):
    if p.startswith('^[a-z]+@'):
        return '%s@%s.%s' % (rstr(r, 1, 5), rstr(r, 1, 5), rstr(r, 2, 3))
    if p.startswith('^[0-9]{5}'):
        return '%05d' % r.randint(0, 99999)
    return ''.join(r.choice(['ab', 'cd']) for _ in range(r.randint(1, 3))) + '-' + r.choice('ABZ') + \
        ''.join(r.choice('0123456789') for _ in range(r.randint(2, 4))) + r.choice(['', '.x'])


def mutations(root, v, r):
    """Changed copies of v: most break the schema, some keep it valid in another form."""
    out = []
    paths = []

    def walk(x, path):
        paths.append(path)
        if isinstance(x, dict):
            for k in x:
                walk(x[k], path + [k])
        elif isinstance(x, list):
            for i, y in enumerate(x):
                walk(y, path + [i])
    walk(v, [])
    for _ in range(6):
        path = r.choice(paths)
        m = copy.deepcopy(v)
        parent, key = None, None
        node = m
        for p in path:
            parent, key, node = node, p, node[p]
        kind = r.choice(['type', 'drop', 'add', 'reorder', 'range', 'string', 'float', 'dup'])
        repl = {'type': r.choice([None, True, 'str', 17, 2.5, [], {}]),
                'range': r.choice([-1001, 151, 12345, 10 ** 17, -51, 51]),
                'string': r.choice(['', 'abcdefghijklmn', 'ab-A1', 'cd-X123.y', '2023-13-01', '2023-02-31',
                                    '25:00:00Z', '12:00:00', '1234', 'not-a-uuid', 'RED', 'ab@cd.e']),
                'float': 5.0}
        if kind in repl:
            if parent is None:
                m = repl[kind]
            else:
                parent[key] = repl[kind]
        elif kind == 'drop' and isinstance(node, dict) and node:
            del node[r.choice(list(node))]
        elif kind == 'drop' and isinstance(node, list) and node:
            node.pop()
        elif kind == 'add' and isinstance(node, dict):
            node[r.choice(['zz', 'name', 'extra', 'kx'])] = r.choice([1, 'x', None])
        elif kind == 'add' and isinstance(node, list):
            node.append(node[0] if node else 1)
        elif kind == 'reorder' and isinstance(node, dict) and len(node) > 1:
            items = list(node.items())
            r.shuffle(items)
            node.clear()
            node.update(items)
        elif kind == 'dup' and isinstance(node, list):
            node.extend(node)
        out.append(m)
    return out


def canonical(root, s, v):
    """None when v, valid under s, is in the form the grammar promises; else the reason it is not."""
    s = resolve(root, s)
    if 'anyOf' in s:
        reasons = [canonical(root, a, v) for a in s['anyOf'] if is_valid(root, a, v)]
        return None if None in reasons else reasons[0]
    if 'enum' in s or 'const' in s:
        return None
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, float) and s.get('type') == 'integer':
        return 'an integer written with a fraction (5.0)'
    if isinstance(v, (int, float)):
        digits = json.dumps(v).lstrip('-').replace('.', 'e').split('e')
        return 'more than 16 digits in a part of a number' if any(len(d) > 16 for d in digits) else None
    if isinstance(v, dict):
        props = s.get('properties', {})
        req = s.get('required', [])
        order = [k for k in props if k in req] + [k for k in props if k not in req]
        extra = s.get('additionalProperties')
        named = [k for k in v if k in props]
        if named != [k for k in order if k in v]:
            return 'properties out of the schema\'s order (required first)'
        if [k for k in v if k not in props] and not extra and 'properties' in s:
            return 'a property not in "properties" (llama.cpp allows none unless additionalProperties says so)'
        if [k for k in v if k not in props] and v and list(v).index([k for k in v if k not in props][0]) < len(named):
            return 'an additional property before a named one'
        for k in v:
            sub = props.get(k, extra if isinstance(extra, dict) else {})
            why = canonical(root, sub, v[k]) if sub else None
            if why:
                return why
        return None
    if isinstance(v, list):
        if 'prefixItems' in s:
            if len(v) != len(s['prefixItems']):
                return 'a tuple shorter than prefixItems'
            subs = s['prefixItems']
        else:
            subs = [s.get('items', {})] * len(v)
        for x, sub in zip(v, subs):
            why = canonical(root, sub, x)
            if why:
                return why
    return None


def is_valid(root, s, v):
    schema = dict(s)
    if '$defs' in root:
        schema['$defs'] = root['$defs']
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).is_valid(v)


def main():
    r = random.Random(20240501)
    out = open(sys.argv[1], 'w')
    out.write('# made by tools/reference/schema_reference.py with Python jsonschema %s (Draft 2020-12, formats checked)\n'
              % __import__('importlib.metadata').metadata.version('jsonschema'))
    for name, schema in SCHEMAS.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        out.write('== %s\n%s\n' % (name, json.dumps(schema)))
        seen = set()
        docs = [sample(schema, schema, r) for _ in range(8)]
        for d in list(docs):
            docs += mutations(schema, d, r)
        for i, d in enumerate(docs):
            for text in [json.dumps(d, ensure_ascii=False)] + ([json.dumps(d, ensure_ascii=False, indent=2)] if i % 4 == 0 else []):
                assert PILCROW not in text
                if text in seen:
                    continue
                seen.add(text)
                if not is_valid(schema, schema, d):
                    out.write('- %s\n' % text.replace('\n', PILCROW))
                    continue
                why = canonical(schema, schema, d)
                if not why and max(len(l) - len(l.lstrip(' ')) for l in text.split('\n')) > 20:
                    why = 'indentation past the 20 columns the space rule allows'
                if why:
                    out.write('~ %s\n  %s\n' % (why, text.replace('\n', PILCROW)))
                else:
                    out.write('+ %s\n' % text.replace('\n', PILCROW))


main()
