#!/usr/bin/python3
"""An independent BERT in plain PyTorch, for checking the engine's forward pass layer by layer.

Written from the BERT paper (Devlin et al., 2019) and Hugging Face's modeling_bert.py
definitions; it shares no code with AttnViz: its safetensors reader is gpt2_reference.py's, its
config reading and its forward pass (float64) are its own. It reads a Hugging Face BERT folder
(config.json + model.safetensors; F32, F16 or BF16; BertModel's names, or BertForMaskedLM's
with "bert." and the MLM head; LayerNorms named .weight/.bias or .gamma/.beta) and gives every
intermediate for token ids and token types, in gpt2_reference.py's layout:

  {"tokens", "embedding": (n, d) after the embeddings' LayerNorm,
   "layers": [{"attention_norm": (n, d) the layer's input (BERT norms after, not before),
               "heads": [{"q", "k", "v": (n, d_head), "scores": (n, n) raw q·k,
                          "scaled_scores", "mask": (n, n) all true (both ways),
                          "weights": α (n, n), "output": α·v (n, d_head)}],
               "attention_output": (n, d), "residual_after_attention": LayerNorm(x + attn),
               "mlp_output": (n, d), "residual_after_mlp": LayerNorm(x' + mlp)}],
   "final_norm": (n, d) the MLM head's transform (or the last layer's output without a head),
   "logits": (n, vocab) (only with the MLM head)}

The math (nn.Linear weights (out, in): y = x Wᵀ + b):
  x = LayerNorm_e(word[ids] + position[0..n) + token_type[types])
  per layer: a = LayerNorm_1(x + dense(concat_h softmax(q_h k_hᵀ / √d_head) v_h))
             x = LayerNorm_2(a + dense_out(gelu(dense_in(a))))      (gelu with erf)
  final = LayerNorm_h(gelu(dense_h(x))), logits = final · word_embeddingsᵀ (or the decoder's
  own weight) + cls.predictions.bias.

Usage:
  /usr/bin/python3 tests/oracle/bert_reference.py FOLDER --tokens 2,7,8,3 [--types 0,0,0,0]
  /usr/bin/python3 tests/oracle/bert_reference.py --self-check
--self-check writes tiny models with write_tiny_bert.py (both layouts, every dtype) and checks
this forward pass against a second formulation built from torch.nn modules
(nn.TransformerEncoderLayer with norm_first=False and GELU, nn.LayerNorm, nn.Linear), and that
a deliberately wrong second formulation (norms before the sublayers) disagrees.
"""

import argparse
import json
import math
import pathlib
import sys
import tempfile

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gpt2_reference  # noqa: E402  (its safetensors reader and to_json)


