#!/usr/bin/python3
"""An independent GPT-2 in plain PyTorch, for checking the engine's forward pass layer by layer.

Written from the GPT-2 paper (Radford et al., 2019) and Hugging Face's GPT2Model definitions; it
shares no code with AttnViz: its own safetensors reader (below), its own config reading, its own
forward pass in float64. It reads a Hugging Face GPT-2 folder (config.json + model.safetensors;
F32, F16 or BF16; names with or without "transformer."; the mask buffers ignored; lm_head.weight
as the unembedding when present, else wte) and prints every intermediate for the given token
ids as JSON:

  {"tokens": [...], "embedding": (n, d),
   "layers": [{"attention_norm": (n, d),
               "heads": [{"q": (n, d_head), "k": ..., "v": ..., "scores": (n, n) raw q·k,
                          "scaled_scores": scores / sqrt(d_head), "mask": (n, n) true = seen,
                          "weights": α (n, n), rows are queries, "output": α·v (n, d_head)}],
               "attention_output": (n, d) after W_O and its bias,
               "residual_after_attention": (n, d), "mlp_norm": (n, d),
               "mlp_hidden": (n, d_ff) after GELU, "mlp_output": (n, d),
               "residual_after_mlp": (n, d)}],
   "final_norm": (n, d), "logits": (n, vocab)}

The math (row-vector convention, Conv1D weights stored (in, out)):
  x = wte[ids] + wpe[0..n)
  per layer: a = x + c_proj(concat_h softmax(mask(q_h k_hᵀ / √d_head)) v_h),
             [q | k | v] = ln_1(x) · c_attn + b;  x' = a + c_proj(gelu_tanh(c_fc(ln_2(a))))
  logits = ln_f(x) · unembeddingᵀ;  LayerNorm: (x − mean) / √(var + eps) · g + b (biased var).

Usage:
  /usr/bin/python3 tests/oracle/gpt2_reference.py FOLDER --tokens 1,2,3 [-o OUT.json]
  /usr/bin/python3 tests/oracle/gpt2_reference.py --self-check
--self-check writes tiny models with write_tiny_gpt2.py (every dtype, prefixed and not), reads
them back exactly, and checks this forward pass against a second formulation of the same math
built from torch.nn modules (nn.LayerNorm, nn.MultiheadAttention, nn.GELU('tanh'), nn.Linear),
and a case small enough to work out by hand.
"""

import argparse
import json
import math
import pathlib
import struct
import sys
import tempfile

import numpy as np
import torch

# ---- safetensors, read here (independent of core/models/safetensors.cpp) ----


