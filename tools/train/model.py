"""The model swa.h runs, written in PyTorch: a Mistral-style decoder with sliding-window attention.

Everything here is laid out the way the GGUF "llama" architecture stores it, so the exporter
writes each tensor as it is, with no permutation:

- RoPE rotates ADJACENT pairs (x[2i], x[2i+1]) of each head by pos * base^(-2i/head_dim).
- Query head h reads key/value head h // (n_head / n_kv_head) (grouped-query attention).
- A query at position i sees the keys j with i - W < j <= i: W tokens, itself included.
- Linear weights are (out, in), which is ggml's ne = [in, out] written row-major.
"""

import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab: int = 1536
    dim: int = 256
    n_layer: int = 6
    n_head: int = 8
    n_kv_head: int = 4
    ffn: int = 704
    window: int = 64
    seq_len: int = 512
    rope_base: float = 10000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self):
        return self.dim // self.n_head

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_table(n_pos, head_dim, base, start=0):
    """cos and sin of pos * base^(-2i/head_dim), shape [n_pos, head_dim/2]. The angle is taken in
    double, as swa.h does, then rounded to float."""
    i = torch.arange(head_dim // 2, dtype=torch.float64)
    inv = base ** (-2.0 * i / head_dim)
    pos = torch.arange(start, start + n_pos, dtype=torch.float64)
    ang = pos[:, None] * inv[None, :]
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x, cos, sin):
    """x: [B, T, H, hd]; rotate each adjacent pair (x[2i], x[2i+1])."""
    B, T, H, hd = x.shape
    p = x.reshape(B, T, H, hd // 2, 2)
    x0, x1 = p[..., 0], p[..., 1]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).reshape(B, T, H, hd)


def window_mask_blocks(W, nb, device=None):
    """Visibility for blocked attention: query r of block b against the 2W keys of blocks b-1 and
    b (key c is position (b-1)*W + c). Visible iff i - W < j <= i, i.e. r < c <= r + W, and the
    key exists (block 0 has no block before it). Shape [nb, W, 2W], True = visible."""
    r = torch.arange(W, device=device)[:, None]
    c = torch.arange(2 * W, device=device)[None, :]
    band = (c > r) & (c <= r + W)
    m = band[None].repeat(nb, 1, 1)
    m[0, :, :W] = False
    return m


def window_attention(q, k, v, W):
    """Sliding-window attention. q: [B, H, T, hd], k, v: [B, Hkv, T, hd] -> [B, H, T, hd].

    Queries are cut into blocks of W; block b only needs the keys of blocks b-1 and b, so the
    cost is T * 2W instead of T * T. Keys and values are zero-padded in front by one block and
    at the end to a multiple of W; the mask hides every padded key."""
    B, H, T, hd = q.shape
    Hkv = k.shape[1]
    g = H // Hkv
    nb = (T + W - 1) // W
    Tp = nb * W
    if Tp != T:
        q = F.pad(q, (0, 0, 0, Tp - T))
        k = F.pad(k, (0, 0, 0, Tp - T))
        v = F.pad(v, (0, 0, 0, Tp - T))
    kp = F.pad(k, (0, 0, W, 0))
    vp = F.pad(v, (0, 0, W, 0))
    kb = torch.cat((kp[:, :, :Tp].reshape(B, Hkv, nb, W, hd), kp[:, :, W:].reshape(B, Hkv, nb, W, hd)), dim=3)
    vb = torch.cat((vp[:, :, :Tp].reshape(B, Hkv, nb, W, hd), vp[:, :, W:].reshape(B, Hkv, nb, W, hd)), dim=3)
    qb = q.reshape(B, Hkv, g, nb, W, hd)
    att = torch.matmul(qb, kb.unsqueeze(2).transpose(-1, -2)) * (1.0 / math.sqrt(hd))   # [B,Hkv,g,nb,W,2W]
    mask = window_mask_blocks(W, nb, q.device)
    att = att.masked_fill(~mask, float("-inf"))
    att = torch.softmax(att, dim=-1)
    y = torch.matmul(att, vb.unsqueeze(2))                                                 # [B,Hkv,g,nb,W,hd]
    return y.reshape(B, H, Tp, hd)[:, :, :T]


