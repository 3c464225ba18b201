#!/usr/bin/python3
"""Writes a tiny random BERT in Hugging Face's layout: a folder with config.json,
model.safetensors, vocab.txt and tokenizer_config.json, seeded, for the engine's tests and for
tests/oracle/bert_reference.py.

The safetensors file is written by write_tiny_gpt2.write_safetensors (byte by byte, sharing no
code with the engine's reader). Weights are stored as nn.Linear stores them, (out, in).

Layouts:
  --layout model     BertModel: names without a prefix, no MLM head, a pooler (which a reader
                     passes over)
  --layout masked-lm BertForMaskedLM: "bert." before the encoder's names, the MLM head
                     (cls.predictions.transform.*, cls.predictions.bias; with --decoder also
                     cls.predictions.decoder.weight, a copy of the word embeddings, and
                     cls.predictions.decoder.bias, a copy of cls.predictions.bias)
--old-norm-names names LayerNorms' parameters .gamma and .beta, as older checkpoints do.
--untied gives cls.predictions.decoder.weight values of its own (not the word embeddings').

Usage:
  /usr/bin/python3 tests/oracle/write_tiny_bert.py OUT_DIR [--seed 1] [--dtype F32|F16|BF16]
      [--layout model|masked-lm] [--decoder] [--untied] [--old-norm-names] [--d-model 16]
      [--heads 4] [--layers 2] [--positions 24] [--types 2] [--inner N] [--scale 0.3]
      [--hidden-act gelu] [--vocab N]

A bert-base-uncased shape (110 M parameters, about 440 MB of F32), as tests/bench/bert_compare.py
writes it:
  write_tiny_bert.py OUT --d-model 768 --heads 12 --layers 12 --positions 512 --vocab 30522
      --scale 0.02

The vocabulary (vocab.txt) is fixed: [PAD] [UNK] [CLS] [SEP] [MASK], then TINY_WORDS (whole
words and "##" pieces), lower case.
"""

import argparse
import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import write_tiny_gpt2  # noqa: E402

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TINY_WORDS = ["the", "cat", "sat", "on", "mat", "dog", "a", "god", "said", "let", "there", "be",
              "light", ".", ",", "!", "?", "play", "##ing", "##ed", "##s", "h", "##e", "猫",
              "cafe", "é", "ok", "and", "was"]
TINY_VOCAB = SPECIAL + TINY_WORDS


