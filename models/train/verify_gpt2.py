#!/usr/bin/python3
"""Checks that a saved GPT-2 folder is complete and in GPT-2's layout, from the files alone.

    /usr/bin/python3 models/train/verify_gpt2.py assets/models/gpt2-kjv-tiny

Shares no code with train_gpt2.py and does not use torch: its own safetensors reader (every
offset, shape and dtype checked), its own vocab.json/merges.txt reader and BPE encoder, and the
GPT-2 forward pass in numpy (float64). It re-encodes the held-out sentence of the CHECK line that
train_gpt2.py wrote last in train.log, recomputes the loss, the argmax at every position and
each head's previous-token score on it, and each head's induction score on the logged random
sequence repeated twice, and compares them with the logged values. It also checks SHA256SUMS.
Exit status 0 when everything matches, 1 otherwise.
"""

import hashlib
import json
import math
import os
import struct
import sys

import numpy as np
import regex

GPT2_SPLIT = regex.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

failures = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message)
    if not condition:
        failures.append(message)


def gpt2_byte_chars():
    """byte -> character, as GPT-2 maps them: printable Latin-1 bytes stay, the rest (control
    characters, space, DEL, 0x80-0xA0, soft hyphen) take U+0100, U+0101, ... in byte order."""
    keep = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    table, next_char = {}, 0x100
    for byte in range(256):
        if byte in keep:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(next_char)
            next_char += 1
    return table


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: shorter than 8 bytes")
    (header_length,) = struct.unpack("<Q", blob[:8])
    if header_length > len(blob) - 8:
        raise ValueError(f"{path}: header length {header_length} past the end")
    header = json.loads(blob[8:8 + header_length].decode("utf-8"))
    check((8 + header_length) % 8 == 0, f"safetensors: data starts at byte {8 + header_length}, "
          "a multiple of 8")
    check(header.get("__metadata__") == {"format": "pt"}, 'safetensors: __metadata__ is '
          '{"format": "pt"}')
    data = blob[8 + header_length:]
    tensors, spans = {}, []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] != "F32":
            raise ValueError(f"{path}: {name} has dtype {entry['dtype']}, not F32")
        begin, end = entry["data_offsets"]
        count = math.prod(entry["shape"])
        if not (0 <= begin <= end <= len(data)) or end - begin != 4 * count:
            raise ValueError(f"{path}: {name}: offsets [{begin}, {end}] do not fit shape "
                             f"{entry['shape']} in {len(data)} bytes of data")
        spans.append((begin, end))
        tensors[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(entry["shape"])
    spans.sort()
    contiguous = spans[0][0] == 0 and spans[-1][1] == len(data) and all(
        a[1] == b[0] for a, b in zip(spans, spans[1:]))
    check(contiguous, f"safetensors: {len(spans)} tensors cover the data exactly, no gap or "
          "overlap")
    return tensors


def read_tokenizer(folder):
    with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(folder, "merges.txt"), encoding="utf-8") as f:
        merges_text = f.read()
    lines = merges_text.split("\n")
    check(lines[0] == "#version: 0.2", 'merges.txt: first line "#version: 0.2"')
    check(merges_text.endswith("\n") and lines[-1] == "", "merges.txt: ends with a newline")
    merges = [tuple(line.split(" ")) for line in lines[1:-1]]
    check(all(len(m) == 2 for m in merges), "merges.txt: every line is two symbols")
    check(sorted(vocab.values()) == list(range(len(vocab))), "vocab.json: ids 0 .. n-1, once each")
    byte_chars = gpt2_byte_chars()
    # GPT-2's order: the bytes kept as themselves (ascending), then the others (ascending)
    order = sorted(byte_chars.items(), key=lambda kv: (ord(kv[1]) >= 0x100, kv[0]))
    check(all(vocab.get(ch) == i for i, (_, ch) in enumerate(order)),
          "vocab.json: the 256 byte tokens first, in GPT-2's order")
    check(all(vocab.get(a + b) == 256 + rank for rank, (a, b) in enumerate(merges)),
          "vocab.json: merge r makes token 256 + r")
    return vocab, merges, byte_chars


def bpe_encode(text, vocab, merges, byte_chars):
    rank = {pair: r for r, pair in enumerate(merges)}
    ids = []
    for piece in GPT2_SPLIT.findall(text):
        parts = [byte_chars[b] for b in piece.encode("utf-8")]
        while True:
            ranked = [(rank[(parts[i], parts[i + 1])], i) for i in range(len(parts) - 1)
                      if (parts[i], parts[i + 1]) in rank]
            if not ranked:
                break
            best = min(ranked)[0]
            pair = merges[best]
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == pair:
                    merged.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        ids.extend(vocab[p] for p in parts)
    return ids


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def forward(w, config, ids):
    """ids (n,) -> logits (n, vocab) and per layer alpha (head, n_query, n_key), in float64."""
    d, n_head, eps = config["n_embd"], config["n_head"], config["layer_norm_epsilon"]
    d_head = d // n_head
    n = len(ids)
    W = {k: v.astype(np.float64) for k, v in w.items()}
    x = W["wte.weight"][ids] + W["wpe.weight"][:n]  # (n, d)
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    alphas = []
    for layer in range(config["n_layer"]):
        p = f"h.{layer}."
        a = layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        qkv = a @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]  # (n, 3d)
        out = np.zeros((n, d))
        layer_alpha = []
        for h in range(n_head):
            q = qkv[:, h * d_head:(h + 1) * d_head]
            k = qkv[:, d + h * d_head:d + (h + 1) * d_head]
            v = qkv[:, 2 * d + h * d_head:2 * d + (h + 1) * d_head]
            scores = q @ k.T / math.sqrt(d_head)  # (n_query, n_key)
            scores[future] = -np.inf
            scores -= scores.max(axis=1, keepdims=True)
            alpha = np.exp(scores)
            alpha /= alpha.sum(axis=1, keepdims=True)
            layer_alpha.append(alpha)
            out[:, h * d_head:(h + 1) * d_head] = alpha @ v
        alphas.append(np.stack(layer_alpha))
        x = x + out @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        m = layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        m = gelu_new(m @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"])
        x = x + m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
    x = layer_norm(x, W["ln_f.weight"], W["ln_f.bias"], eps)
    return x @ W["wte.weight"].T, alphas


def cross_entropy(logits, targets):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return float(-log_probs[np.arange(len(targets)), targets].mean())


def close(a, b, tolerance):
    return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                       rtol=0, atol=tolerance)


