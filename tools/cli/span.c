/* swa-span: how far back a token can see, layer by layer, with sliding-window attention.

   swa-span -m MODEL.gguf [-p POS] [-w W]     windows from the model (-w overrides every layer)
   swa-span -l LAYERS -w W [-p POS]           no model: LAYERS layers of window W
   swa-span ... [--svg OUT.svg] [--png OUT.png]

   In layer l with window W_l the query at position i attends to the keys j with
   i - W_l < j <= i, so the token at POS reads positions POS-W_l+1..POS directly. Those
   positions were themselves computed by the layer below from their own windows, so after
   layers 0..l position POS can be influenced by every position down to
   POS - sum_{k<=l} (W_k - 1), clamped at 0; a full-attention layer (W = 0) reaches 0 at once.

   stdout gets a one-line summary and a chart: one row per layer (the last layer on top), one
   column per group of positions 0..POS, '#' where the layer attends directly, '+' where the
   position reaches it only through the layers below, '.' where it cannot reach it at all.
   --svg writes the same chart as vector rectangles, --png as pixels (our own rasterizer, a
   5x7 bitmap font and a PNG writer with stored deflate blocks: libc only). A note naming each
   picture and its size goes to stderr. Exit status: 0 on success, 1 when the model cannot be
   loaded or a picture cannot be written, 2 for bad usage. */
#define _POSIX_C_SOURCE 200809L
#include "swa.h"
#include "tools/common/safe_write.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LAYERS   1024
#define MAX_POS      1000000000000000LL   /* 10^15: 16-digit labels, exact in a double */
#define MAX_COLS     100                  /* text chart width, in columns */
#define FULL_POS     64                   /* default position when no layer has a window */

static const char *model_path;   /* the input, which no picture may overwrite */

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-span -m MODEL.gguf [-p POS] [-w W] [--svg OUT.svg] [--png OUT.png]\n"
               "       swa-span -l LAYERS -w W [-p POS] [--svg OUT.svg] [--png OUT.png]\n"
               "  -m FILE      GGUF model (architecture llama): its per-layer windows\n"
               "  -l LAYERS    no model: this many layers (1..%d), all with window -w\n"
               "  -w W         sliding window W >= 1 for every layer (overrides the model's)\n"
               "  -p POS       the token's position, >= 0 (default 4 x the largest window,\n"
               "               or %d when every layer has full attention)\n"
               "  --svg FILE   also draw the chart as SVG\n"
               "  --png FILE   also draw the chart as PNG\n"
               "  -h, --help   this help\n"
               "  Layer l with window W attends to POS-W+1..POS; after layers 0..l the token can\n"
               "  be influenced by positions down to POS - sum (W_k - 1), clamped at 0.\n",
            MAX_LAYERS, FULL_POS);
}

/* ==== the spans ==== */

typedef struct span {
    int n_layer;
    int32_t *window;      /* [n_layer] 0 = full attention */
    int64_t pos;          /* the token we look from */
    int64_t *direct_lo;   /* [n_layer] first position layer l attends to directly */
    int64_t *reach_lo;    /* [n_layer] first position that reaches pos after layers 0..l */
} span;

enum { R_OUT = 0, R_REACH = 1, R_DIRECT = 2 };

/* Reach only grows downwards layer by layer: each layer adds W - 1 positions below the lowest
   one already reachable, because the key at distance W - 1 is the furthest a window holds.
   Sums stay far inside int64: at most 1024 layers of W < 2^31. */
static void span_compute(span *s)
{
    int64_t lo = s->pos;
    int full = 0, l;
    for (l = 0; l < s->n_layer; l++) {
        int64_t w = s->window[l];
        if (w == 0) full = 1;
        else lo -= w - 1;
        s->direct_lo[l] = w == 0 || s->pos - w + 1 < 0 ? 0 : s->pos - w + 1;
        s->reach_lo[l] = full || lo < 0 ? 0 : lo;
    }
}

/* Relations are monotone in j (a later position is never further away), so a group of
   positions is classed by its last one. */
static int span_relation(const span *s, int l, int64_t j)
{
    return j >= s->direct_lo[l] ? R_DIRECT : j >= s->reach_lo[l] ? R_REACH : R_OUT;
}

/* "window 64", "full attention" or "windows 8x3, full, 16"; NULL when out of memory. */
static char *describe_windows(const span *s)
{
    size_t cap = (size_t)s->n_layer * 24 + 64, n = 0;
    char *d = (char *)malloc(cap);
    int l, k, uniform = 1;
    if (!d) return NULL;
    for (l = 1; l < s->n_layer; l++) uniform &= s->window[l] == s->window[0];
    if (uniform) {
        if (s->window[0] == 0) snprintf(d, cap, "full attention");
        else snprintf(d, cap, "window %d", (int)s->window[0]);
        return d;
    }
    n += (size_t)snprintf(d, cap, "windows ");
    for (l = 0; l < s->n_layer; l = k) {
        for (k = l + 1; k < s->n_layer && s->window[k] == s->window[l]; k++) continue;
        if (l) n += (size_t)snprintf(d + n, cap - n, ", ");
        if (s->window[l]) n += (size_t)snprintf(d + n, cap - n, "%d", (int)s->window[l]);
        else n += (size_t)snprintf(d + n, cap - n, "full");
        if (k - l > 1) n += (size_t)snprintf(d + n, cap - n, "x%d", k - l);
    }
    return d;
}