def tiny_bert(seed=1, d_model=16, heads=4, layers=2, positions=24, types=2, inner=None,
              scale=0.3, vocab=len(TINY_VOCAB), hidden_act="gelu"):
    """Config and weights (float32 arrays) by BertForMaskedLM's names without "bert."."""
    rng = np.random.default_rng(seed)
    inner = inner or 4 * d_model

    def weight(*shape):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    def bias(n):
        return (0.1 * rng.standard_normal(n)).astype(np.float32)

    def gain(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    w = {"embeddings.word_embeddings.weight": weight(vocab, d_model),
         "embeddings.position_embeddings.weight": weight(positions, d_model),
         "embeddings.token_type_embeddings.weight": weight(types, d_model),
         "embeddings.LayerNorm.weight": gain(d_model),
         "embeddings.LayerNorm.bias": bias(d_model)}
    for i in range(layers):
        at = f"encoder.layer.{i}."
        for part in ("query", "key", "value"):
            w[at + f"attention.self.{part}.weight"] = weight(d_model, d_model)
            w[at + f"attention.self.{part}.bias"] = bias(d_model)
        w[at + "attention.output.dense.weight"] = weight(d_model, d_model)
        w[at + "attention.output.dense.bias"] = bias(d_model)
        w[at + "attention.output.LayerNorm.weight"] = gain(d_model)
        w[at + "attention.output.LayerNorm.bias"] = bias(d_model)
        w[at + "intermediate.dense.weight"] = weight(inner, d_model)
        w[at + "intermediate.dense.bias"] = bias(inner)
        w[at + "output.dense.weight"] = weight(d_model, inner)
        w[at + "output.dense.bias"] = bias(d_model)
        w[at + "output.LayerNorm.weight"] = gain(d_model)
        w[at + "output.LayerNorm.bias"] = bias(d_model)
    head = {"cls.predictions.transform.dense.weight": weight(d_model, d_model),
            "cls.predictions.transform.dense.bias": bias(d_model),
            "cls.predictions.transform.LayerNorm.weight": gain(d_model),
            "cls.predictions.transform.LayerNorm.bias": bias(d_model),
            "cls.predictions.bias": bias(vocab)}
    pooler = {"pooler.dense.weight": weight(d_model, d_model), "pooler.dense.bias": bias(d_model)}
    config = {
        "architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": d_model,
        "num_hidden_layers": layers, "num_attention_heads": heads, "intermediate_size": inner,
        "vocab_size": vocab, "max_position_embeddings": positions, "type_vocab_size": types,
        "layer_norm_eps": 1e-12, "hidden_act": hidden_act, "position_embedding_type": "absolute",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "pad_token_id": 0,
    }
    return config, w, head, pooler


def write_vocab(out, size=len(TINY_VOCAB)):
    """TINY_VOCAB, then "[unused0]", "[unused1]", ... up to `size` tokens (as BERT's own
    vocabulary keeps unused slots)."""
    tokens = TINY_VOCAB + [f"[unused{i}]" for i in range(max(0, size - len(TINY_VOCAB)))]
    (out / "vocab.txt").write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    config = {"do_lower_case": True, "tokenizer_class": "BertTokenizer"}
    (out / "tokenizer_config.json").write_text(json.dumps(config) + "\n", encoding="utf-8")


def write_tiny_bert(out_dir, seed=1, dtype="F32", layout="masked-lm", decoder=False,
                    untied=False, old_norm_names=False, **sizes):
    """Writes the folder; returns the config."""
    config, weights, head, pooler = tiny_bert(seed, **sizes)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    masked_lm = layout == "masked-lm"

    def renamed(name):
        if old_norm_names and ".LayerNorm." in name:
            name = name.replace(".LayerNorm.weight", ".LayerNorm.gamma").replace(
                ".LayerNorm.bias", ".LayerNorm.beta")
        return name

    tensors = [(renamed(("bert." if masked_lm else "") + n), dtype, a) for n, a in weights.items()]
    if masked_lm:
        tensors += [(renamed(n), dtype, a) for n, a in head.items()]
        if decoder or untied:
            embeddings = weights["embeddings.word_embeddings.weight"]
            if untied:
                embeddings = (embeddings + 0.5).astype(np.float32)
            tensors.append(("cls.predictions.decoder.weight", dtype, embeddings))
            tensors.append(("cls.predictions.decoder.bias", dtype, head["cls.predictions.bias"]))
    else:
        tensors += [(n, dtype, a) for n, a in pooler.items()]
        config["architectures"] = ["BertModel"]
    positions = config["max_position_embeddings"]
    tensors.append((("bert." if masked_lm else "") + "embeddings.position_ids", "I64",
                    np.arange(positions, dtype=np.int64).reshape(1, positions)))
    write_safetensors(out / "model.safetensors", tensors)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    write_vocab(out, config["vocab_size"])
    return config


def write_safetensors(path, tensors):
    """write_tiny_gpt2's writer, with I64 tensors (the position_ids buffer) too."""
    floats = [t for t in tensors if t[1] != "I64"]
    ints = [t for t in tensors if t[1] == "I64"]
    write_tiny_gpt2.write_safetensors(path, floats, {"format": "pt"})
    if not ints:
        return
    # Rewrite with the integer tensors appended (the header and data rebuilt here).
    data = pathlib.Path(path).read_bytes()
    (header_len,) = np.frombuffer(data[:8], dtype="<u8")
    header = json.loads(data[8:8 + int(header_len)])
    body = bytearray(data[8 + int(header_len):])
    for name, _, array in ints:
        raw = np.ascontiguousarray(array, dtype="<i8").tobytes()
        header[name] = {"dtype": "I64", "shape": list(array.shape),
                        "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    pathlib.Path(path).write_bytes(len(text).to_bytes(8, "little") + text + bytes(body))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="F32")
    parser.add_argument("--layout", choices=["model", "masked-lm"], default="masked-lm")
    parser.add_argument("--decoder", action="store_true")
    parser.add_argument("--untied", action="store_true")
    parser.add_argument("--old-norm-names", action="store_true")
    parser.add_argument("--d-model", type=int, default=16)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--positions", type=int, default=24)
    parser.add_argument("--types", type=int, default=2)
    parser.add_argument("--inner", type=int, default=None)
    parser.add_argument("--scale", type=float, default=0.3)
    parser.add_argument("--hidden-act", default="gelu")
    parser.add_argument("--vocab", type=int, default=len(TINY_VOCAB),
                        help="vocab_size: the fixed words, then [unused] slots")
    args = parser.parse_args(argv)
    if args.d_model % args.heads:
        parser.error("--d-model must be a multiple of --heads")
    write_tiny_bert(args.out_dir, seed=args.seed, dtype=args.dtype, layout=args.layout,
                    decoder=args.decoder, untied=args.untied, old_norm_names=args.old_norm_names,
                    d_model=args.d_model, heads=args.heads, layers=args.layers,
                    positions=args.positions, types=args.types, inner=args.inner,
                    scale=args.scale, hidden_act=args.hidden_act, vocab=args.vocab)
    return 0


if __name__ == "__main__":
    sys.exit(main())