class Bert:
    def __init__(self, folder, dtype=torch.float64):
        folder = pathlib.Path(folder)
        if folder.suffix == ".safetensors":
            folder = folder.parent
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.d = config["hidden_size"]
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        self.d_head = self.d // self.heads
        self.eps = config.get("layer_norm_eps", 1e-12)
        self.activation = config.get("hidden_act", "gelu")
        if self.activation not in ("gelu", "gelu_new", "gelu_pytorch_tanh"):
            raise ValueError(f"hidden_act {self.activation} not modelled here")
        raw = gpt2_reference.read_safetensors(folder / "model.safetensors")
        self.w = {}
        for name, array in raw.items():
            bare = name[len("bert."):] if name.startswith("bert.") else name
            bare = bare.replace("LayerNorm.gamma", "LayerNorm.weight").replace(
                "LayerNorm.beta", "LayerNorm.bias")
            self.w[bare] = torch.tensor(array, dtype=dtype)
        self.has_head = "cls.predictions.bias" in self.w
        self.decoder = self.w.get("cls.predictions.decoder.weight",
                                  self.w["embeddings.word_embeddings.weight"])  # (V, d)
        self.dtype = dtype

    def layer_norm(self, x, prefix):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return ((x - mean) / torch.sqrt(var + self.eps) * self.w[prefix + ".weight"]
                + self.w[prefix + ".bias"])

    def dense(self, x, prefix):
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    def gelu(self, x):
        if self.activation == "gelu":
            return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))

    def forward(self, ids, head_mask=None, types=None):
        """Every intermediate (module docstring). head_mask[(layer, head)] multiplies that head's
        output (0 removes it); types: each token's type (default all 0)."""
        head_mask = head_mask or {}
        n = len(ids)
        types = types or [0] * n
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][torch.tensor(ids)]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][torch.tensor(types)])
        x = self.layer_norm(x, "embeddings.LayerNorm")  # (n, d)
        out = {"tokens": list(ids), "embedding": x, "layers": []}
        seen = torch.ones(n, n, dtype=torch.bool)  # both ways: every key
        for i in range(self.layers):
            at = f"encoder.layer.{i}."
            layer = {"attention_norm": x}
            q_all = self.dense(x, at + "attention.self.query")  # (n, d)
            k_all = self.dense(x, at + "attention.self.key")
            v_all = self.dense(x, at + "attention.self.value")
            heads, outputs = [], []
            for head in range(self.heads):
                cols = slice(head * self.d_head, (head + 1) * self.d_head)
                q, k, v = q_all[:, cols], k_all[:, cols], v_all[:, cols]  # (n, d_head)
                scores = q @ k.T  # (n_query, n_key)
                scaled = scores / math.sqrt(self.d_head)
                alpha = torch.softmax(scaled, dim=-1)
                head_out = (alpha @ v) * head_mask.get((i, head), 1.0)
                heads.append({"q": q, "k": k, "v": v, "scores": scores, "scaled_scores": scaled,
                              "mask": seen, "weights": alpha, "output": head_out})
                outputs.append(head_out)
            layer["heads"] = heads
            attn = self.dense(torch.cat(outputs, dim=-1), at + "attention.output.dense")
            layer["attention_output"] = attn
            x = self.layer_norm(x + attn, at + "attention.output.LayerNorm")
            layer["residual_after_attention"] = x
            hidden = self.gelu(self.dense(x, at + "intermediate.dense"))
            layer["mlp_hidden"] = hidden
            mlp = self.dense(hidden, at + "output.dense")
            layer["mlp_output"] = mlp
            x = self.layer_norm(x + mlp, at + "output.LayerNorm")
            layer["residual_after_mlp"] = x
            out["layers"].append(layer)
        if not self.has_head:
            out["final_norm"] = x
            return out
        transformed = self.gelu(self.dense(x, "cls.predictions.transform.dense"))
        final = self.layer_norm(transformed, "cls.predictions.transform.LayerNorm")
        out["final_norm"] = final
        out["logits"] = final @ self.decoder.T + w["cls.predictions.bias"]  # (n, vocab)
        return out


# ---- self-check ----


def second_formulation(model, ids, types, norm_first=False):
    """The same BERT from torch.nn modules: (the last hidden states, the logits or None)."""
    d, dt, w = model.d, model.dtype, model.w

    def layer_norm(prefix):
        ln = torch.nn.LayerNorm(d, eps=model.eps).to(dt)
        ln.weight.data = w[prefix + ".weight"].clone()
        ln.bias.data = w[prefix + ".bias"].clone()
        return ln

    embed = (torch.nn.functional.embedding(torch.tensor(ids), w["embeddings.word_embeddings.weight"])
             + w["embeddings.position_embeddings.weight"][:len(ids)]
             + torch.nn.functional.embedding(torch.tensor(types),
                                             w["embeddings.token_type_embeddings.weight"]))
    x = layer_norm("embeddings.LayerNorm")(embed).unsqueeze(0)  # (1, n, d)
    for i in range(model.layers):
        at = f"encoder.layer.{i}."
        block = torch.nn.TransformerEncoderLayer(
            d, model.heads, dim_feedforward=w[at + "intermediate.dense.weight"].shape[0],
            dropout=0.0, activation="gelu", layer_norm_eps=model.eps, batch_first=True,
            norm_first=norm_first).to(dt)
        block.self_attn.in_proj_weight.data = torch.cat(
            [w[at + f"attention.self.{p}.weight"] for p in ("query", "key", "value")])
        block.self_attn.in_proj_bias.data = torch.cat(
            [w[at + f"attention.self.{p}.bias"] for p in ("query", "key", "value")])
        block.self_attn.out_proj.weight.data = w[at + "attention.output.dense.weight"].clone()
        block.self_attn.out_proj.bias.data = w[at + "attention.output.dense.bias"].clone()
        block.linear1.weight.data = w[at + "intermediate.dense.weight"].clone()
        block.linear1.bias.data = w[at + "intermediate.dense.bias"].clone()
        block.linear2.weight.data = w[at + "output.dense.weight"].clone()
        block.linear2.bias.data = w[at + "output.dense.bias"].clone()
        block.norm1 = layer_norm(at + "attention.output.LayerNorm")
        block.norm2 = layer_norm(at + "output.LayerNorm")
        block.eval()
        x = block(x)
    x = x[0]
    if not model.has_head:
        return x, None
    dense = torch.nn.Linear(d, d).to(dt)
    dense.weight.data = w["cls.predictions.transform.dense.weight"].clone()
    dense.bias.data = w["cls.predictions.transform.dense.bias"].clone()
    head = torch.nn.Sequential(dense, torch.nn.GELU(), layer_norm("cls.predictions.transform.LayerNorm"))
    return x, head(x) @ model.decoder.T + w["cls.predictions.bias"]