/* The same, short enough for a picture's title. */
static void describe_windows_short(const span *s, const char *full, char *out, size_t cap)
{
    int32_t largest = 0;
    int l;
    if (strlen(full) <= 40) {
        snprintf(out, cap, "%s", full);
        return;
    }
    for (l = 0; l < s->n_layer; l++)
        if (s->window[l] > largest) largest = s->window[l];
    snprintf(out, cap, "mixed windows, largest %d", (int)largest);
}

static int digits(int64_t v)
{
    int n = 1;
    while (v >= 10) { v /= 10; n++; }
    return n;
}

static void range_str(char *buf, size_t cap, int64_t lo, int64_t hi)
{
    snprintf(buf, cap, "%lld..%lld", (long long)lo, (long long)hi);
}

/* The smallest of 1, 2, 5, 10, 20, 50, ... that is at least `least`: tick spacing. */
static int64_t nice_step(int64_t least)
{
    int64_t p = 1;
    for (;;) {
        if (p >= least) return p;
        if (2 * p >= least) return 2 * p;
        if (5 * p >= least) return 5 * p;
        p *= 10;
    }
}

static void window_str(char *buf, size_t cap, int32_t w)
{
    if (w) snprintf(buf, cap, "%d", (int)w);
    else snprintf(buf, cap, "full");
}

/* What every picture prints beside layer l: its window and its direct and reach ranges. */
typedef struct layer_text { char window[32], direct[48], reach[48]; } layer_text;

static layer_text layer_texts(const span *s, int l)
{
    layer_text t;
    window_str(t.window, sizeof t.window, s->window[l]);
    range_str(t.direct, sizeof t.direct, s->direct_lo[l], s->pos);
    range_str(t.reach, sizeof t.reach, s->reach_lo[l], s->pos);
    return t;
}

/* The widest of those texts over the layers, in characters, each at least what *ww, *dw and
   *rw hold on entry (the column headers' widths). */
static void text_widths(const span *s, int *ww, int *dw, int *rw)
{
    int l;
    for (l = 0; l < s->n_layer; l++) {
        layer_text t = layer_texts(s, l);
        if ((int)strlen(t.window) > *ww) *ww = (int)strlen(t.window);
        if ((int)strlen(t.direct) > *dw) *dw = (int)strlen(t.direct);
        if ((int)strlen(t.reach) > *rw) *rw = (int)strlen(t.reach);
    }
}

/* ==== text ==== */

static void print_summary(const span *s, const char *desc)
{
    int top = s->n_layer - 1;
    printf("%d layer%s, %s: after %d layer%s, token %lld sees positions %lld..%lld "
           "(directly %lld..%lld)\n",
           s->n_layer, s->n_layer == 1 ? "" : "s", desc, s->n_layer, s->n_layer == 1 ? "" : "s",
           (long long)s->pos, (long long)s->reach_lo[top], (long long)s->pos,
           (long long)s->direct_lo[top], (long long)s->pos);
}

/* One row per layer, the last on top, then an axis. Positions 0..pos are grouped g to a column
   so that at most MAX_COLS columns remain. Labels on the axis are round numbers, placed left
   to right wherever they do not collide, with pos itself always shown at the right end. */
