#!/usr/bin/python3
"""An encoder–decoder's forward pass: AttnViz against PyTorch on an opus-mt-shaped Marian (issue 39).

What it does, in order (as bert_compare.py does for an encoder):
  1. the machine, and the OpenBLAS core type (model_compare.py's probe: the fastest correct one
     is set for every run below, one thread);
  2. the model: opus-mt-en-de's shape (d 512, 6 + 6 layers, 8 heads, MLPs 2,048, vocabulary
     58,101, 512 positions; random weights N(0, 0.02²), seed 5) written once by
     tests/oracle/write_tiny_marian.py into BUILD/bench-models/marian-opus-mt-random (about
     300 MB; reused when present);
  3. torch's forward as MarianMTModel computes it, written plainly (the scaled embeddings and
     Marian's sinusoids; the encoder's layers, self-attention both ways, SiLU MLP, the norms
     after; the decoder's, causal self-attention, cross-attention to the encoder's output; every
     target position's logits against the shared embedding plus final_logits_bias), 128 source
     and 128 target tokens, in torch.no_grad(), one thread;
  4. `attnviz-cli model bench --tokens 128 --all-logits --products` on the same folder (the same
     128 ids as the source, and the start token then 127 of them as the target), one thread;
  5. the ratio against issue 39's target (≤ 0.8 of torch's time at equal work) and the weight
     products' GFLOP/s inside the forward.
Nothing is asserted: it prints. Each side's time is its best median of --rounds rounds.

  /usr/bin/python3 tests/bench/marian_compare.py --cli build/attnviz-cli [--build-dir build]
                                                 [--rounds K]
"""

import argparse
import json
import math
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import bert_compare  # noqa: E402  (the F32 safetensors reader, the peak rate)
import model_compare  # noqa: E402  (the core type probe, the machine)

D, LAYERS, HEADS, FF, VOCAB, POSITIONS, TOKENS = 512, 6, 8, 2048, 58101, 512, 128


def token_ids(count):
    """The ids `attnviz-cli model bench` runs on: spread over the vocabulary."""
    return [(i * 7919 + 13) % VOCAB for i in range(count)]


def weight_product_shapes(tokens):
    """(m, n, k) of every weight product of one forward with every target position's logits."""
    encoder = [(tokens, D, D)] * 4 + [(tokens, FF, D), (tokens, D, FF)]
    decoder = [(tokens, D, D)] * 8 + [(tokens, FF, D), (tokens, D, FF)]
    return encoder * LAYERS + decoder * LAYERS + [(tokens, VOCAB, D)]


def ensure_model(folder):
    if (folder / "model.safetensors").exists() and (folder / "vocab.json").exists():
        return
    print("writing the opus-mt-shaped model to %s (once)..." % folder, flush=True)
    subprocess.run([sys.executable, str(ROOT / "tests/oracle/write_tiny_marian.py"), str(folder),
                    "--d-model", str(D), "--heads", str(HEADS), "--layers", str(LAYERS),
                    "--ffn", str(FF), "--vocab", str(VOCAB), "--positions", str(POSITIONS),
                    "--scale", "0.02"], check=True)


def sinusoids(n, d):
    import torch
    position = torch.arange(n, dtype=torch.float64)[:, None]
    frequency = 10000.0 ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    angle = position * frequency  # (n, d/2)
    return torch.cat([angle.sin(), angle.cos()], dim=1).float()


