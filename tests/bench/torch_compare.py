#!/usr/bin/python3
"""AttnViz against PyTorch: the same attention, the same shapes, the same number of threads.

For each shape the script times, in the same run:
  - AttnViz: `attnviz-cli bench` (a full recompute: Q, K, V, raw, scaled and masked scores,
    weights and output of every head, concat and W_O; its median after warm-up);
  - torch: nn.MultiheadAttention (batch_first, need_weights=True, average_attn_weights=False,
    in torch.no_grad()) where it can express the shape (scaled_dot, d_k = d_v = d_model/heads),
    otherwise the same computation written out in torch (per-head projections, scores, scale,
    mask, softmax, weights @ V, concat, W_O). Median of the timed calls after warm-up.
and prints a table: shape, AttnViz µs, torch µs, ratio (AttnViz / torch; below 1 is faster).

Threads are pinned alike: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS are set
to T for both (before torch is imported), torch.set_num_threads(T), and the CLI gets
--threads T. Not a test: no timing is asserted. Run it with /usr/bin/python3 (Debian's
python3-torch 1.13, with OpenBLAS: `make bench` installs libopenblas0-pthread, without which
Debian's torch multiplies through the reference BLAS; the script prints which one it loaded):

  /usr/bin/python3 tests/bench/torch_compare.py --cli build/attnviz-cli [--threads T]
                                                [--quick] [--rounds K]
                                                [--shapes classroom,large,other]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


SHAPE_GROUPS = ("classroom", "large", "other")


def positive_int(highest):
    def parse(value):
        try:
            number = int(value)
        except ValueError:
            number = 0
        if not 1 <= number <= highest:
            raise argparse.ArgumentTypeError("needs a number from 1 to %d, got '%s'" % (highest, value))
        return number
    return parse


def shape_groups(text):
    groups = [group for group in text.split(",") if group]
    unknown = [group for group in groups if group not in SHAPE_GROUPS]
    if unknown or not groups:
        raise argparse.ArgumentTypeError("groups are %s, got '%s'" % (", ".join(SHAPE_GROUPS), text))
    return set(groups)


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default="build/attnviz-cli", help="path of attnviz-cli")
    parser.add_argument("--threads", type=positive_int(16),
                        default=1, help="threads for both, 1 to 16 (default 1)")
    parser.add_argument("--quick", action="store_true", help="shorter timing runs")
    parser.add_argument("--rounds", type=positive_int(100), default=1,
                        help="time each shape this many times, alternating, and keep each side's "
                             "best median (steadier on a busy machine; default 1)")
    parser.add_argument("--shapes", type=shape_groups, default="classroom,large,other",
                        help="comma-separated groups: " + ", ".join(SHAPE_GROUPS))
    return parser.parse_args()


ARGS = parse_arguments()
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = str(ARGS.threads)

import torch  # noqa: E402  (after the thread variables, which torch reads when loaded)


class Shape:
    """One attention shape. keys = None is self-attention."""

    def __init__(self, group, tokens, d_model, heads, d_k=None, d_v=None, keys=None,
                 compat="scaled_dot", causal=False):
        self.group, self.tokens, self.d_model, self.heads = group, tokens, d_model, heads
        self.d_k = d_k or d_model // heads
        self.d_v = d_v or self.d_k
        self.keys, self.compat, self.causal = keys, compat, causal

    def label(self):
        text = "N=%d d=%d h=%d" % (self.tokens, self.d_model, self.heads)
        if self.d_k != self.d_model // self.heads or self.d_v != self.d_k:
            text += " dk=%d dv=%d" % (self.d_k, self.d_v)
        if self.keys:
            text += " cross M=%d" % self.keys
        if self.compat != "scaled_dot":
            text += " " + self.compat
        if self.causal:
            text += " causal"
        return text

    def mha_can_express(self):
        return (self.compat == "scaled_dot" and self.d_k * self.heads == self.d_model
                and self.d_v == self.d_k)

    def cli_arguments(self):
        args = ["--tokens", self.tokens, "--d-model", self.d_model, "--heads", self.heads,
                "--d-k", self.d_k, "--d-v", self.d_v, "--compat", self.compat]
        if self.keys:
            args += ["--cross", self.keys]
        if self.causal:
            args += ["--causal"]
        return [str(a) for a in args]


def shapes(groups):
    result = []
    if "classroom" in groups:
        for tokens in (8, 16, 32):
            for d_model in (32, 64):
                for heads in (1, 4, 8):
                    result.append(Shape("classroom", tokens, d_model, heads))
    if "large" in groups:
        result.append(Shape("large", 1024, 768, 12))
    if "other" in groups:
        result += [
            Shape("other", 32, 64, 8, keys=48),                   # cross-attention (MHA)
            Shape("other", 32, 64, 8, causal=True),               # causal mask (MHA)
            Shape("other", 128, 256, 4),                          # medium
            Shape("other", 256, 512, 8, keys=192),                # medium cross-attention
            Shape("other", 32, 64, 4, d_k=8, d_v=12),             # heads·d_k != d_model (manual)
            Shape("other", 32, 64, 8, compat="general"),          # manual
            Shape("other", 32, 64, 8, compat="cosine"),           # manual
            Shape("other", 16, 32, 4, compat="additive"),         # manual
        ]
    return result


def time_calls(function, quick):
    """Median µs of calls to function after warm-up: at least 20, about 0.5 s (0.15 s quick)."""
    budget = 0.15 if quick else 0.5
    start = time.perf_counter()
    warm = 0
    while warm < 3 or (time.perf_counter() - start < budget / 5 and warm < 200):
        function()
        warm += 1
    per_call = (time.perf_counter() - start) / warm
    repeat = max(20, min(20000, int(budget / max(per_call, 1e-9))))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        function()
        samples.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(samples)


def torch_function(shape):
    """A function computing the shape's attention in torch; and which path it takes."""
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(1, shape.tokens, shape.d_model, generator=generator)
    source = torch.randn(1, shape.keys, shape.d_model, generator=generator) if shape.keys else x
    n_key = source.shape[1]
    mask = None
    if shape.causal:  # True = not allowed (torch's convention)
        mask = torch.ones(shape.tokens, n_key, dtype=torch.bool).triu(1)

    if shape.mha_can_express():
        mha = torch.nn.MultiheadAttention(shape.d_model, shape.heads, batch_first=True)
        mha.eval()

        def run_mha():
            with torch.no_grad():
                return mha(x, source, source, need_weights=True, average_attn_weights=False,
                           attn_mask=mask)
        return run_mha, "MHA"

    h, d_model, d_k, d_v = shape.heads, shape.d_model, shape.d_k, shape.d_v
    w_q = torch.randn(d_model, h * d_k, generator=generator) / d_model ** 0.5
    w_k = torch.randn(d_model, h * d_k, generator=generator) / d_model ** 0.5
    w_v = torch.randn(d_model, h * d_v, generator=generator) / d_model ** 0.5
    w_o = torch.randn(h * d_v, d_model, generator=generator) / (h * d_v) ** 0.5
    w_a = torch.randn(h, d_k, d_k, generator=generator) / d_k ** 0.5
    w_1 = torch.randn(h, d_k, d_k, generator=generator) / d_k ** 0.5
    w_2 = torch.randn(h, d_k, d_k, generator=generator) / d_k ** 0.5
    v_a = torch.randn(h, d_k, generator=generator) / d_k ** 0.5
    x2, s2 = x[0], source[0]

    def run_manual():
        with torch.no_grad():
            q = (x2 @ w_q).view(-1, h, d_k).transpose(0, 1)       # (h, n_query, d_k)
            k = (s2 @ w_k).view(-1, h, d_k).transpose(0, 1)       # (h, n_key, d_k)
            v = (s2 @ w_v).view(-1, h, d_v).transpose(0, 1)       # (h, n_key, d_v)
            if shape.compat in ("dot", "scaled_dot"):
                scores = q @ k.transpose(1, 2)
            elif shape.compat == "general":
                scores = (q @ w_a) @ k.transpose(1, 2)
            elif shape.compat == "cosine":
                scores = (q @ k.transpose(1, 2)) / (q.norm(dim=2)[:, :, None] *
                                                    k.norm(dim=2)[:, None, :]).clamp_min(1e-30)
            else:  # additive: v_a · tanh(q W_1 + k W_2)
                hidden = torch.tanh((q @ w_1)[:, :, None, :] + (k @ w_2)[:, None, :, :])
                scores = (hidden * v_a[:, None, None, :]).sum(-1)
            scaled = scores / d_k ** 0.5 if shape.compat == "scaled_dot" else scores
            masked = scaled.masked_fill(mask, float("-inf")) if mask is not None else scaled
            weights = torch.softmax(masked, dim=-1)
            heads_out = weights @ v                                 # (h, n_query, d_v)
            concat = heads_out.transpose(0, 1).reshape(-1, h * d_v)
            return concat @ w_o
    return run_manual, "manual"