static void print_chart(const span *s)
{
    int64_t n_pos = s->pos + 1, g = (n_pos + MAX_COLS - 1) / MAX_COLS, step, t;
    int ncols = (int)((n_pos + g - 1) / g), lw = 5, ww = 4, dw = 6, rw = 5, l, c, label_w;
    int p_len = digits(s->pos), p_start, last_end = -2;
    char chart[MAX_COLS + 1], axis[MAX_COLS + 1], labels[MAX_COLS + 32], num[32];
    layer_text lt;

    if (digits(s->n_layer - 1) > lw) lw = digits(s->n_layer - 1);
    text_widths(s, &ww, &dw, &rw);
    label_w = lw + 1 + ww;

    if (g == 1) printf("\n1 column = 1 position");
    else printf("\n1 column = %lld positions, shown as the last of them", (long long)g);
    printf("    # direct window   + through lower layers   . out of reach\n\n");
    printf("%*s %*s  %-*s  %*s  %*s\n", lw, "layer", ww, "W", ncols + 2, "", dw, "direct", rw, "reach");
    for (l = s->n_layer - 1; l >= 0; l--) {
        for (c = 0; c < ncols; c++) {
            int64_t last = (int64_t)(c + 1) * g - 1;
            int r = span_relation(s, l, last < s->pos ? last : s->pos);
            chart[c] = r == R_DIRECT ? '#' : r == R_REACH ? '+' : '.';
        }
        chart[ncols] = '\0';
        lt = layer_texts(s, l);
        printf("%*d %*s  |%s|  %*s  %*s\n", lw, l, ww, lt.window, chart, dw, lt.direct, rw, lt.reach);
    }

    /* Ticks at least 10 columns apart, and wide enough for the longest label. */
    step = nice_step((int64_t)(p_len + 2 > 10 ? p_len + 2 : 10) * g);
    memset(axis, '-', (size_t)ncols);
    axis[ncols] = '\0';
    memset(labels, ' ', sizeof labels);
    p_start = ncols - p_len > 0 ? ncols - p_len : 0;
    snprintf(num, sizeof num, "%lld", (long long)s->pos);
    memcpy(labels + p_start, num, (size_t)p_len);
    axis[ncols - 1] = '|';
    for (t = 0; t <= s->pos; t += step) {
        int col = (int)(t / g), len = digits(t);
        axis[col] = '|';
        if (t == s->pos || col + len + 1 > p_start || col < last_end + 2) continue;
        snprintf(num, sizeof num, "%lld", (long long)t);
        memcpy(labels + col, num, (size_t)len);
        last_end = col + len - 1;
    }
    labels[p_start + p_len] = '\0';
    printf("%*s   %s\n", label_w, "", axis);
    printf("%*s   %s\n", label_w, "position", labels);
}

/* ==== SVG ==== */

/* When rows are too thin for a label each, every k-th layer from layer 0 up gets one, and the
   last layer too if it stands far enough above the previous label. */
static int show_label(int n_layer, int l, int every, double pitch, double text_h)
{
    if (l % every == 0) return 1;
    return l == n_layer - 1 && (double)(l % every) * pitch >= text_h;
}

static void svg_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else if ((unsigned char)*s < 0x20) fputc(' ', f);
        else fputc(*s, f);
    }
}

static const char *const seg_class[3] = {"out", "reach", "direct"};
static const char *const seg_words[3] = {"out of reach", "through lower layers", "direct window"};
static const char *const seg_fill[3] = {"#e6e6e6", "#92c5de", "#2166ac"};

/* One layer's segments; a segment narrower than a pixel is widened to one so it still shows. */
static void svg_row(FILE *f, const span *s, int l, double x0, double cw, double y, double h)
{
    int64_t lo[3], hi[3];
    double sx = cw / (double)(s->pos + 1);
    int r;
    lo[R_OUT] = 0;               hi[R_OUT] = s->reach_lo[l] - 1;
    lo[R_REACH] = s->reach_lo[l]; hi[R_REACH] = s->direct_lo[l] - 1;
    lo[R_DIRECT] = s->direct_lo[l]; hi[R_DIRECT] = s->pos;
    for (r = R_OUT; r <= R_DIRECT; r++) {
        double a, b;
        if (hi[r] < lo[r]) continue;
        a = x0 + (double)lo[r] * sx;
        b = x0 + (double)(hi[r] + 1) * sx;
        if (b - a < 1.0) {
            if (b >= x0 + cw) a = b - 1.0;
            else b = a + 1.0;
        }
        fprintf(f, "<rect class=\"seg %s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                   "fill=\"%s\"><title>layer %d: positions %lld..%lld, %s</title></rect>\n",
                seg_class[r], a, y, b - a, h, seg_fill[r], l, (long long)lo[r], (long long)hi[r],
                seg_words[r]);
    }
}

