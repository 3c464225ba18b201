#!/usr/bin/python3
"""Real-model forward passes: AttnViz against PyTorch on a GPT-2-small-shaped model (issue 24).

What it does, in order:
  1. the machine: lscpu's model name and whether the CPU has AVX-512 (avx512f);
  2. the OpenBLAS core type: for each candidate (OpenBLAS's own choice, Haswell, Zen, SkylakeX,
     Cooperlake) a fresh process times torch's products at the forward pass's large shapes
     (one thread) and checks them against float64; the fastest correct one is kept, and every
     run below uses it (OPENBLAS_CORETYPE set explicitly, whatever the shell had);
  3. the raw sgemm rate, at that core type, of every weight product of the forward pass (the
     layers' projections and MLP, the logits) at 128 and 1,024 tokens;
  4. the model: a GPT-2-small shape (n_embd 768, 12 layers, 12 heads, vocab 50257, n_positions
     1024; random weights, seed 1, N(0, 0.02²)) written once by tests/oracle/write_tiny_gpt2.py
     into BUILD/bench-models/gpt2-small-random (about 500 MB; reused when present);
  5. torch's full forward of those weights, written plainly (embeddings, per layer LayerNorm,
     c_attn, causal softmax attention, c_proj, LayerNorm, c_fc, tanh GELU, c_proj; ln_f; every
     position's logits against wte, as GPT2LMHeadModel computes them) at 128 and 1,024 tokens,
     in torch.no_grad(), one thread (torch.set_num_threads(1), OPENBLAS_NUM_THREADS=1);
  6. `attnviz-cli model bench` on the same folder with the same token ids: 128 tokens (last
     position's logits, and --all-logits), 1,024 tokens, one token appended to 1,023 with the
     cache (--mode append), an ablation in the last layer (--mode last-layer), with --products
     (the weight products' time and GFLOP/s inside the forward); the shipped gpt2-kjv-tiny and
     stories260K at 64 tokens; peak memory (/usr/bin/time -v's maximum resident set) at 128 and
     1,024 tokens against the size of the mapped weights;
  7. every ratio against its target from issue 24, met or not.
Nothing is asserted: it prints. Each side's time is its best median of --rounds rounds.

  /usr/bin/python3 tests/bench/model_compare.py --cli build/attnviz-cli [--build-dir build]
                                                [--rounds K] [--quick]
"""

import argparse
import json
import os
import pathlib
import re
import statistics
import struct
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORE_TYPES = ("", "Haswell", "Zen", "SkylakeX", "Cooperlake")  # "": OpenBLAS's own choice
D_MODEL, LAYERS, HEADS, VOCAB, POSITIONS = 768, 12, 12, 50257, 1024


def token_ids(count):
    """The ids `attnviz-cli model bench` runs on: spread over the vocabulary."""
    return [(i * 7919 + 13) % VOCAB for i in range(count)]


def weight_product_shapes(tokens, all_logits):
    """(m, n, k) of every weight product of one forward pass, as the engine makes them."""
    layer = [(tokens, D_MODEL, D_MODEL)] * 4 + [(tokens, 4 * D_MODEL, D_MODEL),
                                                  (tokens, D_MODEL, 4 * D_MODEL)]
    return layer * LAYERS + [(tokens if all_logits else 1, VOCAB, D_MODEL)]


# --- a child process: one core type's products --------------------------------------------------

def child_products(tokens_list, rounds):
    """Run with OPENBLAS_CORETYPE set: prints JSON {core, gflops at the probe shapes, error,
    seconds of each distinct (m, n, k) of the forward's weight products}."""
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    core = ""
    try:
        import ctypes
        for name in ("libopenblas.so.0", "libopenblas.so"):
            try:
                library = ctypes.CDLL(name)
                library.openblas_get_corename.restype = ctypes.c_char_p
                core = library.openblas_get_corename().decode()
                break
            except OSError:
                continue
    except Exception:  # noqa: BLE001 (the name is only printed)
        core = "?"
    seconds = {}
    worst_error = 0.0
    for tokens in tokens_list:
        for all_logits in (False, True):
            for m, n, k in set(weight_product_shapes(tokens, all_logits)):
                if (m, n, k) in seconds:
                    continue
                a = torch.randn(m, k)
                b = torch.randn(n, k) if n == VOCAB else torch.randn(k, n)
                product = (lambda: a @ b.t()) if n == VOCAB else (lambda: a @ b)
                c = product()
                exact = (a.double() @ (b.double().t() if n == VOCAB else b.double()))
                worst_error = max(worst_error,
                                  ((c.double() - exact).abs().max() / exact.abs().max()).item())
                best = float("inf")
                budget = 0.05 if rounds <= 1 else 0.15
                for _ in range(max(1, rounds)):
                    start, calls = time.perf_counter(), 0
                    while calls < 2 or time.perf_counter() - start < budget:
                        product()
                        calls += 1
                    best = min(best, (time.perf_counter() - start) / calls)
                seconds[(m, n, k)] = best
    print(json.dumps({"core": core, "error": worst_error,
                      "seconds": [[m, n, k, s] for (m, n, k), s in seconds.items()]}))