def window_attention_naive(q, k, v, W):
    """The same with a full T x T mask: the specification window_attention is tested against."""
    B, H, T, hd = q.shape
    g = H // k.shape[1]
    k = k.repeat_interleave(g, dim=1)
    v = v.repeat_interleave(g, dim=1)
    att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    att = att.masked_fill(~((j <= i) & (j > i - W)), float("-inf"))
    return torch.softmax(att, -1) @ v


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.attn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.wq = nn.Linear(cfg.dim, cfg.n_head * hd, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_head * hd, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_head * hd, bias=False)
        self.wo = nn.Linear(cfg.n_head * hd, cfg.dim, bias=False)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.w_gate = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w_up = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w_down = nn.Linear(cfg.ffn, cfg.dim, bias=False)

    def forward(self, x, cos, sin):
        cfg = self.cfg
        B, T, _ = x.shape
        hd = cfg.head_dim
        h = self.attn_norm(x)
        q = apply_rope(self.wq(h).view(B, T, cfg.n_head, hd), cos, sin).transpose(1, 2)
        k = apply_rope(self.wk(h).view(B, T, cfg.n_kv_head, hd), cos, sin).transpose(1, 2)
        v = self.wv(h).view(B, T, cfg.n_kv_head, hd).transpose(1, 2)
        y = window_attention(q, k, v, cfg.window).transpose(1, 2).reshape(B, T, cfg.n_head * hd)
        x = x + self.wo(y)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Model(nn.Module):
    """Token embedding (tied with the output projection), n_layer blocks, final RMSNorm."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)

    def init_weights(self, gen):
        """GPT-2 style: N(0, 0.02), residual outputs scaled down by sqrt(2 * n_layer)."""
        std = 0.02
        for name, p in self.named_parameters():
            if p.dim() == 2:
                s = std / math.sqrt(2 * self.cfg.n_layer) if name.endswith(("wo.weight", "w_down.weight")) else std
                with torch.no_grad():
                    p.copy_(torch.randn(p.shape, generator=gen) * s)

    def forward(self, idx):
        """idx: [B, T] token ids at positions 0..T-1 -> logits [B, T, vocab]."""
        B, T = idx.shape
        cos, sin = rope_table(T, self.cfg.head_dim, self.cfg.rope_base)
        x = self.tok(idx)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.norm(x) @ self.tok.weight.t()



def load_checkpoint(path):
    """The checkpoint train.py wrote at path (its dict) and its model, in eval mode."""
    ck = torch.load(path)
    model = Model(Config(**ck["cfg"]))
    model.load_state_dict(ck["model"])
    model.eval()
    return ck, model

def _selftest():
    """python3 model.py: the blocked attention equals the plain mask, and the mask edge is where
    the library puts it (the key W-1 back changes the last output, the key W back does not)."""
    g = torch.Generator().manual_seed(0)
    for T, W, H, Hkv in ((100, 16, 8, 4), (64, 64, 4, 1), (37, 8, 4, 4), (512, 64, 8, 2), (5, 64, 2, 1), (130, 1, 2, 2)):
        q = torch.randn(2, H, T, 16, generator=g, dtype=torch.float64)
        k = torch.randn(2, Hkv, T, 16, generator=g, dtype=torch.float64)
        v = torch.randn(2, Hkv, T, 16, generator=g, dtype=torch.float64)
        err = (window_attention(q, k, v, W) - window_attention_naive(q, k, v, W)).abs().max().item()
        assert err < 1e-12, (T, W, H, Hkv, err)
    cfg = Config(vocab=50, dim=32, n_layer=1, n_head=4, n_kv_head=2, ffn=64, window=8)
    torch.manual_seed(0)
    m = Model(cfg).double()
    ids = torch.randint(0, 50, (1, 20))
    with torch.no_grad():
        base = m(ids)[0, -1]
        for back, changes in ((cfg.window - 1, True), (cfg.window, False)):
            alt = ids.clone()
            alt[0, -1 - back] = (alt[0, -1 - back] + 1) % 50
            diff = (m(alt)[0, -1] - base).abs().max().item()
            assert (diff > 0) == changes, (back, diff)
    print("model.py: window attention matches the plain mask; mask edge at W")


if __name__ == "__main__":
    _selftest()