static int write_svg(const char *path, const span *s, const char *title, const char *subtitle)
{
    const double ch = 7.2, cw = 640.0, top = 104.0;   /* char width of 12px monospace */
    double pitch, rowh, left, right_x, width, height, axis_y, sx, last_end = -1e9, p_x0;
    int lw, ww = 1, dw = 6, rw = 5, l, label_every;
    int64_t step, t;
    char num[32], lab[96];
    layer_text lt;
    sw_file out;
    FILE *f;
    if (sw_open(&out, path, &model_path, 1) != 0) {
        fprintf(stderr, "swa-span: %s\n", out.error);
        return 0;
    }
    f = out.f;
    lw = digits(s->n_layer - 1);
    text_widths(s, &ww, &dw, &rw);
    /* Rows get less room as layers grow; a label on every k-th row keeps text apart. */
    pitch = s->n_layer <= 32 ? 22.0 : 704.0 / s->n_layer;
    if (pitch < 2.0) pitch = 2.0;
    rowh = pitch >= 8.0 ? pitch - 4.0 * pitch / 22.0 : pitch;
    label_every = pitch >= 14.0 ? 1 : (int)(14.0 / pitch) + 1;
    left = 16.0 + ch * (double)(6 + lw + 4 + ww) + 12.0;
    right_x = left + cw + 14.0;
    width = right_x + ch * (double)(dw + 2 + rw) + 16.0;
    if (width < 16.0 + ch * (double)strlen(subtitle) + 16.0) width = 32.0 + ch * (double)strlen(subtitle);
    axis_y = top + pitch * s->n_layer + 4.0;
    height = axis_y + 44.0;
    sx = cw / (double)(s->pos + 1);

    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"ui-monospace, Menlo, Consolas, monospace\" "
               "font-size=\"12\">\n", width, height, width, height);
    fprintf(f, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
            width, height);
    fputs("<text x=\"16\" y=\"26\" font-size=\"15\" font-weight=\"bold\" fill=\"#222222\">", f);
    svg_escape(f, title);
    fputs("</text>\n<text x=\"16\" y=\"46\" fill=\"#444444\">", f);
    svg_escape(f, subtitle);
    fputs("</text>\n", f);
    {   /* legend: strongest relation first */
        double x = 16.0;
        int r;
        for (r = R_DIRECT; r >= R_OUT; r--) {
            fprintf(f, "<rect class=\"key\" x=\"%.1f\" y=\"60\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                       "<text x=\"%.1f\" y=\"70\" fill=\"#222222\">%s</text>\n",
                    x, seg_fill[r], x + 17.0, seg_words[r]);
            x += 17.0 + ch * (double)strlen(seg_words[r]) + 24.0;
        }
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444444\">direct</text>\n",
            right_x + ch * dw, top - 8.0);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444444\">reach</text>\n",
            right_x + ch * (dw + 2 + rw), top - 8.0);
    for (l = s->n_layer - 1; l >= 0; l--) {
        double y = top + pitch * (s->n_layer - 1 - l);
        svg_row(f, s, l, left, cw, y, rowh);
        if (!show_label(s->n_layer, l, label_every, pitch, 14.0)) continue;
        lt = layer_texts(s, l);
        snprintf(lab, sizeof lab, "layer %d  W %s", l, lt.window);
        fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\" fill=\"#222222\">%s</text>\n",
                left - 10.0, y + rowh / 2.0 + 4.0, lab);
        fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\" fill=\"#222222\">%s</text>\n",
                right_x + ch * dw, y + rowh / 2.0 + 4.0, lt.direct);
        fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\" fill=\"#222222\">%s</text>\n",
                right_x + ch * (dw + 2 + rw), y + rowh / 2.0 + 4.0, lt.reach);
    }

    /* The axis: ticks at round positions at least 60px apart, labels centred under them,
       the token's own position always labelled and the others only where they fit. */
    fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#777777\"/>\n",
            left, axis_y, left + cw, axis_y);
    snprintf(num, sizeof num, "%lld", (long long)s->pos);
    p_x0 = left + ((double)s->pos + 0.5) * sx - ch * (double)strlen(num) / 2.0;
    if (p_x0 + ch * (double)strlen(num) > left + cw + 8.0) p_x0 = left + cw + 8.0 - ch * (double)strlen(num);
    step = nice_step((int64_t)(60.0 / sx) + 1);
    if ((double)step * sx < ch * (digits(s->pos) + 2)) step = nice_step((int64_t)(ch * (digits(s->pos) + 2) / sx) + 1);
    for (t = 0; t <= s->pos; t += step) {
        double x = left + ((double)t + 0.5) * sx, half = ch * digits(t) / 2.0;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#777777\"/>\n",
                x, axis_y, x, axis_y + 5.0);
        if (t == s->pos || x - half < last_end + ch || x + half > p_x0 - ch) continue;
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" fill=\"#444444\">%lld</text>\n",
                x, axis_y + 18.0, (long long)t);
        last_end = x + half;
    }
    fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#777777\"/>\n",
            left + ((double)s->pos + 0.5) * sx, axis_y, left + ((double)s->pos + 0.5) * sx, axis_y + 5.0);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" fill=\"#222222\" font-weight=\"bold\">%s</text>\n",
            p_x0, axis_y + 18.0, num);
    fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\" fill=\"#444444\">position</text>\n",
            left - 10.0, axis_y + 18.0);
    fputs("</svg>\n", f);
    if (sw_commit(&out) != 0) {
        fprintf(stderr, "swa-span: %s\n", out.error);
        return 0;
    }
    fprintf(stderr, "swa-span: wrote %s: %.0fx%.0f\n", path, width, height);
    return 1;
}

/* ==== PNG: a rasterizer, a 5x7 font and a PNG writer with stored deflate blocks ==== */

typedef struct image {
    int w, h;
    uint8_t *px;          /* [h][w][3] RGB */
} image;

typedef struct rgb { uint8_t r, g, b; } rgb;

