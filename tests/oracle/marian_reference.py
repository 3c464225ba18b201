#!/usr/bin/python3
"""An independent Marian (MarianMTModel) and BART (BartForConditionalGeneration) in plain PyTorch,
for checking the engine's encoder–decoder forward pass layer by layer.

Written from "Attention Is All You Need" (Vaswani et al., 2017), Marian NMT's transformer and
Hugging Face's modeling_marian.py definitions; it shares no code with AttnViz: its safetensors
reader is gpt2_reference.py's, its config reading and its forward pass (float64) are its own.
It reads a Hugging Face Marian folder (config.json + model.safetensors; F32, F16 or BF16; names
with "model."; lm_head.weight when present, else the shared embeddings) and gives every
intermediate for source ids and the decoder's input ids (decoder_start_token_id first), in
gpt2_reference.py's layout, a stack for each side:

  {"source_tokens", "encoder": {"embedding": (n_s, d), "layers": [layer]},
   "tokens", "embedding": (n_t, d), "layers": [layer with "cross_heads" ...], "logits"}
  layer: {"attention_norm": (n, d) the layer's input (Marian norms after, not before),
          "heads": [{"q", "k", "v": (n, d_head), "scores": (n, n) raw q·k, "scaled_scores",
                     "mask": (n, n) true = seen, "weights": α, "output": α·v (n, d_head)}],
          "attention_output": (n, d), "residual_after_attention": LayerNorm(x + attn),
          decoder only: "cross_heads": [{"q": (n_t, d_head), "k", "v": (n_s, d_head),
                     "scores", "scaled_scores", "weights": (n_t, n_s), "output"}],
          "cross_attention_output": (n_t, d), "residual_after_cross": LayerNorm(x + cross),
          "mlp_hidden": (n, d_ff) after the activation, "mlp_output": (n, d),
          "residual_after_mlp": LayerNorm(x + mlp)}

The math (nn.Linear weights (out, in): y = x Wᵀ + b):
  x = shared[ids] · √d (scale_embedding) + P[0..n), P[p, j] = sin(p / 10000^(2j/d)) for
      j < d/2 and cos(p / 10000^(2(j − d/2)/d)) after (not interleaved)
  encoder layer: a = LN(x + out(concat_h softmax(q_h k_hᵀ / √d_head) v_h)), x = LN(a + fc2(act(fc1 a)))
  decoder layer: the same with the self-attention causal, and between the two a cross-attention
                 c = LN(a + out(concat_h softmax(q_h(a) k_h(mem)ᵀ / √d_head) v_h(mem))), mem the
                 encoder's last output
  logits = x · sharedᵀ + final_logits_bias;  act: swish (SiLU), gelu (erf), relu.
  BART (model_type "bart"): x = LN_emb(shared[ids] · scale + E_pos[2 .. n + 2)), each stack its own
  learned table E_pos and norm (layernorm_embedding); GELU unless the config says otherwise.

Usage:
  /usr/bin/python3 tests/oracle/marian_reference.py FOLDER --source 5,6,0 --tokens 9,5 [-o OUT]
  /usr/bin/python3 tests/oracle/marian_reference.py --self-check
--self-check builds tiny random models and checks this forward pass against a second
formulation built from torch.nn modules (nn.TransformerEncoderLayer and
nn.TransformerDecoderLayer with norm_first=False, nn.Linear), and that a deliberately wrong
second formulation (norms before the sublayers) disagrees.
"""

import argparse
import json
import math
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gpt2_reference  # noqa: E402  (its safetensors reader and to_json)

ACTIVATIONS = {"swish": torch.nn.functional.silu, "silu": torch.nn.functional.silu,
               "gelu": torch.nn.functional.gelu, "relu": torch.nn.functional.relu}


