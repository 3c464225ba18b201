#!/usr/bin/python3
"""An encoder's forward pass: AttnViz against PyTorch on a bert-base-shaped model (issue 38).

What it does, in order:
  1. the machine: lscpu's model name, whether the CPU has AVX-512, the load average;
  2. the OpenBLAS core type: model_compare.py's probe (each candidate in a fresh process, torch's
     products at GPT-2 small's shapes, checked against float64); the fastest correct one is set
     for every run below (OPENBLAS_CORETYPE, one thread: OPENBLAS_NUM_THREADS=1);
  3. the core's practical peak: OpenBLAS's best sgemm rate on a 2,048³ product, one thread;
  4. the model: bert-base-uncased's shape (d 768, 12 layers, 12 heads, MLP 3,072, vocabulary
     30,522, 512 positions; random weights N(0, 0.02²), seed 1, BertForMaskedLM's layout with its
     head) written once by tests/oracle/write_tiny_bert.py into BUILD/bench-models/bert-base-random
     (about 440 MB; reused when present);
  5. torch's forward of those weights as BertForMaskedLM computes it, written plainly
     (embeddings and their LayerNorm, per layer Q K V, softmax attention both ways, the output
     dense and LayerNorm, the MLP with GELU (erf) and LayerNorm; the MLM head: dense, GELU,
     LayerNorm, every position's logits against the word embeddings plus the bias), 128 tokens,
     in torch.no_grad(), one thread;
  6. `attnviz-cli model bench --all-logits --products` on the same folder and token ids (every
     position's logits: torch's work), 128 tokens, one thread;
  7. the ratio against issue 38's target (≤ 0.8 of torch's time at equal work), and the weight
     products' GFLOP/s inside the forward against the raw sgemm rate at the same shapes and the
     practical peak.
Nothing is asserted: it prints. Each side's time is its best median of --rounds rounds.

  /usr/bin/python3 tests/bench/bert_compare.py --cli build/attnviz-cli [--build-dir build]
                                               [--rounds K]
"""

import argparse
import json
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import model_compare  # noqa: E402  (the core type probe, the machine, the safetensors reader)

D, LAYERS, HEADS, FF, VOCAB, POSITIONS, TOKENS = 768, 12, 12, 3072, 30522, 512, 128


def token_ids(count):
    """The ids `attnviz-cli model bench` runs on: spread over the vocabulary."""
    return [(i * 7919 + 13) % VOCAB for i in range(count)]


def weight_product_shapes(tokens):
    """(m, n, k) of every weight product of one forward pass with every position's logits."""
    layer = [(tokens, D, D)] * 4 + [(tokens, FF, D), (tokens, D, FF)]
    return layer * LAYERS + [(tokens, D, D), (tokens, VOCAB, D)]  # the head's dense, the logits


def ensure_model(folder):
    if (folder / "model.safetensors").exists() and (folder / "vocab.txt").exists():
        return
    print("writing the bert-base-shaped model to %s (once)..." % folder, flush=True)
    subprocess.run([sys.executable, str(ROOT / "tests/oracle/write_tiny_bert.py"), str(folder),
                    "--d-model", str(D), "--heads", str(HEADS), "--layers", str(LAYERS),
                    "--inner", str(FF), "--vocab", str(VOCAB), "--positions", str(POSITIONS),
                    "--scale", "0.02"], check=True)


def read_f32_tensors(path):
    """name -> float32 torch tensor of the file's F32 tensors (the position_ids buffer skipped)."""
    import numpy as np
    import torch
    data = path.read_bytes()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        start, end = entry["data_offsets"]
        array = np.frombuffer(data, dtype="<f4", count=(end - start) // 4, offset=8 + length + start)
        tensors[name] = torch.from_numpy(array.reshape(entry["shape"]).copy())
    return tensors


def torch_forward(w, ids, types):
    """BertForMaskedLM's forward, written plainly: every position's logits (n, vocab)."""
    import torch
    import torch.nn.functional as F
    n = ids.shape[0]
    d_head = D // HEADS
    p = "bert."

    def dense(x, name):
        return torch.addmm(w[name + ".bias"], x, w[name + ".weight"].t())

    def norm(x, name):
        return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], 1e-12)

    x = (w[p + "embeddings.word_embeddings.weight"][ids]
         + w[p + "embeddings.position_embeddings.weight"][:n]
         + w[p + "embeddings.token_type_embeddings.weight"][types])
    x = norm(x, p + "embeddings.LayerNorm")
    for i in range(LAYERS):
        at = p + "encoder.layer.%d." % i
        q, k, v = (dense(x, at + "attention.self." + part).view(n, HEADS, d_head).transpose(0, 1)
                   for part in ("query", "key", "value"))
        alpha = torch.softmax(q @ k.transpose(1, 2) / d_head ** 0.5, dim=-1)  # (heads, n, n)
        heads = (alpha @ v).transpose(0, 1).reshape(n, D)
        x = norm(x + dense(heads, at + "attention.output.dense"), at + "attention.output.LayerNorm")
        hidden = F.gelu(dense(x, at + "intermediate.dense"))
        x = norm(x + dense(hidden, at + "output.dense"), at + "output.LayerNorm")
    t = norm(F.gelu(dense(x, "cls.predictions.transform.dense")),
             "cls.predictions.transform.LayerNorm")
    return torch.addmm(w["cls.predictions.bias"], t, w[p + "embeddings.word_embeddings.weight"].t())