static const rgb C_BG = {255, 255, 255}, C_TEXT = {34, 34, 34}, C_SOFT = {90, 90, 90},
                 C_AXIS = {119, 119, 119};
static const rgb C_SEG[3] = {{230, 230, 230}, {146, 197, 222}, {33, 102, 172}};

/* Fill [x0, x1) x [y0, y1), clipped to the image. */
static void fill_rect(image *im, int x0, int y0, int x1, int y1, rgb c)
{
    int x, y;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > im->w) x1 = im->w;
    if (y1 > im->h) y1 = im->h;
    for (y = y0; y < y1; y++)
        for (x = x0; x < x1; x++) {
            uint8_t *p = im->px + ((size_t)y * (size_t)im->w + (size_t)x) * 3;
            p[0] = c.r; p[1] = c.g; p[2] = c.b;
        }
}

/* Glyphs are 5 columns by 7 rows, bit 4 the leftmost column; lower case draws as upper case
   and anything else as a blank. */
static const char font_chars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,:-=()/+";
static const uint8_t font_rows[][7] = {
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}, {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E},
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}, {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E},
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}, {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E},
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}, {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C},
    {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}, {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E},  /* A B */
    {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}, {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C},  /* C D */
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}, {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10},  /* E F */
    {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}, {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11},  /* G H */
    {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}, {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C},  /* I J */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F},  /* K L */
    {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}, {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11},  /* M N */
    {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}, {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10},  /* O P */
    {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}, {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11},  /* Q R */
    {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}, {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04},  /* S T */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}, {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04},  /* U V */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}, {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11},  /* W X */
    {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F},  /* Y Z */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}, {0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08},  /* . , */
    {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}, {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00},  /* : - */
    {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00}, {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02},  /* = ( */
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}, {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00},  /* ) / */
    {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00},                                              /* + */
};

#define FONT_SCALE 2
#define GLYPH_W    (6 * FONT_SCALE)   /* advance: 5 columns and a gap */
#define GLYPH_H    (7 * FONT_SCALE)

static int text_width(const char *s)
{
    return (int)strlen(s) * GLYPH_W - FONT_SCALE;
}

static void draw_text(image *im, int x, int y, const char *s, rgb c)
{
    for (; *s; s++, x += GLYPH_W) {
        const char *hit = strchr(font_chars, toupper((unsigned char)*s));
        int row, col;
        if (!*s || !hit) continue;
        for (row = 0; row < 7; row++)
            for (col = 0; col < 5; col++)
                if (font_rows[hit - font_chars][row] & (0x10 >> col))
                    fill_rect(im, x + col * FONT_SCALE, y + row * FONT_SCALE,
                              x + (col + 1) * FONT_SCALE, y + (row + 1) * FONT_SCALE, c);
    }
}

static uint32_t crc_table[256];