def sinusoids(n_positions, d, dtype=torch.float64):
    """Marian's position table: sin in the first half of each row, cos in the second."""
    table = torch.zeros(n_positions, d, dtype=dtype)
    for p in range(n_positions):
        for j in range(d // 2):
            angle = p / 10000.0 ** (2.0 * j / d)
            table[p, j] = math.sin(angle)
            table[p, d // 2 + j] = math.cos(angle)
    return table


class Marian:
    def __init__(self, folder=None, dtype=torch.float64, config=None, weights=None):
        if folder is not None:
            folder = pathlib.Path(folder)
            if folder.suffix == ".safetensors":
                folder = folder.parent
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            raw = gpt2_reference.read_safetensors(folder / "model.safetensors")
            weights = {name: torch.tensor(array, dtype=dtype) for name, array in raw.items()}
        self.d = config["d_model"]
        self.encoder_layers = config["encoder_layers"]
        self.decoder_layers = config["decoder_layers"]
        self.encoder_heads = config["encoder_attention_heads"]
        self.decoder_heads = config["decoder_attention_heads"]
        self.scale = math.sqrt(self.d) if config.get("scale_embedding", False) else 1.0
        # BART: learned positions from row 2 of each stack's table, a LayerNorm of the embeddings,
        # GELU by default.
        self.bart = config.get("model_type") == "bart"
        self.activation = ACTIVATIONS[config.get("activation_function",
                                                 "gelu" if self.bart else "swish")]
        self.w = {(n[len("model."):] if n.startswith("model.") else n): t
                  for n, t in weights.items()}
        self.embeddings = self.w["shared.weight"]  # (vocab, d)
        self.unembedding = self.w.get("lm_head.weight", self.embeddings)
        self.bias = self.w.get("final_logits_bias",
                               torch.zeros(1, self.embeddings.shape[0], dtype=dtype))[0]
        self.positions = sinusoids(config["max_position_embeddings"], self.d, dtype)
        self.position_offset = 2
        self.dtype = dtype

    def layer_norm(self, x, prefix):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return ((x - mean) / torch.sqrt(var + 1e-5) * self.w[prefix + ".weight"]
                + self.w[prefix + ".bias"])

    def dense(self, x, prefix):
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    def embed(self, ids, side="encoder"):
        x = self.embeddings[torch.tensor(ids)] * self.scale
        if not self.bart:
            return x + self.positions[:len(ids)]
        table = self.w[side + ".embed_positions.weight"]
        x = x + table[self.position_offset:self.position_offset + len(ids)]
        return self.layer_norm(x, side + ".layernorm_embedding")

    def attention(self, x_query, x_key, prefix, n_heads, seen, head_mask):
        """-> (per head dicts, the output (n_q, d)). seen (n_q, n_k) true where a key is seen."""
        d_head = self.d // n_heads
        q_all = self.dense(x_query, prefix + ".q_proj")  # (n_q, d)
        k_all = self.dense(x_key, prefix + ".k_proj")  # (n_k, d)
        v_all = self.dense(x_key, prefix + ".v_proj")
        heads, outputs = [], []
        for head in range(n_heads):
            cols = slice(head * d_head, (head + 1) * d_head)
            q, k, v = q_all[:, cols], k_all[:, cols], v_all[:, cols]
            scores = q @ k.T  # (n_q, n_k)
            scaled = (scores / math.sqrt(d_head)).masked_fill(~seen, float("-inf"))
            alpha = torch.softmax(scaled, dim=-1)
            head_out = (alpha @ v) * head_mask.get(head, 1.0)
            heads.append({"q": q, "k": k, "v": v, "scores": scores, "scaled_scores": scaled,
                          "mask": seen, "weights": alpha, "output": head_out})
            outputs.append(head_out)
        return heads, self.dense(torch.cat(outputs, dim=-1), prefix + ".out_proj")

    def self_attention(self, x, at, n_heads, seen, head_mask, layer):
        """The self-attention sublayer and its norm after, its intermediates into `layer`."""
        layer["heads"], attn = self.attention(x, x, at + "self_attn", n_heads, seen, head_mask)
        layer["attention_output"] = attn
        x = self.layer_norm(x + attn, at + "self_attn_layer_norm")
        layer["residual_after_attention"] = x
        return x

    def feed_forward(self, x, at, layer):
        hidden = self.activation(self.dense(x, at + "fc1"))
        layer["mlp_hidden"] = hidden
        mlp = self.dense(hidden, at + "fc2")
        layer["mlp_output"] = mlp
        x = self.layer_norm(x + mlp, at + "final_layer_norm")
        layer["residual_after_mlp"] = x
        return x

    def forward(self, source, tokens, ablate=()):
        """ablate: (stack, layer, head) with stack "encoder", "decoder" or "cross": that head's
        output zeroed."""
        mask_of = {}
        for stack, layer, head in ablate:
            mask_of.setdefault((stack, layer), {})[head] = 0.0
        n_s, n_t = len(source), len(tokens)
        x = self.embed(source, "encoder")  # (n_s, d)
        encoder = {"embedding": x, "layers": []}
        everything = torch.ones(n_s, n_s, dtype=torch.bool)
        for i in range(self.encoder_layers):
            at = f"encoder.layers.{i}."
            layer = {"attention_norm": x}
            x = self.self_attention(x, at, self.encoder_heads, everything,
                                    mask_of.get(("encoder", i), {}), layer)
            x = self.feed_forward(x, at, layer)
            encoder["layers"].append(layer)
        memory = x  # (n_s, d)

        x = self.embed(tokens, "decoder")  # (n_t, d)
        out = {"source_tokens": list(source), "encoder": encoder, "tokens": list(tokens),
               "embedding": x, "layers": []}
        causal = torch.ones(n_t, n_t, dtype=torch.bool).tril()
        all_source = torch.ones(n_t, n_s, dtype=torch.bool)
        for i in range(self.decoder_layers):
            at = f"decoder.layers.{i}."
            layer = {"attention_norm": x}
            x = self.self_attention(x, at, self.decoder_heads, causal,
                                    mask_of.get(("decoder", i), {}), layer)
            layer["cross_heads"], cross = self.attention(x, memory, at + "encoder_attn",
                                                         self.decoder_heads, all_source,
                                                         mask_of.get(("cross", i), {}))
            layer["cross_attention_output"] = cross
            x = self.layer_norm(x + cross, at + "encoder_attn_layer_norm")
            layer["residual_after_cross"] = x
            x = self.feed_forward(x, at, layer)
            out["layers"].append(layer)
        out["logits"] = x @ self.unembedding.T + self.bias  # (n_t, vocab)
        return out


# ---- self-check ----


def tiny_weights(seed, vocab, d, ffn, encoder_layers, decoder_layers, scale=0.3):
    generator = torch.Generator().manual_seed(seed)

    def random(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64) * scale

    w = {"model.shared.weight": random(vocab, d), "final_logits_bias": random(1, vocab)}
    for side, count in (("encoder", encoder_layers), ("decoder", decoder_layers)):
        for i in range(count):
            at = f"model.{side}.layers.{i}."
            attentions = ["self_attn"] + (["encoder_attn"] if side == "decoder" else [])
            for attention in attentions:
                for part in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    w[f"{at}{attention}.{part}.weight"] = random(d, d)
                    w[f"{at}{attention}.{part}.bias"] = random(d)
            for norm in [a + "_layer_norm" for a in attentions] + ["final_layer_norm"]:
                w[f"{at}{norm}.weight"] = 1.0 + random(d)
                w[f"{at}{norm}.bias"] = random(d)
            w[f"{at}fc1.weight"], w[f"{at}fc1.bias"] = random(ffn, d), random(ffn)
            w[f"{at}fc2.weight"], w[f"{at}fc2.bias"] = random(d, ffn), random(d)
    return w


def second_formulation(model, source, tokens, norm_first=False):
    """The same Marian from torch.nn modules: the logits."""
    d, dt, w = model.d, model.dtype, model.w

    def load_attention(module, prefix):
        module.in_proj_weight.data = torch.cat([w[f"{prefix}.{p}_proj.weight"]
                                                for p in ("q", "k", "v")])
        module.in_proj_bias.data = torch.cat([w[f"{prefix}.{p}_proj.bias"]
                                              for p in ("q", "k", "v")])
        module.out_proj.weight.data = w[f"{prefix}.out_proj.weight"].clone()
        module.out_proj.bias.data = w[f"{prefix}.out_proj.bias"].clone()

    def load_norm(module, prefix):
        module.weight.data = w[prefix + ".weight"].clone()
        module.bias.data = w[prefix + ".bias"].clone()

    def load_feed_forward(block, at):
        block.linear1.weight.data = w[at + "fc1.weight"].clone()
        block.linear1.bias.data = w[at + "fc1.bias"].clone()
        block.linear2.weight.data = w[at + "fc2.weight"].clone()
        block.linear2.bias.data = w[at + "fc2.bias"].clone()

    ffn = w["encoder.layers.0.fc1.weight"].shape[0]
    options = {"dim_feedforward": ffn, "dropout": 0.0, "activation": torch.nn.functional.silu,
               "layer_norm_eps": 1e-5, "batch_first": True, "norm_first": norm_first}
    embedding = torch.nn.Embedding.from_pretrained(model.embeddings)
    x = (embedding(torch.tensor(source)) * model.scale + model.positions[:len(source)])[None]
    for i in range(model.encoder_layers):
        at = f"encoder.layers.{i}."
        block = torch.nn.TransformerEncoderLayer(d, model.encoder_heads, **options).to(dt)
        load_attention(block.self_attn, at + "self_attn")
        load_norm(block.norm1, at + "self_attn_layer_norm")
        load_norm(block.norm2, at + "final_layer_norm")
        load_feed_forward(block, at)
        x = block.eval()(x)
    memory = x
    y = (embedding(torch.tensor(tokens)) * model.scale + model.positions[:len(tokens)])[None]
    causal = torch.nn.Transformer.generate_square_subsequent_mask(len(tokens)).to(dt)
    for i in range(model.decoder_layers):
        at = f"decoder.layers.{i}."
        block = torch.nn.TransformerDecoderLayer(d, model.decoder_heads, **options).to(dt)
        load_attention(block.self_attn, at + "self_attn")
        load_attention(block.multihead_attn, at + "encoder_attn")
        load_norm(block.norm1, at + "self_attn_layer_norm")
        load_norm(block.norm2, at + "encoder_attn_layer_norm")
        load_norm(block.norm3, at + "final_layer_norm")
        load_feed_forward(block, at)
        y = block.eval()(y, memory, tgt_mask=causal)
    return y[0] @ model.unembedding.T + model.bias


def self_check():
    failures = 0
    torch.set_grad_enabled(False)
    for name, (vocab, d, ffn, layers, heads) in {"one layer, 2 heads": (11, 8, 16, 1, 2),
                                                 "two layers, 4 heads": (13, 16, 24, 2, 4)}.items():
        config = {"d_model": d, "encoder_layers": layers, "decoder_layers": layers,
                  "encoder_attention_heads": heads, "decoder_attention_heads": heads,
                  "scale_embedding": True, "activation_function": "swish",
                  "max_position_embeddings": 16}
        model = Marian(config=config, weights=tiny_weights(3, vocab, d, ffn, layers, layers))
        source, tokens = [4, 7, 2, 9, 0], [10, 3, 5, 8]
        mine = model.forward(source, tokens)
        difference = (mine["logits"] - second_formulation(model, source, tokens)).abs().max()
        wrong = (mine["logits"] - second_formulation(model, source, tokens,
                                                     norm_first=True)).abs().max()
        # The decoder's self-attention is causal; its cross-attention sees every source token;
        # a later source token changes the first target row (the encoder looks both ways).
        later = mine["layers"][0]["heads"][0]["weights"][0, 1:].sum().item()
        cross_rows = mine["layers"][0]["cross_heads"][0]["weights"].sum(-1)
        changed = model.forward(source[:-1] + [1], tokens)["logits"][0]
        moved = (changed - mine["logits"][0]).abs().max().item()
        ok = (difference < 1e-9 and wrong > 1e-3 and later == 0.0
              and torch.allclose(cross_rows, torch.ones_like(cross_rows)) and moved > 1e-6)
        failures += not ok
        print(f"{name}: largest difference from torch.nn's modules {difference:.1e}; against "
              f"norms before the sublayers {wrong:.2g}; first target row's weight on later "
              f"targets {later:.2f}; a changed last source token moves the first target's "
              f"logits by {moved:.2g}: {'ok' if ok else 'FAILED'}")
    print("marian reference self-check: " + ("ok" if failures == 0 else "FAILED"))
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?")
    parser.add_argument("--source", help="the source's ids, comma-separated (with </s>)")
    parser.add_argument("--tokens", help="the decoder's input ids, comma-separated (its start "
                        "token first)")
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--self-check", action="store_true")
    args = parser.parse_args(argv)
    if args.self_check:
        return self_check()
    if not args.folder or not args.source or not args.tokens:
        parser.error("FOLDER, --source and --tokens are needed (or --self-check)")
    source = [int(t) for t in args.source.split(",")]
    tokens = [int(t) for t in args.tokens.split(",")]
    with torch.no_grad():
        out = Marian(args.folder).forward(source, tokens)
    text = json.dumps(gpt2_reference.to_json(out))
    if args.output == "-":
        print(text)
    else:
        pathlib.Path(args.output).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