def main():
    if len(sys.argv) != 2:
        print("usage: verify_gpt2.py MODEL_FOLDER", file=sys.stderr)
        return 2
    folder = sys.argv[1]

    with open(os.path.join(folder, "SHA256SUMS")) as f:
        for line in f:
            digest, name = line.split()
            with open(os.path.join(folder, name), "rb") as g:
                check(hashlib.sha256(g.read()).hexdigest() == digest, f"SHA256SUMS: {name}")

    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    check(config.get("model_type") == "gpt2" and config.get("architectures") ==
          ["GPT2LMHeadModel"] and config.get("activation_function") == "gelu_new" and
          config.get("n_inner") is None, "config.json: gpt2, GPT2LMHeadModel, gelu_new, n_inner null")

    weights = read_safetensors(os.path.join(folder, "model.safetensors"))
    d, V, P = config["n_embd"], config["vocab_size"], config["n_positions"]
    expected = {"wte.weight": [V, d], "wpe.weight": [P, d], "ln_f.weight": [d], "ln_f.bias": [d]}
    for i in range(config["n_layer"]):
        expected.update({
            f"h.{i}.ln_1.weight": [d], f"h.{i}.ln_1.bias": [d],
            f"h.{i}.attn.c_attn.weight": [d, 3 * d], f"h.{i}.attn.c_attn.bias": [3 * d],
            f"h.{i}.attn.c_proj.weight": [d, d], f"h.{i}.attn.c_proj.bias": [d],
            f"h.{i}.ln_2.weight": [d], f"h.{i}.ln_2.bias": [d],
            f"h.{i}.mlp.c_fc.weight": [d, 4 * d], f"h.{i}.mlp.c_fc.bias": [4 * d],
            f"h.{i}.mlp.c_proj.weight": [4 * d, d], f"h.{i}.mlp.c_proj.bias": [d]})
    check({k: list(v.shape) for k, v in weights.items()} == expected,
          f"model.safetensors: exactly GPT-2's {len(expected)} tensor names and shapes")
    check(all(np.isfinite(v).all() for v in weights.values()), "model.safetensors: all finite")

    vocab, merges, byte_chars = read_tokenizer(folder)
    check(len(vocab) == V and vocab.get("<|endoftext|>") == config["eos_token_id"] == V - 1,
          f"vocab.json: {V} tokens, <|endoftext|> = {V - 1} = eos_token_id")

    with open(os.path.join(folder, "train.log"), encoding="utf-8") as f:
        check_lines = [line for line in f if "] CHECK {" in line]
    logged = json.loads(check_lines[-1].split("] CHECK ", 1)[1])

    ids = bpe_encode(logged["sentence"], vocab, merges, byte_chars)
    check(ids == logged["ids"], f"re-encoded sentence: {len(ids)} ids equal the logged ones")
    id_to_token = {i: t for t, i in vocab.items()}
    char_bytes = {c: b for b, c in byte_chars.items()}
    decoded = bytes(char_bytes[c] for i in ids for c in id_to_token[i]).decode("utf-8")
    check(decoded == logged["sentence"], "decoding the ids gives the sentence back")

    logits, alphas = forward(weights, config, np.array(ids))
    loss = cross_entropy(logits[:-1], np.array(ids[1:]))
    check(abs(loss - logged["loss"]) < 1e-4,
          f"loss {loss:.6f} (logged {logged['loss']:.6f})")
    check(logits.argmax(axis=1).tolist() == logged["argmax"], "argmax at every position")
    scale = float(np.abs(logits[-1]).max())
    check(close(logits[-1], logged["last_logits"], 1e-4 * scale),
          f"the {len(logits[-1])} logits at the last position, within 1e-4 of their scale "
          f"({scale:.2f}): largest difference "
          f"{np.abs(logits[-1] - np.array(logged['last_logits'])).max():.2e}")
    previous = [[float(np.diagonal(a, offset=-1).mean()) for a in layer] for layer in alphas]
    check(close(previous, logged["previous_token"], 1e-4),
          "previous-token scores on the sentence: " +
          " | ".join(" ".join(f"{v:.3f}" for v in row) for row in previous))

    probe = np.array(logged["probe_ids"])
    half = len(probe) // 2
    check(np.array_equal(probe[:half], probe[half:]), "probe: a random sequence written twice")
    _, alphas = forward(weights, config, probe)
    induction = [[float(np.diagonal(a, offset=-(half - 1))[1:].mean()) for a in layer]
                 for layer in alphas]
    check(close(induction, logged["induction"], 1e-4),
          "induction scores on the probe: " +
          " | ".join(" ".join(f"{v:.3f}" for v in row) for row in induction))

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