def attnviz_median(shape):
    command = [ARGS.cli, "bench", *shape.cli_arguments(), "--threads", str(ARGS.threads)]
    if ARGS.quick:
        command += ["--repeat", "20" if shape.tokens >= 512 else "2000"]
    result = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    if result.returncode != 0:
        sys.exit("attnviz-cli bench failed (%s): %s" % (" ".join(command), result.stderr.strip()))
    fields = dict(item.split("=") for item in result.stdout.split())
    return float(fields["median_us"]), int(fields["allocations"])


def blas_library():
    """The BLAS library torch's products went through (Debian's torch links libblas.so.3, which
    the alternatives system points at OpenBLAS or at the reference BLAS), from the process's
    mapped files after a product; and whether it is the reference one."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps
                        if "blas" in line.rsplit("/", 1)[-1] and line.split()[-1].startswith("/")})
    resolved = sorted({os.path.realpath(path) for path in paths})
    reference = any("/blas/" in path and "openblas" not in path for path in resolved)
    return ", ".join(resolved) or "none found", reference


def main():
    if not os.access(ARGS.cli, os.X_OK):
        sys.exit("attnviz-cli not found at %s (build it, or give --cli)" % ARGS.cli)
    torch.set_num_threads(ARGS.threads)
    groups = ARGS.shapes
    print("torch %s, %d thread(s) each (OMP/OPENBLAS/MKL_NUM_THREADS=%d), best of %d round(s)"
          % (torch.__version__, ARGS.threads, ARGS.threads, max(1, ARGS.rounds)))
    library, reference = blas_library()
    print("torch's BLAS: %s" % library)
    if reference:
        print("warning: torch's products go through the reference BLAS, many times slower than "
              "OpenBLAS; install libopenblas0-pthread (make bench does) for a fair comparison",
              file=sys.stderr)
    header = "%-34s %13s %12s %7s  %-6s %s" % ("shape", "AttnViz µs", "torch µs", "ratio",
                                                "torch", "allocations")
    print(header)
    print("-" * len(header))
    ratios = {}
    for shape in shapes(groups):
        function, path = torch_function(shape)
        torch_us = attnviz_us = float("inf")
        allocations = 0
        for _ in range(max(1, ARGS.rounds)):
            torch_us = min(torch_us, time_calls(function, ARGS.quick))
            median, count = attnviz_median(shape)
            attnviz_us, allocations = min(attnviz_us, median), max(allocations, count)
        ratio = attnviz_us / torch_us
        ratios.setdefault(shape.group, []).append(ratio)
        print("%-34s %13.1f %12.1f %7.2f  %-6s %d" % (shape.label(), attnviz_us, torch_us, ratio,
                                                      path, allocations), flush=True)
    for group, values in ratios.items():
        print("%s: ratio AttnViz/torch from %.2f to %.2f (geometric mean %.2f)"
              % (group, min(values), max(values), statistics.geometric_mean(values)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
