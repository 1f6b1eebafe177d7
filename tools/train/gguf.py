"""A small GGUF v3 writer and reader (little-endian, alignment 32), and Q8_0 quantization.

Only what the exporter needs: scalar and array metadata, F32 and Q8_0 tensors. The reader
exists so the exporter can read its own file back and check every byte it meant to write.
"""

import struct

import numpy as np

ALIGN = 32

# GGUF metadata value types.
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
           BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}

# ggml tensor types.
GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8
QK8_0 = 32


def q8_0_quantize(x):
    """float32 [rows, n] -> bytes of Q8_0 blocks, row after row. Each block of 32 values is the
    f16 scale d = max|x| / 127 then 32 int8 q = round(x / d), as ggml does (q from the float
    scale, the scale then stored as f16); ties round away from zero like C's roundf."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    rows, n = x.shape
    assert n % QK8_0 == 0, "row length %d is not a multiple of 32" % n
    b = x.reshape(rows, n // QK8_0, QK8_0)
    amax = np.abs(b).max(axis=-1, keepdims=True)
    d = amax / np.float32(127.0)
    inv = np.divide(np.float32(1.0), d, out=np.zeros_like(d), where=d != 0)
    v = b * inv
    q = (np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))).astype(np.int8)
    out = np.empty((rows, n // QK8_0), dtype=[("d", "<f2"), ("q", "i1", (QK8_0,))])
    out["d"] = d[..., 0].astype(np.float16)
    out["q"] = q
    return out.tobytes()


def q8_0_dequantize(raw, rows, n):
    """bytes of Q8_0 blocks -> float32 [rows, n]: d * q, exactly what a reader computes."""
    blocks = np.frombuffer(raw, dtype=[("d", "<f2"), ("q", "i1", (QK8_0,))]).reshape(rows, n // QK8_0)
    return (blocks["d"].astype(np.float32)[..., None] * blocks["q"].astype(np.float32)).reshape(rows, n)


def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _value(vtype, v):
    if vtype == STRING:
        return _str(v)
    if vtype == ARRAY:
        etype, items = v
        out = [struct.pack("<IQ", etype, len(items))]
        if etype in _SCALAR:
            out.append(np.asarray(items, dtype=np.dtype(_SCALAR[etype])).tobytes())
        else:
            out.extend(_value(etype, it) for it in items)
        return b"".join(out)
    return struct.pack(_SCALAR[vtype], v)


class Writer:
    """Collect metadata and tensors, then write() them as one GGUF v3 file."""

    def __init__(self):
        self.kv = []        # (key, type, value)
        self.tensors = []   # (name, ne list, ggml type, raw bytes)

    def add(self, key, vtype, value):
        self.kv.append((key, vtype, value))

    def add_tensor(self, name, ne, gtype, raw):
        self.tensors.append((name, list(ne), gtype, raw))

    def write(self, path):
        head = [b"GGUF", struct.pack("<IQQ", 3, len(self.tensors), len(self.kv))]
        for key, vtype, value in self.kv:
            head.append(_str(key) + struct.pack("<I", vtype) + _value(vtype, value))
        offset = 0
        for name, ne, gtype, raw in self.tensors:
            head.append(_str(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
                        + struct.pack("<IQ", gtype, offset))
            offset += (len(raw) + ALIGN - 1) // ALIGN * ALIGN
        h = b"".join(head)
        with open(path, "wb") as fp:
            fp.write(h)
            fp.write(b"\0" * (-len(h) % ALIGN))
            for _, _, _, raw in self.tensors:
                fp.write(raw)
                fp.write(b"\0" * (-len(raw) % ALIGN))


def read(path):
    """Parse a GGUF file: (metadata dict key -> value, dict name -> (ne, ggml type, raw bytes))."""
    with open(path, "rb") as fp:
        buf = fp.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal pos
        n = take("<Q")
        s = buf[pos:pos + n].decode("utf-8")
        pos += n
        return s

    def value(vtype):
        if vtype == STRING:
            return string()
        if vtype == ARRAY:
            etype, n = take("<I"), take("<Q")
            return [value(etype) for _ in range(n)]
        return take(_SCALAR[vtype])

    assert buf[:4] == b"GGUF", "not a GGUF file"
    pos = 4
    version, n_tensors, n_kv = take("<I"), take("<Q"), take("<Q")
    assert version == 3
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        nd = take("<I")
        ne = [take("<Q") for _ in range(nd)]
        infos.append((name, ne, take("<I"), take("<Q")))
    align = meta.get("general.alignment", ALIGN)
    base = (pos + align - 1) // align * align
    tensors = {}
    for name, ne, gtype, off in infos:
        n = int(np.prod(ne))
        size = n * 4 if gtype == GGML_F32 else n // QK8_0 * 34
        tensors[name] = (ne, gtype, buf[base + off:base + off + size])
    return meta, tensors
