"""What the training scripts do before torch loads: the threads (--threads, one by default) for
torch and OpenBLAS, and the OpenBLAS kernel (--openblas-coretype, else the fastest correct one,
measured). Both must be in the environment before OpenBLAS loads, so prepare() sets them and
re-executes the script once.

    import blas_setup
    if __name__ == "__main__":
        blas_setup.prepare()
    import torch

Reproducibility: OpenBLAS's kernel choice changes the last bits of sums, so the script logs the
core type in use (log_setup); set --openblas-coretype to the logged value to repeat a run bit for
bit.
"""

import json
import os
import subprocess
import sys

CORETYPE_CANDIDATES = ["", "Haswell", "SkylakeX", "Cooperlake", "Zen"]

BLAS_PROBE = r"""
import time, torch
torch.set_num_threads(1)
g = torch.Generator().manual_seed(0)
a = torch.randn(512, 512, generator=g); b = torch.randn(512, 512, generator=g)
ref = a.double() @ b.double()
err = ((a @ b).double() - ref).abs().max().item() / ref.abs().max().item()
best = 1e9
for _ in range(20):
    t = time.perf_counter(); a @ b; best = min(best, time.perf_counter() - t)
print(err, 2 * 512**3 / best / 1e9)
"""

CHOSEN = "TRAIN_GPT2_CORETYPE_CHOSEN"  # set in the re-executed process
PROBE_TABLE = "TRAIN_GPT2_BLAS_PROBE"


def option_from_argv(argv, name, default=None):
    """An option's value read before argparse runs (it must be known before torch loads)."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def choose_coretype():
    """Returns (coretype, table of (coretype, relative error, GFLOP/s)); '' is OpenBLAS's own pick."""
    table = []
    for coretype in CORETYPE_CANDIDATES:
        env = dict(os.environ, OPENBLAS_CORETYPE=coretype, OPENBLAS_NUM_THREADS="1")
        try:
            out = subprocess.run([sys.executable, "-c", BLAS_PROBE], env=env, capture_output=True,
                                 text=True, timeout=120, check=True).stdout.split()
            err, gflops = float(out[0]), float(out[1])
        except (subprocess.SubprocessError, ValueError, IndexError):
            continue
        table.append((coretype, err, gflops))
    correct = [row for row in table if row[1] < 1e-5]
    if not correct:
        raise SystemExit("training: no OpenBLAS core type gives a correct 512x512 product")
    return max(correct, key=lambda row: row[2])[0], table


def prepare():
    """Sets the threads and the kernel in the environment; re-executes the script once to apply
    the kernel (an inherited OPENBLAS_CORETYPE is not trusted: it may be slower than the CPU's)."""
    threads = option_from_argv(sys.argv, "--threads", "1")
    os.environ["OPENBLAS_NUM_THREADS"] = threads
    os.environ["OMP_NUM_THREADS"] = threads
    if os.environ.get(CHOSEN) == "1":
        return
    forced = option_from_argv(sys.argv, "--openblas-coretype")
    if forced is None:
        chosen, probe_table = choose_coretype()
        os.environ[PROBE_TABLE] = json.dumps(probe_table)
    else:
        chosen = forced
    os.environ["OPENBLAS_CORETYPE"] = chosen
    os.environ[CHOSEN] = "1"
    os.execv(sys.executable, [sys.executable] + sys.argv)


def log_setup(log, torch):
    """The kernels measured and the ones in use, into the training log."""
    probe = os.environ.get(PROBE_TABLE)
    if probe:
        for coretype, err, gflops in json.loads(probe):
            log(f"blas probe: OPENBLAS_CORETYPE={coretype or '(unset)'}: relative error "
                f"{err:.1e}, {gflops:.1f} GFLOP/s (512x512, one thread)")
    log(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE') or '(empty: OpenBLAS detects)'} "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')} torch threads "
        f"{torch.get_num_threads()}")
