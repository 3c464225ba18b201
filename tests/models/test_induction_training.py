#!/usr/bin/python3
"""The induction task's default settings form an induction head from scratch (issue 41).

Runs `attnviz-cli train --task induction` with every default (a new byte-level model, 2 layers of
4 heads, 4000 steps, seed 1) and reads its train.json: a head's induction score must pass 0.3
(the phase change is recorded) by step 2000 and end at 0.5 or more, and the loss of the last 100
steps must be under 0.5 (from about 5.5). The time it took is printed, not asserted (machines
differ; on the 2-core machine this was written on, about 15 s).

Usage: /usr/bin/python3 tests/models/test_induction_training.py --cli build/attnviz-cli
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attnviz-induction-") as out:
        start = time.perf_counter()
        run = subprocess.run([args.cli, "train", "--task", "induction", "--quiet", "-o", out],
                             capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if run.returncode != 0:
            print("attnviz-cli train failed: " + run.stderr.strip())
            return 1
        record = json.loads((pathlib.Path(out) / "train.json").read_text())
    last = record["scores"][-1]
    best = max(last["induction"])
    head = last["induction"].index(best)
    heads = record["model"]["heads"]
    loss = sum(record["loss"][-100:]) / 100
    phase = record["phase_change_step"]
    print("%d steps in %.1f s; phase change at step %s; best induction %.2f (layer %d, head %d); "
          "best previous-token %.2f; loss %.3f -> %.3f (last 100 steps)" % (
              record["steps"], seconds, phase, best, head // heads + 1, head % heads + 1,
              max(last["previous_token"]), record["loss"][0], loss))
    failures = []
    if phase is None or phase > 2000:
        failures.append("no head passed 0.3 by step 2000 (phase change: %s)" % phase)
    if best < 0.5:
        failures.append("the best head's induction score ends at %.2f, under 0.5" % best)
    if loss >= 0.5:
        failures.append("the loss of the last 100 steps is %.3f, not under 0.5" % loss)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