def products_at(core_type, tokens_list, rounds):
    env = os.environ.copy()
    env.pop("OPENBLAS_CORETYPE", None)
    if core_type:
        env["OPENBLAS_CORETYPE"] = core_type
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    result = subprocess.run([sys.executable, __file__, "--child-products",
                             ",".join(map(str, tokens_list)), "--rounds", str(rounds)],
                            capture_output=True, text=True, env=env, check=True)
    data = json.loads(result.stdout)
    data["seconds"] = {(m, n, k): s for m, n, k, s in data["seconds"]}
    return data


def forward_rate(seconds, tokens, all_logits):
    """GFLOP/s and seconds of the forward pass's weight products at the raw sgemm rate."""
    shapes = weight_product_shapes(tokens, all_logits)
    total = sum(seconds[shape] for shape in shapes)
    flops = sum(2.0 * m * n * k for m, n, k in shapes)
    return flops / total * 1e-9, total


# --- the model and torch's forward --------------------------------------------------------------

def ensure_model(folder):
    if (folder / "model.safetensors").exists() and (folder / "vocab.json").exists():
        return
    print("writing the GPT-2-small-shaped model to %s (once)..." % folder, flush=True)
    subprocess.run([sys.executable, str(ROOT / "tests/oracle/write_tiny_gpt2.py"), str(folder),
                    "--d-model", str(D_MODEL), "--heads", str(HEADS), "--layers", str(LAYERS),
                    "--vocab", str(VOCAB), "--positions", str(POSITIONS), "--scale", "0.02",
                    "--tokenizer-from", str(ROOT / "assets/models/gpt2-kjv-tiny")], check=True)


