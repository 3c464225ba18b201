#!/usr/bin/python3
"""An independent Llama in plain PyTorch, for checking the engine's forward pass layer by layer.

Written from llama2.c's format description (Karpathy's export.py, "legacy" version 0) and the
Llama papers; it shares no code with AttnViz: its own reader of the checkpoint (below), its own
forward pass in float64. It reads a llama2.c version 0 checkpoint and prints every intermediate
for the given token ids as JSON, in the layout of gpt2_reference.py:

  {"tokens": [...], "embedding": (n, d),
   "layers": [{"attention_norm": (n, d),
               "heads": [{"kv_head": g, "q": (n, d_head) after RoPE, "k": key/value head g's keys
                          after RoPE, "v": g's values, "scores": (n, n) raw q·k,
                          "scaled_scores": scores / sqrt(d_head), "mask": (n, n) true = seen,
                          "weights": α (n, n), rows are queries, "output": α·v (n, d_head)}],
               "attention_output": (n, d) after W_O,
               "residual_after_attention": (n, d), "mlp_norm": (n, d),
               "mlp_hidden": (n, d_ff) silu(W1 x) * (W3 x), "mlp_output": (n, d),
               "residual_after_mlp": (n, d)}],
   "final_norm": (n, d), "logits": (n, vocab)}

The checkpoint (little-endian): seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
vocab_size — negative when the classifier is not the embedding — and seq_len), then float32
arrays: token_embedding (vocab, dim), rms_att (L, dim), wq (L, heads·hs, dim), wk (L, kv·hs, dim),
wv (L, kv·hs, dim), wo (L, dim, heads·hs), rms_ffn (L, dim), w1 (L, hidden, dim),
w2 (L, dim, hidden), w3 (L, hidden, dim), rms_final (dim), freq_cis_real and freq_cis_imag
(seq_len, hs/2 each; not used here, only compared in --self-check), then wcls (vocab, dim) when
vocab_size was negative. Matrices are (out, in): y = W x.

The math (row vectors, so y = x Wᵀ):
  x = embedding[ids]
  per layer: h = rmsnorm(x) (x / √(mean(x²) + 1e-5) · g);
             q = h Wqᵀ, k = h Wkᵀ, v = h Wvᵀ; q and k turned by RoPE: each adjacent pair
             (2i, 2i+1) at position p by the angle p · 10000^(−(2i mod hs)/hs);
             query head h reads key/value head h // (heads / kv_heads);
             α = softmax(mask(q kᵀ / √hs)); a = x + concat(α v) Woᵀ;
             x' = a + (silu(rmsnorm(a) W1ᵀ) * (rmsnorm(a) W3ᵀ)) W2ᵀ
  logits = rmsnorm(x) wclsᵀ.

Usage:
  /usr/bin/python3 tests/oracle/llama_reference.py MODEL.bin --tokens 1,2,3 [--ablate L.H] [-o OUT.json]
  /usr/bin/python3 tests/oracle/llama_reference.py --self-check [MODEL.bin]
"""

import argparse
import json
import math
import pathlib
import struct
import sys

import numpy as np
import torch

EPS = 1e-5
THETA = 10000.0