def read_safetensors(path):
    """{name: float32 numpy array} of the F32, F16 and BF16 tensors; other dtypes skipped."""
    data = pathlib.Path(path).read_bytes()
    if len(data) < 8:
        raise ValueError(f"{path}: too short")
    (header_len,) = struct.unpack("<Q", data[:8])
    if header_len > len(data) - 8:
        raise ValueError(f"{path}: header length {header_len} past the end")
    header = json.loads(data[8:8 + header_len].decode("utf-8"))
    body = memoryview(data)[8 + header_len:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        if not 0 <= begin <= end <= len(body):
            raise ValueError(f"{path}: {name}: offsets {begin}, {end} outside the data")
        raw = bytes(body[begin:end])
        shape = tuple(entry["shape"])
        dtype = entry["dtype"]
        if dtype == "F32":
            array = np.frombuffer(raw, dtype="<f4")
        elif dtype == "F16":
            array = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dtype == "BF16":
            array = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            continue
        if array.size != int(np.prod(shape, dtype=np.int64)):
            raise ValueError(f"{path}: {name}: {array.size} values for shape {shape}")
        tensors[name] = array.reshape(shape).astype(np.float32)
    return tensors


# ---- the model ----


class Gpt2:
    def __init__(self, folder, dtype=torch.float64):
        folder = pathlib.Path(folder)
        if folder.suffix == ".safetensors":
            folder = folder.parent
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.d = config["n_embd"]
        self.heads = config["n_head"]
        self.layers = config["n_layer"]
        self.d_head = self.d // self.heads
        self.eps = config.get("layer_norm_epsilon", 1e-5)
        activation = config.get("activation_function", "gelu_new")
        if activation not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ValueError(f"activation {activation} not modelled here")
        raw = read_safetensors(folder / "model.safetensors")
        self.w = {}
        for name, array in raw.items():
            bare = name[len("transformer."):] if name.startswith("transformer.") else name
            if bare.endswith(".attn.bias") or bare.endswith(".attn.masked_bias"):
                continue  # the causal mask as a buffer
            self.w[bare] = torch.tensor(array, dtype=dtype)
        self.unembedding = self.w.get("lm_head.weight", self.w["wte.weight"])  # (V, d)
        self.dtype = dtype

    def layer_norm(self, x, prefix):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    @staticmethod
    def gelu_tanh(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))

    def forward(self, ids, head_mask=None):
        """Every intermediate, as torch tensors, in the layout the module docstring gives.
        head_mask[(layer, head)] = factor multiplies that head's output (0 removes it)."""
        head_mask = head_mask or {}
        n = len(ids)
        w = self.w
        x = w["wte.weight"][torch.tensor(ids)] + w["wpe.weight"][:n]  # (n, d)
        out = {"tokens": list(ids), "embedding": x, "layers": []}
        seen = torch.tril(torch.ones(n, n, dtype=torch.bool))  # (n_query, n_key)
        for i in range(self.layers):
            h = f"h.{i}."
            layer = {}
            normed = self.layer_norm(x, h + "ln_1")
            layer["attention_norm"] = normed
            qkv = normed @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]  # (n, 3d)
            q_all, k_all, v_all = qkv[:, :self.d], qkv[:, self.d:2 * self.d], qkv[:, 2 * self.d:]
            heads, outputs = [], []
            for head in range(self.heads):
                cols = slice(head * self.d_head, (head + 1) * self.d_head)
                q, k, v = q_all[:, cols], k_all[:, cols], v_all[:, cols]  # (n, d_head)
                scores = q @ k.T  # (n_query, n_key)
                scaled = scores / math.sqrt(self.d_head)
                masked = scaled.masked_fill(~seen, float("-inf"))
                alpha = torch.softmax(masked, dim=-1)
                head_out = (alpha @ v) * head_mask.get((i, head), 1.0)  # (n, d_head)
                heads.append({"q": q, "k": k, "v": v, "scores": scores, "scaled_scores": scaled,
                              "mask": seen, "weights": alpha, "output": head_out})
                outputs.append(head_out)
            layer["heads"] = heads
            concat = torch.cat(outputs, dim=-1)  # (n, d)
            attn = concat @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
            layer["attention_output"] = attn
            x = x + attn
            layer["residual_after_attention"] = x
            normed2 = self.layer_norm(x, h + "ln_2")
            layer["mlp_norm"] = normed2
            hidden = self.gelu_tanh(normed2 @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"])
            layer["mlp_hidden"] = hidden
            mlp = hidden @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
            layer["mlp_output"] = mlp
            x = x + mlp
            layer["residual_after_mlp"] = x
            out["layers"].append(layer)
        final = self.layer_norm(x, "ln_f")
        out["final_norm"] = final
        out["logits"] = final @ self.unembedding.T  # (n, vocab)
        return out


def to_json(value):
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bool:
            return value.tolist()
        return value.double().tolist()
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value


# ---- self-check ----


def second_formulation(model, ids):
    """The same GPT-2 from torch.nn modules: (logits, [per layer (n_heads, n, n) α],
    [per layer residual after the MLP])."""
    d, dt = model.d, model.dtype
    w = model.w

    def layer_norm(prefix):
        ln = torch.nn.LayerNorm(d, eps=model.eps).to(dt)
        ln.weight.data = w[prefix + ".weight"].clone()
        ln.bias.data = w[prefix + ".bias"].clone()
        return ln

    def linear(weight_in_out, bias):
        lin = torch.nn.Linear(weight_in_out.shape[0], weight_in_out.shape[1]).to(dt)
        lin.weight.data = weight_in_out.T.clone()  # nn.Linear keeps (out, in)
        lin.bias.data = bias.clone()
        return lin

    n = len(ids)
    with torch.no_grad():
        x = torch.nn.functional.embedding(torch.tensor(ids), w["wte.weight"])
        x = x + torch.nn.functional.embedding(torch.arange(n), w["wpe.weight"])
        x = x.unsqueeze(0)  # (1, n, d)
        hidden_mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True: hidden
        alphas, residuals = [], []
        for i in range(model.layers):
            h = f"h.{i}."
            mha = torch.nn.MultiheadAttention(d, model.heads, bias=True, batch_first=True).to(dt)
            mha.in_proj_weight.data = w[h + "attn.c_attn.weight"].T.clone()  # (3d, d): [q; k; v]
            mha.in_proj_bias.data = w[h + "attn.c_attn.bias"].clone()
            mha.out_proj.weight.data = w[h + "attn.c_proj.weight"].T.clone()
            mha.out_proj.bias.data = w[h + "attn.c_proj.bias"].clone()
            mha.eval()
            normed = layer_norm(h + "ln_1")(x)
            attn, alpha = mha(normed, normed, normed, attn_mask=hidden_mask, need_weights=True,
                              average_attn_weights=False)
            x = x + attn
            mlp = torch.nn.Sequential(layer_norm(h + "ln_2"),
                                      linear(w[h + "mlp.c_fc.weight"], w[h + "mlp.c_fc.bias"]),
                                      torch.nn.GELU(approximate="tanh"),
                                      linear(w[h + "mlp.c_proj.weight"], w[h + "mlp.c_proj.bias"]))
            x = x + mlp(x)
            alphas.append(alpha[0])
            residuals.append(x[0])
        logits = torch.nn.functional.linear(layer_norm("ln_f")(x), model.unembedding)
    return logits[0], alphas, residuals


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"  ok: {what}")


