/* gguf_copy.h: a metadata value read by swa.h's GGUF reader written again through gguf_writer.h,
   for the tools that copy keys from one file into another (swa-quantize every key, swa-mkmodel
   --vocab-from the tokenizer's). Include after swa.h, gguf_writer.h and tool.h (for fail()). */
#ifndef SWA_TOOLS_GGUF_COPY_H
#define SWA_TOOLS_GGUF_COPY_H

/* A growing byte buffer, reused from one value to the next; the caller frees p. */
typedef struct gc_bytes { uint8_t *p; size_t len, cap; } gc_bytes;

static inline void gc_put(gc_bytes *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        uint8_t *q;
        while (cap < b->len + n) cap *= 2;
        if (!(q = (uint8_t *)realloc(b->p, cap))) fail("out of memory");
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static inline size_t gc_scalar_size(swa_gguf_type t)
{
    switch (t) {
    case SWA_GGUF_U8: case SWA_GGUF_I8: case SWA_GGUF_BOOL: return 1;
    case SWA_GGUF_U16: case SWA_GGUF_I16: return 2;
    case SWA_GGUF_U32: case SWA_GGUF_I32: case SWA_GGUF_F32: return 4;
    case SWA_GGUF_U64: case SWA_GGUF_I64: case SWA_GGUF_F64: return 8;
    default: return 0;
    }
}

/* v's payload as the file stores it (without its type): a scalar's bytes, a string's length and
   bytes, an array's element type, count and elements (nested arrays too). */
static inline void gc_encode(gc_bytes *b, const swa_gguf_value *v)
{
    uint64_t n = v->n, j;
    if (v->type == SWA_GGUF_STRING) {
        gc_put(b, &n, 8);
        gc_put(b, v->data, (size_t)n);
    } else if (v->type != SWA_GGUF_ARRAY) {
        gc_put(b, v->data, gc_scalar_size(v->type));
    } else {
        uint32_t elem = (uint32_t)v->elem_type;
        gc_put(b, &elem, 4);
        gc_put(b, &n, 8);
        if (gc_scalar_size(v->elem_type)) {
            gc_put(b, v->data, (size_t)n * gc_scalar_size(v->elem_type));
            return;
        }
        for (j = 0; j < n; j++) {
            swa_gguf_value e;
            if (swa_gguf_value_at(v, j, &e) != SWA_OK) fail("cannot read element %llu of an array", (unsigned long long)j);
            gc_encode(b, &e);
        }
    }
}

/* v under key in w, encoded in buf; nonzero, with gw_error(w) saying why, when w refuses it. */
static inline int gc_kv_copy(gw_writer *w, const char *key, const swa_gguf_value *v, gc_bytes *buf)
{
    buf->len = 0;
    gc_encode(buf, v);
    return gw_kv_raw(w, key, (uint32_t)v->type, buf->p, buf->len);
}

#endif