def torch_forward(w, source, target):
    """MarianMTModel's forward, written plainly: every target position's logits (n_t, vocab)."""
    import torch
    import torch.nn.functional as F
    d_head = D // HEADS
    table = sinusoids(max(len(source), len(target)), D)
    shared = w["model.shared.weight"]

    def dense(x, name):
        return torch.addmm(w[name + ".bias"], x, w[name + ".weight"].t())

    def norm(x, name):
        return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], 1e-5)

    def attention(x_query, x_key, at, causal):
        n_q, n_k = x_query.shape[0], x_key.shape[0]
        q = dense(x_query, at + ".q_proj").view(n_q, HEADS, d_head).transpose(0, 1)
        k = dense(x_key, at + ".k_proj").view(n_k, HEADS, d_head).transpose(0, 1)
        v = dense(x_key, at + ".v_proj").view(n_k, HEADS, d_head).transpose(0, 1)
        scores = q @ k.transpose(1, 2) / math.sqrt(d_head)  # (heads, n_q, n_k)
        if causal:
            scores = scores.masked_fill(torch.ones(n_q, n_k, dtype=torch.bool).triu(1),
                                        float("-inf"))
        heads = (torch.softmax(scores, dim=-1) @ v).transpose(0, 1).reshape(n_q, D)
        return dense(heads, at + ".out_proj")

    def feed_forward(x, at):
        return dense(F.silu(dense(x, at + "fc1")), at + "fc2")

    x = shared[source] * math.sqrt(D) + table[:len(source)]
    for i in range(LAYERS):
        at = "model.encoder.layers.%d." % i
        x = norm(x + attention(x, x, at + "self_attn", False), at + "self_attn_layer_norm")
        x = norm(x + feed_forward(x, at), at + "final_layer_norm")
    memory = x
    y = shared[target] * math.sqrt(D) + table[:len(target)]
    for i in range(LAYERS):
        at = "model.decoder.layers.%d." % i
        y = norm(y + attention(y, y, at + "self_attn", True), at + "self_attn_layer_norm")
        y = norm(y + attention(y, memory, at + "encoder_attn", False),
                 at + "encoder_attn_layer_norm")
        y = norm(y + feed_forward(y, at), at + "final_layer_norm")
    return torch.addmm(w["final_logits_bias"][0], y, shared.t())


def time_torch(w, rounds):
    import torch
    source = torch.tensor(token_ids(TOKENS))
    target = torch.tensor([VOCAB - 1] + token_ids(TOKENS - 1))
    with torch.no_grad():
        return model_compare.best_median_us(lambda: torch_forward(w, source, target), rounds, 1.5)


def main():
    args = parse_arguments()
    model_compare.ARGS = args
    _, env = model_compare.one_thread_at_best_core_type()

    model = pathlib.Path(args.build_dir) / "bench-models" / "marian-opus-mt-random"
    ensure_model(model)
    import torch
    torch.set_num_threads(1)
    peak = bert_compare.peak_rate(args.rounds)
    weights = bert_compare.read_f32_tensors(model / "model.safetensors")
    torch_us = time_torch(weights, args.rounds)
    del weights

    best, fields, _ = model_compare.cli_bench(env, model, TOKENS, "--all-logits",
                                              rounds=args.rounds)
    flops = sum(2.0 * m * n * k for m, n, k in weight_product_shapes(TOKENS))
    print("\ntorch %s, one thread: %.0f µs (%.1f GFLOP/s of weight products over the whole forward)"
          % (torch.__version__, torch_us, flops / torch_us * 1e-3))
    print("attnviz-cli model bench --all-logits: %.0f µs, allocations %s; its weight products "
          "%s µs of the run at %s GFLOP/s (the core's practical peak %.1f); the other products "
          "%s µs" % (best, fields["allocations"], fields["weight_us"], fields["weight_gflops"],
                     peak, fields["other_us"]))
    ratio = best / torch_us
    print("\nopus-mt shape, 128 + 128 tokens, every target position's logits: AttnViz / torch = "
          "%.2f (target ≤ 0.80: %s)" % (ratio, "met" if ratio <= 0.8 else "MISSED"))
    print(json.dumps({"torch_us": torch_us, "attnviz_us": best, "ratio": ratio, "peak": peak,
                      "weight_gflops": float(fields["weight_gflops"])}))
    return 0


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default=str(ROOT / "build/attnviz-cli"))
    parser.add_argument("--build-dir", default=str(ROOT / "build"),
                        help="where the opus-mt-shaped model is written (once)")
    parser.add_argument("--rounds", type=int, default=3, help="each side's best of K medians")
    parser.add_argument("--quick", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-products", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be 1 or more")
    return args


if __name__ == "__main__":
    sys.exit(main())