def self_check():
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import write_tiny_gpt2 as writer

    print("bfloat16 rounding by hand:")
    bits = writer.round_to_bfloat16_bits(np.array([1.0, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, -2.0,
                                                   3.140625], dtype=np.float32))
    check(list(bits) == [0x3F80, 0x3F80, 0x3F82, 0xC000, 0x4049],
          "1, 1+2^-8 (a tie: to even), 1+3·2^-8 (a tie: up to even), -2, 3.140625")

    with tempfile.TemporaryDirectory() as tmp:
        print("the reader gives back what the writer stored:")
        for dtype in ("F32", "F16", "BF16"):
            for prefix in (False, True):
                folder = pathlib.Path(tmp) / f"{dtype}-{prefix}"
                _, stored = writer.write_tiny_gpt2(folder, seed=3, dtype=dtype, prefix=prefix,
                                                   mask_buffers=True, lm_head=prefix)
                model = Gpt2(folder)
                same = all(torch.equal(model.w[n], torch.tensor(a, dtype=torch.float64))
                           for n, a in stored.items())
                check(same and set(stored) <= set(model.w),
                      f"{dtype}, {'prefixed' if prefix else 'unprefixed'}: every tensor exact")

        print("against torch.nn (LayerNorm, MultiheadAttention, GELU tanh, Linear):")
        for dtype, seed, layers, heads in (("F32", 1, 2, 4), ("F16", 2, 3, 2), ("BF16", 5, 1, 1)):
            folder = pathlib.Path(tmp) / f"nn-{dtype}"
            writer.write_tiny_gpt2(folder, seed=seed, dtype=dtype, layers=layers, heads=heads,
                                   d_model=16, vocab=23, positions=12)
            model = Gpt2(folder)
            ids = [int(t) for t in np.random.default_rng(seed).integers(0, 23, size=9)]
            ours = model.forward(ids)
            logits, alphas, residuals = second_formulation(model, ids)
            worst_logit = (ours["logits"] - logits).abs().max().item()
            worst_alpha = max((torch.stack([hd["weights"] for hd in layer["heads"]]) - a).abs().max().item()
                              for layer, a in zip(ours["layers"], alphas))
            worst_residual = max((layer["residual_after_mlp"] - r).abs().max().item()
                                 for layer, r in zip(ours["layers"], residuals))
            check(worst_logit < 1e-10 and worst_alpha < 1e-12 and worst_residual < 1e-10,
                  f"{dtype}, {layers} layers × {heads} heads: logits within {worst_logit:.1e}, "
                  f"α within {worst_alpha:.1e}, residuals within {worst_residual:.1e}")
            for layer in ours["layers"]:
                for hd in layer["heads"]:
                    a = hd["weights"]
                    assert torch.allclose(a.sum(dim=-1), torch.ones(len(ids), dtype=a.dtype))
                    assert (a.triu(diagonal=1) == 0).all() and a[0, 0] == 1
            check(True, f"{dtype}: every α row sums to 1, nothing above the diagonal")

        print("a case worked out by hand (d_model 2, one head, two tokens):")
        folder = pathlib.Path(tmp) / "hand"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(
            {"n_embd": 2, "n_head": 1, "n_layer": 1, "n_positions": 2, "vocab_size": 2,
             "layer_norm_epsilon": 1e-5}))
        zeros2, ones2 = np.zeros(2, np.float32), np.ones(2, np.float32)
        eye = np.eye(2, dtype=np.float32)
        c_attn = np.concatenate([eye, eye, eye], axis=1)  # q = k = v = ln_1(x)
        tensors = [("wte.weight", "F32", np.array([[1, 0], [0, 1]], np.float32)),
                   ("wpe.weight", "F32", np.zeros((2, 2), np.float32)),
                   ("h.0.ln_1.weight", "F32", ones2), ("h.0.ln_1.bias", "F32", zeros2),
                   ("h.0.attn.c_attn.weight", "F32", c_attn),
                   ("h.0.attn.c_attn.bias", "F32", np.zeros(6, np.float32)),
                   ("h.0.attn.c_proj.weight", "F32", eye), ("h.0.attn.c_proj.bias", "F32", zeros2),
                   ("h.0.ln_2.weight", "F32", ones2), ("h.0.ln_2.bias", "F32", zeros2),
                   ("h.0.mlp.c_fc.weight", "F32", np.zeros((2, 8), np.float32)),
                   ("h.0.mlp.c_fc.bias", "F32", np.zeros(8, np.float32)),
                   ("h.0.mlp.c_proj.weight", "F32", np.zeros((8, 2), np.float32)),
                   ("h.0.mlp.c_proj.bias", "F32", zeros2),
                   ("ln_f.weight", "F32", ones2), ("ln_f.bias", "F32", zeros2)]
        writer.write_safetensors(folder / "model.safetensors", tensors)
        out = Gpt2(folder).forward([0, 1])
        # Token 0 = (1, 0): mean ½, variance ¼, so LayerNorm gives (½, −½)/√(¼ + 1e-5) = (s, −s)
        # with s = ½/√(¼ + 1e-5); token 1 gives (−s, s).
        s = 0.5 / math.sqrt(0.25 + 1e-5)
        head = out["layers"][0]["heads"][0]
        check(torch.allclose(head["q"], torch.tensor([[s, -s], [-s, s]], dtype=torch.float64)),
              "q = k = v = LayerNorm(x) = [[s, -s], [-s, s]], s = ½/√(¼ + 1e-5)")
        # Query 1 · keys: (−s, s)·(s, −s) = −2s², (−s, s)·(−s, s) = 2s²; scaled by 1/√2.
        check(torch.allclose(head["scores"][1], torch.tensor([-2 * s * s, 2 * s * s], dtype=torch.float64)),
              "query 1's raw scores: -2s², 2s²")
        e = math.exp(-4 * s * s / math.sqrt(2))  # softmax of (−a, a) = (e^{−2a}, 1) / (1 + e^{−2a})
        check(torch.allclose(head["weights"][1], torch.tensor([e / (1 + e), 1 / (1 + e)], dtype=torch.float64)),
              f"query 1's α: softmax(±2s²/√2) = ({e / (1 + e):.6f}, {1 / (1 + e):.6f})")
        check(head["weights"][0].tolist() == [1.0, 0.0], "query 0 sees only itself: α = (1, 0)")
    print("self-check passed")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", help="a Hugging Face GPT-2 folder")
    parser.add_argument("--tokens", help="token ids, comma-separated")
    parser.add_argument("-o", "--output", help="write the JSON here (default: standard output)")
    parser.add_argument("--self-check", action="store_true")
    args = parser.parse_args(argv)
    if args.self_check:
        return self_check()
    if not args.folder or not args.tokens:
        parser.error("give a FOLDER and --tokens (or --self-check)")
    model = Gpt2(args.folder)
    ids = [int(t) for t in args.tokens.split(",") if t.strip()]
    vocab = model.w["wte.weight"].shape[0]
    positions = model.w["wpe.weight"].shape[0]
    if not ids or any(not 0 <= t < vocab for t in ids) or len(ids) > positions:
        parser.error(f"token ids must be 0..{vocab - 1}, at most {positions} of them")
    with torch.no_grad():
        result = to_json(model.forward(ids))
    text = json.dumps(result)
    if args.output:
        pathlib.Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
