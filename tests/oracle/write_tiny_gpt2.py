#!/usr/bin/python3
"""Writes a tiny random GPT-2 in Hugging Face's layout: a folder with config.json and
model.safetensors, seeded, for the engine's tests and for tests/oracle/gpt2_reference.py.

The safetensors file is written here byte by byte (8-byte little-endian header length, the JSON
header padded with spaces to a multiple of 8, then the tensors in C order), sharing no code
with the engine's reader. Conv1D weights are (in, out), as GPT-2 stores them.

Usage:
  /usr/bin/python3 tests/oracle/write_tiny_gpt2.py OUT_DIR [--seed 1] [--dtype F32|F16|BF16]
      [--prefix] [--d-model 16] [--heads 4] [--layers 2] [--vocab 23] [--positions 12]
      [--inner N] [--lm-head] [--mask-buffers] [--scale 0.3] [--tokenizer-from FOLDER]

--prefix names every tensor "transformer.<name>" (as GPT2LMHeadModel's files do);
--lm-head adds lm_head.weight, a copy of wte (the tied head, saved explicitly);
--mask-buffers adds h.{i}.attn.bias and h.{i}.attn.masked_bias (the causal mask buffers older
files hold; a reader must ignore them).
--tokenizer-from copies vocab.json and merges.txt from another GPT-2 folder (its vocabulary must
be no larger than --vocab), so that the folder opens as a model with its tokenizer.
Values are drawn from numpy's default_rng(seed): weights N(0, scale²) (--scale, 0.3 by default;
GPT-2's own initialization is 0.02), biases N(0, 0.1²), LayerNorm gains 1 + N(0, 0.1²), then
rounded to the dtype (F16, BF16: round to nearest even).

A GPT-2-small shape (124 M parameters, about 500 MB of F32), as tests/bench/model_compare.py
writes it:
  write_tiny_gpt2.py OUT --d-model 768 --heads 12 --layers 12 --vocab 50257 --positions 1024
      --scale 0.02 --tokenizer-from assets/models/gpt2-kjv-tiny
"""

import argparse
import json
import pathlib
import shutil
import struct
import sys

import numpy as np


def round_to_bfloat16_bits(values):
    """float32 array -> uint16 bfloat16 bits, rounded to nearest, ties to even."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def tensor_bytes(values, dtype):
    values = np.ascontiguousarray(values, dtype=np.float32)
    if dtype == "F32":
        return values.astype("<f4").tobytes()
    if dtype == "F16":
        return values.astype("<f2").tobytes()
    if dtype == "BF16":
        return round_to_bfloat16_bits(values).astype("<u2").tobytes()
    raise ValueError(f"unknown dtype {dtype}")


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype, numpy array)."""
    header, chunks, offset = {}, [], 0
    for name, dtype, array in tensors:
        raw = tensor_bytes(array, dtype)
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for raw in chunks:
            out.write(raw)


def tiny_gpt2(seed=1, d_model=16, heads=4, layers=2, vocab=23, positions=12, inner=None,
              scale=0.3):
    """The weights of a tiny GPT-2 as float32 arrays, by their names without a prefix."""
    rng = np.random.default_rng(seed)
    inner = inner or 4 * d_model

    def weight(*shape):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    def bias(n):
        return (0.1 * rng.standard_normal(n)).astype(np.float32)

    def gain(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    w = {"wte.weight": weight(vocab, d_model), "wpe.weight": weight(positions, d_model)}
    for i in range(layers):
        h = f"h.{i}."
        w[h + "ln_1.weight"] = gain(d_model)
        w[h + "ln_1.bias"] = bias(d_model)
        w[h + "attn.c_attn.weight"] = weight(d_model, 3 * d_model)
        w[h + "attn.c_attn.bias"] = bias(3 * d_model)
        w[h + "attn.c_proj.weight"] = weight(d_model, d_model)
        w[h + "attn.c_proj.bias"] = bias(d_model)
        w[h + "ln_2.weight"] = gain(d_model)
        w[h + "ln_2.bias"] = bias(d_model)
        w[h + "mlp.c_fc.weight"] = weight(d_model, inner)
        w[h + "mlp.c_fc.bias"] = bias(inner)
        w[h + "mlp.c_proj.weight"] = weight(inner, d_model)
        w[h + "mlp.c_proj.bias"] = bias(d_model)
    w["ln_f.weight"] = gain(d_model)
    w["ln_f.bias"] = bias(d_model)
    config = {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
        "n_embd": d_model, "n_head": heads, "n_layer": layers, "n_positions": positions,
        "n_ctx": positions, "vocab_size": vocab, "n_inner": None if inner == 4 * d_model else inner,
        "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
        "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
    }
    return config, w


def write_tiny_gpt2(out_dir, seed=1, dtype="F32", prefix=False, lm_head=False,
                    mask_buffers=False, **sizes):
    """Writes the folder; returns (config, weights as float32 arrays, rounded to the dtype)."""
    config, weights = tiny_gpt2(seed, **sizes)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = (lambda n: "transformer." + n) if prefix else (lambda n: n)
    tensors = [(name(n), dtype, a) for n, a in weights.items()]
    if mask_buffers:
        positions = config["n_positions"]
        causal = np.tril(np.ones((positions, positions), dtype=np.float32))
        for i in range(config["n_layer"]):
            tensors.append((name(f"h.{i}.attn.bias"), "F32", causal.reshape(1, 1, positions, positions)))
            tensors.append((name(f"h.{i}.attn.masked_bias"), "F32", np.array(-1e4, dtype=np.float32)))
    if lm_head:
        tensors.append(("lm_head.weight", dtype, weights["wte.weight"]))
    write_safetensors(out / "model.safetensors", tensors, {"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    # The values as stored: rounded to the dtype.
    stored = {}
    for n, a in weights.items():
        if dtype == "F16":
            stored[n] = a.astype(np.float16).astype(np.float32)
        elif dtype == "BF16":
            stored[n] = (round_to_bfloat16_bits(a).astype(np.uint32) << 16).view(np.float32)
        else:
            stored[n] = a
    return config, stored


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="F32")
    parser.add_argument("--prefix", action="store_true", help='names start with "transformer."')
    parser.add_argument("--d-model", type=int, default=16)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=23)
    parser.add_argument("--positions", type=int, default=12)
    parser.add_argument("--inner", type=int, default=None, help="the MLP's width (4 · d_model)")
    parser.add_argument("--lm-head", action="store_true", help="add lm_head.weight (= wte)")
    parser.add_argument("--mask-buffers", action="store_true",
                        help="add the h.{i}.attn.bias / masked_bias buffers")
    parser.add_argument("--scale", type=float, default=0.3, help="the weights' standard deviation")
    parser.add_argument("--tokenizer-from", default=None,
                        help="copy vocab.json and merges.txt from this GPT-2 folder")
    args = parser.parse_args(argv)
    if args.d_model % args.heads:
        parser.error("--d-model must be a multiple of --heads")
    if not args.scale > 0:
        parser.error("--scale must be positive")
    write_tiny_gpt2(args.out_dir, seed=args.seed, dtype=args.dtype, prefix=args.prefix,
                    lm_head=args.lm_head, mask_buffers=args.mask_buffers, d_model=args.d_model,
                    heads=args.heads, layers=args.layers, vocab=args.vocab,
                    positions=args.positions, inner=args.inner, scale=args.scale)
    if args.tokenizer_from:
        for name in ("vocab.json", "merges.txt"):
            shutil.copyfile(pathlib.Path(args.tokenizer_from) / name,
                            pathlib.Path(args.out_dir) / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