static void crc_init(void)
{
    uint32_t n, c;
    int k;
    for (n = 0; n < 256; n++) {
        for (c = n, k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

/* CRC-32 as PNG and zlib define it: reflected polynomial 0xEDB88320, inverted in and out. */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

/* Adler-32 over the uncompressed bytes. 5552 is the most bytes before the sums can overflow
   32 bits (zlib's NMAX), so we reduce only that often. */
static uint32_t adler32(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    while (n) {
        size_t k = n < 5552 ? n : 5552, i;
        for (i = 0; i < k; i++) { a += p[i]; b += a; }
        a %= 65521u;
        b %= 65521u;
        p += k;
        n -= k;
    }
    return b << 16 | a;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static int write_chunk(FILE *f, const char *type, const uint8_t *data, size_t n)
{
    uint8_t head[8], tail[4];
    uint32_t crc;
    put_be32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    crc = crc_update(0xffffffffu, head + 4, 4);
    crc = crc_update(crc, data, n) ^ 0xffffffffu;
    put_be32(tail, crc);
    return fwrite(head, 1, 8, f) == 8 && (n == 0 || fwrite(data, 1, n, f) == n) && fwrite(tail, 1, 4, f) == 4;
}

#define IDAT_MAX 65536   /* bytes of zlib stream per IDAT chunk: big pictures get several */

/* 8-bit RGB, no interlace. Every scanline gets filter 0 (none); the zlib stream is the raw
   bytes in stored deflate blocks of at most 65535 bytes, each with its LEN and ~LEN. */
static int write_png(const char *path, const image *im)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    size_t stride = 1 + (size_t)im->w * 3, raw_n = stride * (size_t)im->h, nblk, z_n, i, o;
    uint8_t ihdr[13], *raw, *z;
    int y, ok;
    sw_file out;
    FILE *f;
    crc_init();
    nblk = (raw_n + 65534) / 65535;
    z_n = 2 + nblk * 5 + raw_n + 4;
    raw = (uint8_t *)malloc(raw_n);
    z = (uint8_t *)malloc(z_n);
    if (!raw || !z) {
        fprintf(stderr, "swa-span: out of memory for a %dx%d picture\n", im->w, im->h);
        free(raw);
        free(z);
        return 0;
    }
    for (y = 0; y < im->h; y++) {
        raw[(size_t)y * stride] = 0;
        memcpy(raw + (size_t)y * stride + 1, im->px + (size_t)y * (size_t)im->w * 3, (size_t)im->w * 3);
    }
    z[0] = 0x78;   /* deflate, 32K window */
    z[1] = 0x01;   /* no dictionary, fastest; 0x7801 is a multiple of 31 as FCHECK requires */
    for (o = 2, i = 0; i < raw_n;) {
        size_t len = raw_n - i < 65535 ? raw_n - i : 65535;
        z[o++] = i + len == raw_n;   /* BFINAL on the last block, BTYPE 00 = stored */
        z[o++] = (uint8_t)len;
        z[o++] = (uint8_t)(len >> 8);
        z[o++] = (uint8_t)~len;
        z[o++] = (uint8_t)(~len >> 8);
        memcpy(z + o, raw + i, len);
        o += len;
        i += len;
    }
    put_be32(z + o, adler32(raw, raw_n));
    o += 4;
    put_be32(ihdr, (uint32_t)im->w);
    put_be32(ihdr + 4, (uint32_t)im->h);
    ihdr[8] = 8;    /* bit depth */
    ihdr[9] = 2;    /* colour type: RGB */
    ihdr[10] = ihdr[11] = ihdr[12] = 0;   /* deflate, adaptive filters, no interlace */
    if (sw_open(&out, path, &model_path, 1) != 0) {
        fprintf(stderr, "swa-span: %s\n", out.error);
        free(raw);
        free(z);
        return 0;
    }
    f = out.f;
    ok = fwrite(sig, 1, 8, f) == 8 && write_chunk(f, "IHDR", ihdr, 13);
    for (i = 0; ok && i < o; i += IDAT_MAX)
        ok = write_chunk(f, "IDAT", z + i, o - i < IDAT_MAX ? o - i : IDAT_MAX);
    ok = ok && write_chunk(f, "IEND", NULL, 0);
    free(raw);
    free(z);
    if (!ok) {
        fprintf(stderr, "swa-span: cannot write %s: %s\n", path, strerror(errno));
        sw_abort(&out);
    } else if (sw_commit(&out) != 0) {
        ok = 0;
        fprintf(stderr, "swa-span: %s\n", out.error);
    } else fprintf(stderr, "swa-span: wrote %s: %dx%d pixels\n", path, im->w, im->h);
    return ok;
}

/* The x pixel where position j starts; position pos+1 ends the chart. Products stay below
   10^15 * 640. */
static int pos_x(const span *s, int left, int cw, int64_t j)
{
    return left + (int)((j * cw + (s->pos + 1) / 2) / (s->pos + 1));
}

static int draw_png(const char *path, const span *s, const char *title, const char *subtitle)
{
    const int m = 16, cw = 640, gap_text = 10;
    int lw = 0, ww = 0, dw = 6, rw = 5, l, pitch, rowh, label_every, left, right_x, top, axis_y, ok, r;
    int p_x0, last_end = -1000000;
    int64_t step, t;
    char num[32], lab[96];
    layer_text lt;
    image im;

    text_widths(s, &ww, &dw, &rw);
    for (l = 0; l < s->n_layer; l++) {
        snprintf(lab, sizeof lab, "L%d W %s", l, layer_texts(s, l).window);
        if ((int)strlen(lab) > lw) lw = (int)strlen(lab);
    }
    if (lw < 9) lw = 9;   /* "POSITION" sits under the labels, clear of the first tick label */
    pitch = s->n_layer <= 24 ? 24 : 576 / s->n_layer;
    if (pitch < 2) pitch = 2;
    rowh = pitch >= 6 ? pitch - (pitch + 4) / 6 : pitch;
    label_every = pitch >= GLYPH_H + 4 ? 1 : (GLYPH_H + 4) / pitch + 1;
    left = m + lw * GLYPH_W + gap_text;
    right_x = left + cw + 14;
    top = m + 20 + 20 + 30 + 24;   /* title, subtitle, legend, column headers */
    axis_y = top + pitch * s->n_layer + 2;
    im.w = right_x + (dw + 2 + rw) * GLYPH_W + m;
    if (im.w < 2 * m + text_width(title)) im.w = 2 * m + text_width(title);
    if (im.w < 2 * m + text_width(subtitle)) im.w = 2 * m + text_width(subtitle);
    im.h = axis_y + 8 + 6 + GLYPH_H + m;
    im.px = (uint8_t *)malloc((size_t)im.w * (size_t)im.h * 3);
    if (!im.px) {
        fprintf(stderr, "swa-span: out of memory for a %dx%d picture\n", im.w, im.h);
        return 0;
    }
    fill_rect(&im, 0, 0, im.w, im.h, C_BG);
    draw_text(&im, m, m, title, C_TEXT);
    draw_text(&im, m, m + 20, subtitle, C_SOFT);
    {
        int x = m, y = m + 46;
        for (r = R_DIRECT; r >= R_OUT; r--) {
            fill_rect(&im, x, y, x + GLYPH_H, y + GLYPH_H, C_SEG[r]);
            draw_text(&im, x + GLYPH_H + 6, y, seg_words[r], C_TEXT);
            x += GLYPH_H + 6 + text_width(seg_words[r]) + 28;
        }
    }
    draw_text(&im, right_x + dw * GLYPH_W - text_width("direct"), top - GLYPH_H - 6, "direct", C_SOFT);
    draw_text(&im, right_x + (dw + 2 + rw) * GLYPH_W - text_width("reach"), top - GLYPH_H - 6, "reach", C_SOFT);

    for (l = s->n_layer - 1; l >= 0; l--) {
        int y = top + pitch * (s->n_layer - 1 - l), ty = y + (rowh - GLYPH_H) / 2;
        int64_t lo[3], hi[3];
        lo[R_OUT] = 0;                  hi[R_OUT] = s->reach_lo[l] - 1;
        lo[R_REACH] = s->reach_lo[l];   hi[R_REACH] = s->direct_lo[l] - 1;
        lo[R_DIRECT] = s->direct_lo[l]; hi[R_DIRECT] = s->pos;
        for (r = R_OUT; r <= R_DIRECT; r++) {
            int x0, x1;
            if (hi[r] < lo[r]) continue;
            x0 = pos_x(s, left, cw, lo[r]);
            x1 = pos_x(s, left, cw, hi[r] + 1);
            if (x1 <= x0) {   /* narrower than a pixel: still one pixel wide */
                if (x1 >= left + cw) x0 = x1 - 1;
                else x1 = x0 + 1;
            }
            fill_rect(&im, x0, y, x1, y + rowh, C_SEG[r]);
        }
        if (!show_label(s->n_layer, l, label_every, pitch, GLYPH_H + 2)) continue;
        lt = layer_texts(s, l);
        snprintf(lab, sizeof lab, "L%d W %s", l, lt.window);
        draw_text(&im, left - gap_text - text_width(lab), ty, lab, C_TEXT);
        draw_text(&im, right_x + dw * GLYPH_W - text_width(lt.direct), ty, lt.direct, C_TEXT);
        draw_text(&im, right_x + (dw + 2 + rw) * GLYPH_W - text_width(lt.reach), ty, lt.reach, C_TEXT);
    }

    /* Axis as in the SVG: round ticks at least 70px apart, the token's position always
       labelled, other labels where they fit. */
    fill_rect(&im, left, axis_y, left + cw, axis_y + 1, C_AXIS);
    snprintf(num, sizeof num, "%lld", (long long)s->pos);
    {
        int px = (pos_x(s, left, cw, s->pos) + pos_x(s, left, cw, s->pos + 1)) / 2;
        fill_rect(&im, px, axis_y, px + 1, axis_y + 6, C_AXIS);
        p_x0 = px - text_width(num) / 2;
        if (p_x0 + text_width(num) > left + cw + 8) p_x0 = left + cw + 8 - text_width(num);
        draw_text(&im, p_x0, axis_y + 10, num, C_TEXT);
    }
    step = nice_step((int64_t)((70.0 * (double)(s->pos + 1)) / cw) + 1);
    {
        int64_t need = (int64_t)((double)(GLYPH_W * (digits(s->pos) + 2)) * (double)(s->pos + 1) / cw) + 1;
        if (step < need) step = nice_step(need);
    }
    for (t = 0; t <= s->pos; t += step) {
        int px = (pos_x(s, left, cw, t) + pos_x(s, left, cw, t + 1)) / 2, tw;
        snprintf(lab, sizeof lab, "%lld", (long long)t);
        tw = text_width(lab);
        fill_rect(&im, px, axis_y, px + 1, axis_y + 6, C_AXIS);
        if (t == s->pos || px - tw / 2 < last_end + GLYPH_W || px + tw / 2 > p_x0 - GLYPH_W) continue;
        draw_text(&im, px - tw / 2, axis_y + 10, lab, C_SOFT);
        last_end = px + tw / 2;
    }
    draw_text(&im, left - gap_text - GLYPH_W - text_width("position"), axis_y + 10, "position", C_SOFT);
    ok = write_png(path, &im);
    free(im.px);
    return ok;
}

/* ==== command line ==== */

/* A whole decimal integer in [lo, hi], or 0 with a message. */
static int parse_int(const char *flag, const char *text, long long lo, long long hi, long long *out)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "swa-span: %s wants an integer from %lld to %lld, not \"%s\"\n", flag, lo, hi, text);
        return 0;
    }
    *out = v;
    return 1;
}

