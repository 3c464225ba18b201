#!/usr/bin/python3
"""gpt2-kjv-tiny-shuffled is what its provenance says: gpt2-kjv-tiny with each tensor's entries
shuffled within that tensor. Made again here by models/train/shuffle_weights.py into a temporary
folder, it is the shipped folder byte for byte; read with a safetensors reader of this test's own,
every tensor has the trained model's name, shape and values (sorted, equal) at other places; the
tokenizer files are the trained model's; SHA256SUMS holds.

    /usr/bin/python3 tests/models/test_shuffled_model.py SOURCE_DIR
"""

import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

failures = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message)
    if not condition:
        failures.append(message)


def tensors_of(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    return {name: (entry["shape"], np.frombuffer(body[entry["data_offsets"][0]:entry["data_offsets"][1]],
                                                   dtype="<f4"))
            for name, entry in header.items() if name != "__metadata__"}


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    root = sys.argv[1]
    trained = os.path.join(root, "assets", "models", "gpt2-kjv-tiny")
    shipped = os.path.join(root, "assets", "models", "gpt2-kjv-tiny-shuffled")
    with tempfile.TemporaryDirectory() as folder:
        made = os.path.join(folder, "shuffled")
        subprocess.run([sys.executable, os.path.join(root, "models", "train", "shuffle_weights.py"),
                        trained, made], check=True, stdout=subprocess.DEVNULL)
        for name in ["model.safetensors", "config.json", "vocab.json", "merges.txt", "shuffle.log",
                     "SHA256SUMS"]:
            check(read(os.path.join(made, name)) == read(os.path.join(shipped, name)),
                  f"{name} made again is the shipped one")
    for name in ["config.json", "vocab.json", "merges.txt"]:
        check(read(os.path.join(trained, name)) == read(os.path.join(shipped, name)),
              f"{name} is gpt2-kjv-tiny's")
    before = tensors_of(os.path.join(trained, "model.safetensors"))
    after = tensors_of(os.path.join(shipped, "model.safetensors"))
    check(sorted(before) == sorted(after), f"the same {len(before)} tensor names")
    moved_everywhere = True
    for name, (shape, values) in before.items():
        if name not in after:
            continue
        shape_after, values_after = after[name]
        same_numbers = shape == shape_after and np.array_equal(np.sort(values), np.sort(values_after))
        in_place = float(np.mean(values == values_after))
        if not same_numbers:
            check(False, f"{name}: the same shape and the same numbers")
        # Shuffled: almost no entry at its place (a tensor of repeated values aside).
        if in_place > 0.05 and np.unique(values).size > 10:
            moved_everywhere = False
            check(False, f"{name}: {in_place:.0%} of the entries stayed in place")
    check(moved_everywhere, "every tensor's entries moved (at most 5% in place)")
    for line in read(os.path.join(shipped, "SHA256SUMS")).decode().splitlines():
        digest, name = line.split("  ", 1)
        check(hashlib.sha256(read(os.path.join(shipped, name))).hexdigest() == digest,
              f"SHA256SUMS: {name}")
    for name in ["LICENSE", "PROVENANCE.md"]:
        check(os.path.isfile(os.path.join(shipped, name)), f"{name} beside the model")
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