def read_safetensors(path):
    """name -> float32 torch tensor (F32 files only, as write_tiny_gpt2.py writes them)."""
    import numpy as np
    import torch
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    base = 8 + length
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32", name
        start, end = entry["data_offsets"]
        array = np.frombuffer(data, dtype="<f4", count=(end - start) // 4, offset=base + start)
        tensors[name] = torch.from_numpy(array.reshape(entry["shape"]).copy())
    return tensors


def torch_forward(w, ids):
    """GPT2LMHeadModel's forward, written plainly: every position's logits (n, vocab)."""
    import torch
    import torch.nn.functional as F
    n = ids.shape[0]
    d_head = D_MODEL // HEADS
    mask = torch.full((n, n), float("-inf")).triu(1)
    x = w["wte.weight"][ids] + w["wpe.weight"][:n]
    for i in range(LAYERS):
        h = "h.%d." % i
        a = F.layer_norm(x, (D_MODEL,), w[h + "ln_1.weight"], w[h + "ln_1.bias"], 1e-5)
        qkv = torch.addmm(w[h + "attn.c_attn.bias"], a, w[h + "attn.c_attn.weight"])
        q, k, v = (t.view(n, HEADS, d_head).transpose(0, 1) for t in qkv.split(D_MODEL, dim=1))
        scores = q @ k.transpose(1, 2) / d_head ** 0.5 + mask  # (heads, n, n)
        heads = torch.softmax(scores, dim=-1) @ v  # (heads, n, d_head)
        merged = heads.transpose(0, 1).reshape(n, D_MODEL)
        x = x + torch.addmm(w[h + "attn.c_proj.bias"], merged, w[h + "attn.c_proj.weight"])
        a = F.layer_norm(x, (D_MODEL,), w[h + "ln_2.weight"], w[h + "ln_2.bias"], 1e-5)
        hidden = F.gelu(torch.addmm(w[h + "mlp.c_fc.bias"], a, w[h + "mlp.c_fc.weight"]),
                        approximate="tanh")
        x = x + torch.addmm(w[h + "mlp.c_proj.bias"], hidden, w[h + "mlp.c_proj.weight"])
    x = F.layer_norm(x, (D_MODEL,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
    return x @ w["wte.weight"].t()  # (n, vocab)


def best_median_us(function, rounds, seconds=1.0):
    """function() timed after a warm-up call: the best of `rounds` medians, each of 3 to 50 calls
    over about `seconds`, in µs (torch's side of every comparison here)."""
    function()
    best = float("inf")
    for _ in range(max(1, rounds)):
        samples = []
        start = time.perf_counter()
        while len(samples) < 3 or (time.perf_counter() - start < seconds and len(samples) < 50):
            t0 = time.perf_counter()
            function()
            samples.append(time.perf_counter() - t0)
        best = min(best, statistics.median(samples))
    return best * 1e6


def time_torch(w, tokens, rounds):
    import torch
    ids = torch.tensor(token_ids(tokens))
    with torch.no_grad():
        return best_median_us(lambda: torch_forward(w, ids), rounds)


# --- attnviz-cli --------------------------------------------------------------------------------

def cli_bench(env, model, tokens, *extra, rounds=1, memory=False):
    """Best median µs over rounds, the last run's fields; with memory, the peak RSS in MB."""
    command = [ARGS.cli, "model", "bench", str(model), "--tokens", str(tokens), "--products",
               *extra]
    if memory:
        command = ["/usr/bin/time", "-v", *command]
    best, fields, peak = float("inf"), {}, None
    for _ in range(max(1, rounds)):
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            sys.exit("attnviz-cli failed (%s): %s" % (" ".join(command), result.stderr.strip()))
        fields = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', result.stdout))
        best = min(best, float(fields["median_us"]))
        found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
        if found:
            peak = int(found.group(1)) / 1024.0
    return best, fields, peak


def machine():
    name = "?"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                name = line.split(":", 1)[1].strip()
    except OSError:
        pass
    with open("/proc/cpuinfo") as info:
        avx512 = " avx512f" in info.read()
    return name, avx512, os.cpu_count()


def one_thread_at_best_core_type():
    """Prints the machine; probes each OpenBLAS core type (torch's products at GPT-2 small's
    shapes, each in a fresh process, checked against float64), sets the fastest correct one and
    one thread for this process, and returns (it, the environment for attnviz-cli)."""
    name, avx512, cpus = machine()
    print("machine: %s, avx512f %s, %d CPUs; load average %s" % (
        name, "yes" if avx512 else "no", cpus, " ".join(open("/proc/loadavg").read().split()[:3])))
    results = {}
    for core_type in CORE_TYPES:
        data = products_at(core_type, [128], 1)
        rate, _ = forward_rate(data["seconds"], 128, True)
        results[core_type] = (rate, data["error"] < 1e-5)
    best_type = max((t for t in CORE_TYPES if results[t][1] and t), key=lambda t: results[t][0])
    print("OpenBLAS core type: %s (%.0f GFLOP/s on GPT-2 small's products)" % (
        best_type, results[best_type][0]))
    env = os.environ.copy()
    env.update(OPENBLAS_CORETYPE=best_type, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    os.environ.update(env)
    return best_type, env


def verdict(value, limit):
    return "met" if value <= limit else "MISSED"


def main():
    if not os.access(ARGS.cli, os.X_OK):
        sys.exit("attnviz-cli not found at %s (build it, or give --cli)" % ARGS.cli)
    rounds = 1 if ARGS.quick else ARGS.rounds
    name, avx512, cpus = machine()
    print("machine: %s, avx512f %s, %d CPUs; load average %s" % (
        name, "yes" if avx512 else "no", cpus, " ".join(open("/proc/loadavg").read().split()[:3])))
    if "OPENBLAS_CORETYPE" in os.environ:
        print("(the shell had OPENBLAS_CORETYPE=%s: ignored, every run below sets it)"
              % os.environ["OPENBLAS_CORETYPE"])

    # The core type: the fastest correct products at the forward's shapes.
    print("\nOpenBLAS core type (torch's sgemm, one thread, the forward's weight products at 128 "
          "and 1,024 tokens):")
    results = {}
    for core_type in CORE_TYPES:
        data = products_at(core_type, [128, 1024], 1)
        rate, _ = forward_rate(data["seconds"], 1024, True)
        correct = data["error"] < 1e-5
        results[core_type] = (rate, correct, data)
        print("  %-22s kernels %-12s %7.1f GFLOP/s  relative error %.1e %s" % (
            "OPENBLAS_CORETYPE=" + core_type if core_type else "(OpenBLAS's choice)",
            data["core"], rate, data["error"], "" if correct else "WRONG"))
    best_type = max((t for t in CORE_TYPES if results[t][1] and t),
                    key=lambda t: results[t][0])
    print("best: OPENBLAS_CORETYPE=%s (%s kernels)" % (best_type, results[best_type][2]["core"]))
    env = os.environ.copy()
    env.update(OPENBLAS_CORETYPE=best_type, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    os.environ.update(env)  # for torch, imported below
    raw = products_at(best_type, [128, 1024], rounds)["seconds"]

    model = pathlib.Path(ARGS.build_dir) / "bench-models" / "gpt2-small-random"
    ensure_model(model)
    weights_mb = (model / "model.safetensors").stat().st_size / 2**20

    import torch
    torch.set_num_threads(1)
    print("\ntorch %s, one thread, OPENBLAS_CORETYPE=%s" % (torch.__version__, best_type))
    weights = read_safetensors(model / "model.safetensors")
    torch_us = {tokens: time_torch(weights, tokens, rounds) for tokens in (128, 1024)}
    del weights

    runs = {}
    print("\nattnviz-cli model bench, one thread, OPENBLAS_CORETYPE=%s:" % best_type)
    for key, tokens, extra in (("128", 128, ()), ("128 all", 128, ("--all-logits",)),
                               ("1024", 1024, ()), ("1024 all", 1024, ("--all-logits",)),
                               ("append", 1024, ("--mode", "append")),
                               ("last-layer", 1024, ("--mode", "last-layer"))):
        median, fields, _ = cli_bench(env, model, tokens, *extra, rounds=rounds)
        runs[key] = (median, fields)
        print("  %-11s %12.0f µs  allocations %s  weight products %s µs of %s at %s GFLOP/s  (%s)"
              % (key, median, fields["allocations"], fields.get("weight_us"),
                 fields.get("run_us"), fields.get("weight_gflops"), fields["blas"].strip('"')))
    shipped = {}
    for name_ in ("gpt2-kjv-tiny", "stories260K"):
        shipped[name_] = cli_bench(env, name_, 64, rounds=rounds)[0]
        print("  %-14s 64 tokens: %8.1f µs" % (name_, shipped[name_]))
    peaks = {tokens: cli_bench(env, model, tokens, "--repeat", "5", memory=True)[2]
             for tokens in (128, 1024)}

    print("\nthe weight products inside the forward against the raw sgemm rate at the same shapes:")
    rates = {}
    for key, tokens, all_logits in (("128", 128, False), ("128 all", 128, True),
                                    ("1024", 1024, False)):
        raw_rate, _ = forward_rate(raw, tokens, all_logits)
        inside = float(runs[key][1]["weight_gflops"])
        rates[key] = inside / raw_rate
        print("  %-9s inside %6.1f GFLOP/s, raw %6.1f: %.2f" % (key, inside, raw_rate, rates[key]))

    print("\npeak memory (maximum resident set): %s; the mapped weights %.0f MB" % (
        ", ".join("%d tokens %.0f MB" % (t, p) for t, p in peaks.items() if p), weights_mb))

    full = runs["1024"][0]
    rows = [
        ("gpt2-kjv-tiny, 64 tokens, full forward", shipped["gpt2-kjv-tiny"] / 1000.0, "ms", 1.0),
        ("stories260K, 64 tokens, full forward", shipped["stories260K"] / 1000.0, "ms", 1.0),
        ("GPT-2 small, 128 tokens, last logits / torch", runs["128"][0] / torch_us[128], "", 0.5),
        ("GPT-2 small, 128 tokens, all logits / torch", runs["128 all"][0] / torch_us[128], "",
         0.75),
        ("GPT-2 small, 1,024 tokens / torch", full / torch_us[1024], "", 0.5),
        ("append one token to 1,023 / full forward", runs["append"][0] / full, "", 1 / 50),
        ("ablation in the last layer / full forward", runs["last-layer"][0] / full, "", 1 / 10),
    ] + [("weight products' rate / raw sgemm, %s" % key, rate, "", None)
         for key, rate in rates.items()]
    print("\ntorch: 128 tokens %.0f µs, 1,024 tokens %.0f µs" % (torch_us[128], torch_us[1024]))
    print("%-50s %10s %10s  %s" % ("target", "measured", "target", ""))
    for label, value, unit, limit in rows:
        if limit is None:  # a rate: at least 0.80 of the raw one
            print("%-50s %10.2f %10s  %s" % (label, value, "≥ 0.80",
                                             "met" if value >= 0.8 else "MISSED"))
        elif unit:
            print("%-50s %10s %10s  %s" % (label, "%.3f %s" % (value, unit),
                                           "< %g %s" % (limit, unit), verdict(value, limit)))
        else:
            print("%-50s %10.3f %10s  %s" % (label, value, "≤ %.3g" % limit,
                                             verdict(value, limit)))
    return 0


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default=str(ROOT / "build/attnviz-cli"))
    parser.add_argument("--build-dir", default=str(ROOT / "build"),
                        help="where the GPT-2-small-shaped model is written (once)")
    parser.add_argument("--rounds", type=int, default=3, help="each side's best of K medians")
    parser.add_argument("--quick", action="store_true", help="one round, shorter product runs")
    parser.add_argument("--child-products", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be 1 or more")
    return args


if __name__ == "__main__":
    ARGS = parse_arguments()
    if ARGS.child_products:
        child_products([int(t) for t in ARGS.child_products.split(",")], ARGS.rounds)
        sys.exit(0)
    sys.exit(main())