int main(int argc, char **argv)
{
    const char *model = NULL, *svg = NULL, *png = NULL, *base;
    long long layers = 0, w = 0, pos = -1, v;
    int i, l, rc = 1;
    char *desc = NULL, short_desc[64], title[256], subtitle[256];
    swa_model *mdl = NULL;
    swa_error err;
    span s;
    memset(&s, 0, sizeof s);

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--version")) { printf("%s %d.%d.%d\n", "swa-span", SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH); return 0; }
        if (strcmp(a, "-m") && strcmp(a, "-l") && strcmp(a, "-w") && strcmp(a, "-p") &&
            strcmp(a, "--svg") && strcmp(a, "--png")) {
            fprintf(stderr, "swa-span: unknown argument %s\n", a);
            usage(stderr);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "swa-span: %s needs a value\n", a);
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(a, "-m")) model = model_path = argv[i];
        else if (!strcmp(a, "--svg")) svg = argv[i];
        else if (!strcmp(a, "--png")) png = argv[i];
        else if (!parse_int(a, argv[i], !strcmp(a, "-p") ? 0 : 1,
                            !strcmp(a, "-l") ? MAX_LAYERS : !strcmp(a, "-w") ? INT32_MAX : MAX_POS, &v)) {
            usage(stderr);
            return 2;
        } else if (!strcmp(a, "-l")) layers = v;
        else if (!strcmp(a, "-w")) w = v;
        else pos = v;
    }
    if (!model == !layers) {
        fprintf(stderr, "swa-span: %s\n", model ? "give -m MODEL or -l LAYERS, not both"
                                                : "give -m MODEL, or -l LAYERS with -w W");
        usage(stderr);
        return 2;
    }
    if (layers && !w) {
        fprintf(stderr, "swa-span: -l LAYERS needs -w W\n");
        usage(stderr);
        return 2;
    }

    if (model) {
        if (swa_model_load(model, &mdl, &err) != SWA_OK) {
            /* The library's message usually names the file already. */
            if (strstr(err.msg, model)) fprintf(stderr, "swa-span: %s\n", err.msg);
            else fprintf(stderr, "swa-span: %s: %s\n", model, err.msg);
            return 1;
        }
        s.n_layer = swa_model_hparams(mdl)->n_layer;
    } else {
        s.n_layer = (int)layers;
    }
    s.window = (int32_t *)calloc((size_t)s.n_layer, sizeof *s.window);
    s.direct_lo = (int64_t *)calloc((size_t)s.n_layer, sizeof *s.direct_lo);
    s.reach_lo = (int64_t *)calloc((size_t)s.n_layer, sizeof *s.reach_lo);
    if (!s.window || !s.direct_lo || !s.reach_lo) {
        fprintf(stderr, "swa-span: out of memory for %d layers\n", s.n_layer);
        goto done;
    }
    for (l = 0; l < s.n_layer; l++) s.window[l] = w ? (int32_t)w : swa_model_layer_window(mdl, l);
    if (pos >= 0) {
        s.pos = pos;
    } else {
        int32_t largest = 0;
        for (l = 0; l < s.n_layer; l++)
            if (s.window[l] > largest) largest = s.window[l];
        s.pos = largest ? 4 * (int64_t)largest : FULL_POS;
    }
    span_compute(&s);
    if (!(desc = describe_windows(&s))) {
        fprintf(stderr, "swa-span: out of memory\n");
        goto done;
    }

    print_summary(&s, desc);
    print_chart(&s);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "swa-span: cannot write the output: %s\n", strerror(errno));
        goto done;
    }

    describe_windows_short(&s, desc, short_desc, sizeof short_desc);
    base = model ? strrchr(model, '/') : NULL;
    base = base ? base + 1 : model;
    if (model) snprintf(title, sizeof title, "%s: token %lld, %d layers, %s", base, (long long)s.pos,
                        s.n_layer, short_desc);
    else snprintf(title, sizeof title, "Token %lld, %d layers, %s", (long long)s.pos, s.n_layer, short_desc);
    snprintf(subtitle, sizeof subtitle, "after %d layers it sees positions %lld..%lld (directly %lld..%lld)",
             s.n_layer, (long long)s.reach_lo[s.n_layer - 1], (long long)s.pos,
             (long long)s.direct_lo[s.n_layer - 1], (long long)s.pos);
    if (svg && !write_svg(svg, &s, title, subtitle)) goto done;
    /* The PNG font has no lower case and no file-name characters: its title leaves the name out. */
    if (model) snprintf(title, sizeof title, "Token %lld, %d layers, %s", (long long)s.pos, s.n_layer, short_desc);
    if (png && !draw_png(png, &s, title, subtitle)) goto done;
    rc = 0;
done:
    free(desc);
    free(s.window);
    free(s.direct_lo);
    free(s.reach_lo);
    swa_model_free(mdl);
    return rc;
}