def read_llama2c(path):
    """(config dict, {name: float64 tensor}) of a llama2.c version 0 checkpoint."""
    data = pathlib.Path(path).read_bytes()
    if len(data) < 28:
        raise ValueError(f"{path}: too short for a header")
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack("<7i", data[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    hs = dim // heads
    config = {"dim": dim, "hidden": hidden, "layers": layers, "heads": heads,
              "kv_heads": kv_heads, "vocab": vocab, "seq_len": seq_len, "head_size": hs,
              "shared_classifier": shared}
    shapes = [("token_embedding", (vocab, dim)), ("rms_att", (layers, dim)),
              ("wq", (layers, heads * hs, dim)), ("wk", (layers, kv_heads * hs, dim)),
              ("wv", (layers, kv_heads * hs, dim)), ("wo", (layers, dim, heads * hs)),
              ("rms_ffn", (layers, dim)), ("w1", (layers, hidden, dim)),
              ("w2", (layers, dim, hidden)), ("w3", (layers, hidden, dim)),
              ("rms_final", (dim,)), ("freq_cis_real", (seq_len, hs // 2)),
              ("freq_cis_imag", (seq_len, hs // 2))]
    if not shared:
        shapes.append(("wcls", (vocab, dim)))
    floats = np.frombuffer(data, dtype="<f4", offset=28)
    need = sum(int(np.prod(s)) for _, s in shapes)
    if floats.size != need:
        raise ValueError(f"{path}: {floats.size} floats after the header, {need} expected")
    weights, at = {}, 0
    for name, shape in shapes:
        count = int(np.prod(shape))
        weights[name] = torch.tensor(floats[at:at + count].reshape(shape).astype(np.float64))
        at += count
    if shared:
        weights["wcls"] = weights["token_embedding"]
    return config, weights


def rms_norm(x, gain):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + EPS) * gain


def rope(x, head_size):
    """x (n, width) with adjacent pairs turned by position; width a multiple of head_size."""
    n, width = x.shape
    out = x.clone()
    positions = torch.arange(n, dtype=torch.float64).unsqueeze(1)  # (n, 1)
    even = torch.arange(0, width, 2)
    freq = THETA ** (-(even % head_size).double() / head_size)  # (width / 2,)
    angle = positions * freq  # (n, width / 2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    a, b = x[:, 0::2], x[:, 1::2]
    out[:, 0::2] = a * cos - b * sin
    out[:, 1::2] = a * sin + b * cos
    return out


class Llama:
    def __init__(self, path):
        self.config, self.w = read_llama2c(path)
        c = self.config
        self.d, self.heads, self.kv_heads = c["dim"], c["heads"], c["kv_heads"]
        self.layers, self.hs = c["layers"], c["head_size"]

    def kv_head_of(self, head):
        """The key/value head query head `head` reads (grouped-query attention)."""
        return head // (self.heads // self.kv_heads)

    def forward(self, ids, head_mask=None):
        """Every intermediate, as torch tensors. head_mask[(layer, head)] = factor multiplies that
        head's output (0 removes it, as --ablate does)."""
        head_mask = head_mask or {}
        n, w, hs = len(ids), self.w, self.hs
        x = w["token_embedding"][torch.tensor(ids)]  # (n, d)
        out = {"tokens": list(ids), "embedding": x, "layers": []}
        seen = torch.tril(torch.ones(n, n, dtype=torch.bool))  # (n_query, n_key)
        for i in range(self.layers):
            layer = {}
            normed = rms_norm(x, w["rms_att"][i])
            layer["attention_norm"] = normed
            q_all = rope(normed @ w["wq"][i].T, hs)  # (n, heads · hs)
            k_all = rope(normed @ w["wk"][i].T, hs)  # (n, kv_heads · hs)
            v_all = normed @ w["wv"][i].T
            heads, outputs = [], []
            for head in range(self.heads):
                g = self.kv_head_of(head)
                q = q_all[:, head * hs:(head + 1) * hs]
                k = k_all[:, g * hs:(g + 1) * hs]
                v = v_all[:, g * hs:(g + 1) * hs]
                scores = q @ k.T  # (n_query, n_key)
                scaled = scores / math.sqrt(hs)
                alpha = torch.softmax(scaled.masked_fill(~seen, float("-inf")), dim=-1)
                head_out = (alpha @ v) * head_mask.get((i, head), 1.0)  # (n, hs)
                heads.append({"kv_head": g, "q": q, "k": k, "v": v, "scores": scores,
                              "scaled_scores": scaled, "mask": seen, "weights": alpha,
                              "output": head_out})
                outputs.append(head_out)
            layer["heads"] = heads
            attn = torch.cat(outputs, dim=-1) @ w["wo"][i].T  # (n, d)
            layer["attention_output"] = attn
            x = x + attn
            layer["residual_after_attention"] = x
            normed2 = rms_norm(x, w["rms_ffn"][i])
            layer["mlp_norm"] = normed2
            gate = normed2 @ w["w1"][i].T
            hidden = gate * torch.sigmoid(gate) * (normed2 @ w["w3"][i].T)  # (n, d_ff)
            layer["mlp_hidden"] = hidden
            mlp = hidden @ w["w2"][i].T
            layer["mlp_output"] = mlp
            x = x + mlp
            layer["residual_after_mlp"] = x
            out["layers"].append(layer)
        final = rms_norm(x, w["rms_final"])
        out["final_norm"] = final
        out["logits"] = final @ w["wcls"].T  # (n, vocab)
        return out


def to_json(value):
    if isinstance(value, torch.Tensor):
        return value.tolist() if value.dtype == torch.bool else value.double().tolist()
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"  ok: {what}")


def self_check(path):
    """The RoPE angles against the file's own freq_cis tables, RoPE against a complex-number
    formulation, and the attention against a batched einsum with the key/value heads repeated."""
    model = Llama(path)
    c, w, hs = model.config, model.w, model.hs
    print(f"{path}: {c}")
    positions = torch.arange(c["seq_len"], dtype=torch.float64).unsqueeze(1)
    angle = positions * THETA ** (-torch.arange(0, hs, 2).double() / hs)
    diff = max((torch.cos(angle) - w["freq_cis_real"]).abs().max().item(),
               (torch.sin(angle) - w["freq_cis_imag"]).abs().max().item())
    check(diff < 1e-5, f"RoPE's cos/sin equal the file's float32 freq_cis tables (max |Δ| {diff:.1e})")
    x = torch.randn(7, 3 * hs, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    pairs = torch.view_as_complex(x.reshape(7, -1, 2).contiguous())
    turn = torch.polar(torch.ones_like(angle[:7]), angle[:7]).repeat(1, 3)
    by_complex = torch.view_as_real(pairs * turn).reshape(7, -1)
    check(torch.allclose(rope(x, hs), by_complex, atol=1e-12), "RoPE as complex multiplication")
    ids = [1, 400, 57, 300, 9, 33, 21, 200]
    out = model.forward(ids)
    group = model.heads // model.kv_heads
    for i in range(model.layers):
        layer = out["layers"][i]
        q = torch.stack([h["q"] for h in layer["heads"]])  # (heads, n, hs)
        k = rope(layer["attention_norm"] @ w["wk"][i].T, hs).reshape(len(ids), -1, hs)
        v = (layer["attention_norm"] @ w["wv"][i].T).reshape(len(ids), -1, hs)
        k = k.transpose(0, 1).repeat_interleave(group, dim=0)
        v = v.transpose(0, 1).repeat_interleave(group, dim=0)
        hidden = torch.triu(torch.ones(len(ids), len(ids), dtype=torch.bool), diagonal=1)
        logits = torch.einsum("hqe,hke->hqk", q, k).masked_fill(hidden, -math.inf) / math.sqrt(hs)
        batched = torch.einsum("hqk,hke->hqe", torch.softmax(logits, dim=-1), v)
        mine = torch.stack([h["output"] for h in layer["heads"]])
        check(torch.allclose(batched, mine, atol=1e-12),
              f"layer {i}: attention equals a batched einsum with the key/value heads repeated")
    print("llama_reference self-check: ok")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", help="a llama2.c version 0 checkpoint")
    parser.add_argument("--tokens", help="token ids, comma-separated")
    parser.add_argument("--ablate", action="append", default=[], help="LAYER.HEAD: zero its output")
    parser.add_argument("-o", "--output", help="write the JSON here (default: standard output)")
    parser.add_argument("--self-check", action="store_true")
    args = parser.parse_args(argv)
    torch.set_grad_enabled(False)
    if args.self_check:
        default = pathlib.Path(__file__).resolve().parents[2] / "assets/models/stories260K/stories260K.bin"
        self_check(args.model or default)
        return 0
    if not args.model or not args.tokens:
        parser.error("MODEL and --tokens are needed (or --self-check)")
    mask = {}
    for text in args.ablate:
        layer, head = text.split(".")
        mask[(int(layer), int(head))] = 0.0
    out = to_json(Llama(args.model).forward([int(t) for t in args.tokens.split(",")], mask))
    text = json.dumps(out)
    if args.output:
        pathlib.Path(args.output).write_text(text)
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