def self_check():
    import write_tiny_bert
    failures = 0
    torch.set_grad_enabled(False)
    with tempfile.TemporaryDirectory(prefix="attnviz-bert-reference-") as tmp:
        for layout, dtype, options in (("masked-lm", "F32", {}),
                                       ("masked-lm", "F16", {"decoder": True}),
                                       ("masked-lm", "BF16", {"old_norm_names": True}),
                                       ("masked-lm", "F32", {"untied": True}),
                                       ("model", "F32", {})):
            folder = pathlib.Path(tmp) / f"{layout}-{dtype}-{'-'.join(options) or 'plain'}"
            write_tiny_bert.write_tiny_bert(folder, seed=3, dtype=dtype, layout=layout, **options)
            model = Bert(folder)
            ids, types = [2, 7, 8, 9, 3, 10, 11, 3], [0, 0, 0, 0, 0, 1, 1, 1]
            mine = model.forward(ids, types=types)
            hidden, logits = second_formulation(model, ids, types)
            difference = (mine["layers"][-1]["residual_after_mlp"] - hidden).abs().max().item()
            if logits is not None:
                difference = max(difference, (mine["logits"] - logits).abs().max().item())
            wrong_hidden, _ = second_formulation(model, ids, types, norm_first=True)
            wrong = (mine["layers"][-1]["residual_after_mlp"] - wrong_hidden).abs().max().item()
            # Both ways: a query sees the keys after it; the token types change the numbers.
            later = mine["layers"][0]["heads"][0]["weights"][0, 1:].sum().item()
            same_types = model.forward(ids)["layers"][-1]["residual_after_mlp"]
            typed = (same_types - mine["layers"][-1]["residual_after_mlp"]).abs().max().item()
            ok = difference < 1e-9 and wrong > 1e-3 and later > 0.01 and typed > 1e-3
            failures += not ok
            print(f"{folder.name}: largest difference from torch.nn's modules {difference:.1e}; "
                  f"against norms before the sublayers {wrong:.2g}; weight on later keys "
                  f"{later:.2f}; token types move the output by {typed:.2g}: "
                  f"{'ok' if ok else 'FAILED'}")
    print("bert reference self-check: " + ("ok" if failures == 0 else "FAILED"))
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?")
    parser.add_argument("--tokens", help="ids, comma-separated")
    parser.add_argument("--types", help="token types, comma-separated (default all 0)")
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--self-check", action="store_true")
    args = parser.parse_args(argv)
    if args.self_check:
        return self_check()
    if not args.folder or not args.tokens:
        parser.error("FOLDER and --tokens are needed (or --self-check)")
    ids = [int(t) for t in args.tokens.split(",")]
    types = [int(t) for t in args.types.split(",")] if args.types else None
    with torch.no_grad():
        out = Bert(args.folder).forward(ids, types=types)
    text = json.dumps(gpt2_reference.to_json(out))
    if args.output == "-":
        print(text)
    else:
        pathlib.Path(args.output).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
