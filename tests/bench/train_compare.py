#!/usr/bin/python3
"""A training step (forward, backward, AdamW) of a GPT-2-small shape: AttnViz against PyTorch
(issue 41), one thread each.

  1. the machine, and OpenBLAS's fastest correct core type for torch (model_compare.py's choice:
     its products at the forward's shapes, checked against float64);
  2. the model: model_compare.py's GPT-2-small-shaped folder (n_embd 768, 12 layers, 12 heads,
     vocab 50257; random weights N(0, 0.02²); written once into BUILD/bench-models);
  3. torch: the same GPT-2 written plainly with its weights as leaves (float32), the mean
     next-token cross-entropy over 128 tokens (every position's logits), backward(), and
     torch.optim.AdamW's step; the median of --rounds steps after one to warm up;
  4. AttnViz: `attnviz-cli train --from MODEL --task text FILE --length 128 --texts 1` run for 1
     and for 1 + N steps; a step's time is the difference over N (what both runs share — opening
     the model, copying its weights, saving the folder — cancels);
  5. the ratio against the issue's target (≤ 1.0× torch's time).
Nothing is asserted: it prints.

  /usr/bin/python3 tests/bench/train_compare.py --cli build/attnviz-cli [--build-dir build]
                                                [--rounds N]
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import model_compare  # noqa: E402  (the model, the core type, the machine)

TOKENS = 128


def torch_step_seconds(weights, rounds):
    import torch
    w = {name: torch.as_tensor(array).clone().detach().requires_grad_(True)
         for name, array in weights.items()}
    optimizer = torch.optim.AdamW(list(w.values()), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1)
    ids = torch.tensor(model_compare.token_ids(TOKENS + 1))
    inputs, targets = ids[:-1], ids[1:]
    d, heads = model_compare.D_MODEL, model_compare.HEADS
    mask = torch.tril(torch.ones(TOKENS, TOKENS, dtype=torch.bool))

    def norm(x, name):
        return torch.nn.functional.layer_norm(x, (d,), w[name + ".weight"], w[name + ".bias"], 1e-5)

    def step():
        x = w["wte.weight"][inputs] + w["wpe.weight"][:TOKENS]
        for layer in range(model_compare.LAYERS):
            h = "h.%d." % layer
            qkv = norm(x, h + "ln_1") @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
            q, k, v = (t.view(TOKENS, heads, d // heads).transpose(0, 1) for t in qkv.split(d, -1))
            scores = (q @ k.transpose(-1, -2)) / (d // heads) ** 0.5
            attention = scores.masked_fill(~mask, float("-inf")).softmax(-1)
            out = (attention @ v).transpose(0, 1).reshape(TOKENS, d)
            x = x + out @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
            hidden = norm(x, h + "ln_2") @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"]
            hidden = torch.nn.functional.gelu(hidden, approximate="tanh")
            x = x + hidden @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
        logits = norm(x, "ln_f") @ w["wte.weight"].T  # (tokens, vocab)
        loss = torch.nn.functional.cross_entropy(logits, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
        optimizer.step()

    step()  # warm up
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def attnviz_run_seconds(cli, model, text_file, steps, env):
    with tempfile.TemporaryDirectory(prefix="attnviz-train-bench-") as out:
        start = time.perf_counter()
        subprocess.run([cli, "train", "--from", str(model), "--task", "text", str(text_file),
                        "--length", str(TOKENS), "--texts", "1", "--steps", str(steps), "--quiet",
                        "-o", out], check=True, env=env)
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default=str(ROOT / "build/attnviz-cli"))
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    name, avx512, cpus = model_compare.machine()
    print("machine: %s, avx512f %s, %d CPUs" % (name, "yes" if avx512 else "no", cpus))
    best_type, best_rate = "", 0.0
    for core_type in model_compare.CORE_TYPES[1:]:
        try:
            data = model_compare.products_at(core_type, [TOKENS], 1)
        except subprocess.CalledProcessError:  # kernels this CPU lacks (SkylakeX: AVX-512)
            continue
        rate, _ = model_compare.forward_rate(data["seconds"], TOKENS, True)
        if data["error"] < 1e-5 and rate > best_rate:
            best_type, best_rate = core_type, rate
    print("OpenBLAS core type for torch: %s (%.1f GFLOP/s at the forward's products)"
          % (best_type, best_rate))
    env = os.environ.copy()
    env.update(OPENBLAS_CORETYPE=best_type, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    os.environ.update(env)
    model = pathlib.Path(args.build_dir) / "bench-models" / "gpt2-small-random"
    model_compare.ensure_model(model)

    import torch
    torch.set_num_threads(1)
    weights = model_compare.read_safetensors(model / "model.safetensors")
    torch_s = torch_step_seconds(weights, args.rounds)
    del weights
    print("torch %s: a training step at %d tokens: %.2f s" % (torch.__version__, TOKENS, torch_s))

    with tempfile.TemporaryDirectory(prefix="attnviz-train-text-") as tmp:
        text = pathlib.Path(tmp) / "text.txt"
        text.write_text("In the beginning God created the heaven and the earth. " * 40)
        one = attnviz_run_seconds(args.cli, model, text, 1, env)
        more = attnviz_run_seconds(args.cli, model, text, 1 + args.rounds, env)
    attnviz_s = (more - one) / args.rounds
    print("attnviz-cli train: a training step at %d tokens: %.2f s (runs of 1 and %d steps: "
          "%.1f s and %.1f s)" % (TOKENS, attnviz_s, 1 + args.rounds, one, more))
    ratio = attnviz_s / torch_s
    print("ratio attnviz / torch: %.2f (target ≤ 1.0: %s)" % (ratio, "met" if ratio <= 1.0
                                                                else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