def time_torch(w, rounds):
    import torch
    ids = torch.tensor(token_ids(TOKENS))
    types = torch.zeros(TOKENS, dtype=torch.long)
    with torch.no_grad():
        return model_compare.best_median_us(lambda: torch_forward(w, ids, types), rounds, 1.5)


def peak_rate(rounds):
    """OpenBLAS's best sgemm rate, one thread, on a 2,048³ product (GFLOP/s)."""
    import torch
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a @ b
    best = float("inf")
    for _ in range(max(2, rounds)):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * 2048 ** 3 / best * 1e-9


def raw_rate(rounds):
    """OpenBLAS's rate on this forward's weight products, each timed alone (GFLOP/s)."""
    import torch
    total_s, total_flops = 0.0, 0.0
    timed = {}
    for m, n, k in weight_product_shapes(TOKENS):
        if (m, n, k) not in timed:
            a, b = torch.randn(m, k), torch.randn(n, k)
            a @ b.t()
            best = float("inf")
            for _ in range(max(3, rounds)):
                t0 = time.perf_counter()
                a @ b.t()
                best = min(best, time.perf_counter() - t0)
            timed[(m, n, k)] = best
        total_s += timed[(m, n, k)]
        total_flops += 2.0 * m * n * k
    return total_flops / total_s * 1e-9


def main():
    args = parse_arguments()
    model_compare.ARGS = args
    rounds = args.rounds
    _, env = model_compare.one_thread_at_best_core_type()

    model = pathlib.Path(args.build_dir) / "bench-models" / "bert-base-random"
    ensure_model(model)
    import torch
    torch.set_num_threads(1)
    peak = peak_rate(rounds)
    raw = raw_rate(rounds)
    weights = read_f32_tensors(model / "model.safetensors")
    torch_us = time_torch(weights, rounds)
    del weights

    best, fields, _ = model_compare.cli_bench(env, model, TOKENS, "--all-logits", rounds=rounds)
    flops = sum(2.0 * m * n * k for m, n, k in weight_product_shapes(TOKENS))
    print("\ntorch %s, one thread: %.0f µs (%.1f GFLOP/s of weight products over the whole forward)"
          % (torch.__version__, torch_us, flops / torch_us * 1e-3))
    print("attnviz-cli model bench --all-logits: %.0f µs, allocations %s; its weight products "
          "%s µs of the run at %s GFLOP/s; the other products %s µs" % (
              best, fields["allocations"], fields["weight_us"], fields["weight_gflops"],
              fields["other_us"]))
    print("OpenBLAS alone on the same products: %.1f GFLOP/s; on a 2,048³ product (the core's "
          "practical peak): %.1f GFLOP/s" % (raw, peak))
    ratio = best / torch_us
    print("\nbert-base shape, 128 tokens, every position's logits: AttnViz / torch = %.2f "
          "(target ≤ 0.80: %s)" % (ratio, "met" if ratio <= 0.8 else "MISSED"))
    print("weight products inside the forward: %.0f%% of the raw rate, %.0f%% of the peak" % (
        100.0 * float(fields["weight_gflops"]) / raw, 100.0 * float(fields["weight_gflops"]) / peak))
    print(json.dumps({"torch_us": torch_us, "attnviz_us": best, "ratio": ratio, "raw": raw,
                      "peak": peak, "weight_gflops": float(fields["weight_gflops"])}))
    return 0


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default=str(ROOT / "build/attnviz-cli"))
    parser.add_argument("--build-dir", default=str(ROOT / "build"),
                        help="where the bert-base-shaped model is written (once)")
    parser.add_argument("--rounds", type=int, default=3, help="each side's best of K medians")
    parser.add_argument("--quick", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-products", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be 1 or more")
    return args


if __name__ == "__main__":
    sys.exit(main())
