#!/usr/bin/python3
"""Makes the untrained control of a shipped GPT-2: the same architecture, the same numbers, no
learned arrangement. Each tensor's entries are shuffled within that tensor (a fixed seed, one
permutation per tensor, in the file's order), so that every matrix keeps its size, its values and
their spread, and loses only what training put where: which token, position, dimension or head
each number belongs to. Lesson 11 compares the trained model's heads with this one's.

    /usr/bin/python3 models/train/shuffle_weights.py \
        assets/models/gpt2-kjv-tiny assets/models/gpt2-kjv-tiny-shuffled

Copies config.json, vocab.json and merges.txt; writes model.safetensors (the tensors in the same
order, names, shapes and dtype), shuffle.log (this script's output: each tensor's checksum before
and after, and the sorted values equal) and SHA256SUMS. Deterministic: numpy's legacy RandomState
with seed 11, whose stream numpy keeps the same across versions.
"""

import hashlib
import json
import os
import shutil
import struct
import sys

import numpy as np

SEED = 11
COPIED = ["config.json", "vocab.json", "merges.txt"]


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (header_size,) = struct.unpack("<Q", data[:8])
    if header_size > len(data) - 8:
        raise SystemExit(f"{path}: the header says {header_size} bytes, the file is shorter")
    header = json.loads(data[8:8 + header_size])
    body = data[8 + header_size:]
    tensors = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {entry['dtype']}, only F32 is shuffled")
        begin, end = entry["data_offsets"]
        values = np.frombuffer(body[begin:end], dtype="<f4")
        if values.size != int(np.prod(entry["shape"])):
            raise SystemExit(f"{path}: {name}: {values.size} values for shape {entry['shape']}")
        tensors.append((begin, name, entry["shape"], values.copy()))
    tensors.sort()  # the file's order
    return header.get("__metadata__"), [(name, shape, values) for _, name, shape, values in tensors]


def write_safetensors(path, metadata, tensors):
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, shape, values in tensors:
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [offset, offset + values.nbytes]}
        offset += values.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the body aligned to 8 bytes
    temporary = path + ".tmp"
    with open(temporary, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, values in tensors:
            f.write(values.astype("<f4").tobytes())
    os.replace(temporary, path)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    source, target = sys.argv[1], sys.argv[2]
    os.makedirs(target, exist_ok=True)
    # The log names the source folder only: the same however the target is named.
    log_lines = [f"shuffle_weights.py: from {os.path.basename(os.path.normpath(source))}, seed {SEED}"]
    metadata, tensors = read_safetensors(os.path.join(source, "model.safetensors"))
    random = np.random.RandomState(SEED)
    shuffled = []
    for name, shape, values in tensors:
        permutation = random.permutation(values.size)
        moved = values[permutation]
        # The same numbers, elsewhere.
        assert np.array_equal(np.sort(values), np.sort(moved))
        stayed = int(np.sum(permutation == np.arange(values.size)))
        log_lines.append(
            f"{name:24s} {str(shape):12s} sum {float(values.sum(dtype=np.float64)):+.6f} "
            f"std {float(values.std(dtype=np.float64)):.6f}; entries left in place {stayed} of "
            f"{values.size}; before {hashlib.sha256(values.tobytes()).hexdigest()[:12]} "
            f"after {hashlib.sha256(moved.tobytes()).hexdigest()[:12]}")
        shuffled.append((name, shape, moved))
    write_safetensors(os.path.join(target, "model.safetensors"), metadata, shuffled)
    for name in COPIED:
        shutil.copyfile(os.path.join(source, name), os.path.join(target, name))
    log_lines.append(f"source model.safetensors sha256 {sha256(os.path.join(source, 'model.safetensors'))}")
    with open(os.path.join(target, "shuffle.log"), "w") as f:
        f.write("\n".join(log_lines) + "\n")
    files = sorted(COPIED + ["model.safetensors", "shuffle.log"])
    with open(os.path.join(target, "SHA256SUMS"), "w") as f:
        for name in files:
            f.write(f"{sha256(os.path.join(target, name))}  {name}\n")
    print("\n".join(log_lines))


if __name__ == "__main__":
    main()
