#!/usr/bin/python3
"""Training's backward pass against PyTorch's autograd in float64, tensor by tensor.

`attnviz-cli model grad MODEL --text TEXT -o G.safetensors` writes the gradient of the mean
next-token cross-entropy over TEXT (every position but the last predicts the next token) with
respect to every weight, under the file's own names and shapes. Here gpt2_reference.py, which
reads the folder with its own safetensors reader and computes GPT-2's forward pass in float64
with torch operations, is differentiated by torch.autograd: its weights are made leaves that
require a gradient, the same loss is computed from its logits, and backward() gives each
tensor's gradient (a tied embedding is one tensor used twice, so autograd sums both uses, as the
engine must).

Every tensor is compared: the same names, the same shapes, and the largest |engine − torch|
divided by the largest |torch| of that tensor, printed; tolerance 1e-3 (the engine computes in
float32). The loss the CLI prints is compared too.

Cases: tiny random GPT-2 folders (write_tiny_gpt2.py), names prefixed with "transformer." and
not, the head tied and saved apart (lm_head.weight), F32 and F16; a folder of the shape
`attnviz-cli train` makes (2 layers of 4 heads, width 64, 64 positions, 257 byte tokens); the
shipped gpt2-kjv-tiny.

Llama (llama2.c checkpoints): llama_reference.py, differentiated the same way; the gradient file
holds the checkpoint's own arrays (run.c's names, every layer stacked, (out, in)). Cases: tiny
random checkpoints with grouped-query attention (4 query heads on 2 key/value heads), the
classifier shared and not; the shipped stories260K.

Each comparison is also run once against a wrong reference (the scores divided by d_head instead
of √d_head; the LayerNorm's bias left out of the gradient's path; for Llama, RoPE on GPT-NeoX's
halves, and query heads reading the wrong key/value head) and must fail there.

Usage: /usr/bin/python3 tests/oracle/gradient_oracle_test.py --cli build/attnviz-cli
"""

import argparse
import json
import math
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import gpt2_reference  # noqa: E402
import llama_reference  # noqa: E402
import model_oracle_test  # noqa: E402
import write_tiny_gpt2  # noqa: E402

TOLERANCE = 1e-3


def engine_gradient(cli, model, text, work):
    out = work / "gradient.safetensors"
    run = subprocess.run([cli, "model", "grad", str(model), "--text", text, "-o", str(out)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"model grad failed ({run.returncode}): {run.stderr.strip()}")
    loss = float(run.stderr.split()[1])  # "loss 2.345 over ..."
    return loss, gpt2_reference.read_safetensors(out)


def token_ids(cli, model, text):
    run = subprocess.run([cli, "model", "attention", str(model), "--text", text, "--weights-only"],
                         capture_output=True, text=True, check=True)
    return [token["id"] for token in json.loads(run.stdout)["tokens"]]


class WrongScale(gpt2_reference.Gpt2):
    """The scores divided by d_head instead of √d_head: a wrong forward, so a wrong gradient."""

    def forward(self, ids, head_mask=None):
        self.d_head, saved = self.d_head ** 2, self.d_head
        try:
            return super().forward(ids, head_mask)
        finally:
            self.d_head = saved


def torch_gradient(reference, ids, prefix, detach_bias=False):
    """{file name: gradient} from autograd, and the loss."""
    for name, tensor in reference.w.items():
        tensor.requires_grad_(True)
        tensor.grad = None
    if detach_bias:  # a wrong gradient: ln_1's bias as a constant
        for name in list(reference.w):
            if name.endswith("ln_1.bias"):
                reference.w[name] = reference.w[name].detach()
    # A head saved apart but equal to wte is the tied head (as Hugging Face ties it): one tensor.
    tied_saved = "lm_head.weight" in reference.w and torch.equal(reference.w["lm_head.weight"],
                                                                  reference.w["wte.weight"])
    if tied_saved:
        reference.unembedding = reference.w["wte.weight"]
    logits = reference.forward(ids)["logits"]  # (n, vocab)
    targets = torch.tensor(ids[1:])
    loss = torch.nn.functional.cross_entropy(logits[:-1], targets)
    loss.backward()
    out = {}
    for name, tensor in reference.w.items():
        grad = tensor.grad if tensor.grad is not None else torch.zeros_like(tensor)
        out[(name if name == "lm_head.weight" else prefix + name)] = grad.detach().numpy()
    if tied_saved:
        out["lm_head.weight"] = out[prefix + "wte.weight"]
    return float(loss), out


# llama_reference's array names → the gradient file's (run.c's).
LLAMA_NAMES = {"token_embedding": "token_embedding_table", "rms_att": "rms_att_weight",
               "rms_ffn": "rms_ffn_weight", "rms_final": "rms_final_weight"}


def write_tiny_llama(path, seed, dim=16, hidden=24, layers=2, heads=4, kv_heads=2, vocab=512,
                     seq_len=32, shared=True):
    """A llama2.c version 0 checkpoint of random weights (gains 1 ± 0.2, matrices N(0, 0.3²))."""
    rng = np.random.default_rng(seed)
    hs = dim // heads

    def normal(*shape):
        return rng.normal(0.0, 0.3, shape)

    def gains(*shape):
        return 1.0 + 0.2 * rng.standard_normal(shape)

    angle = np.arange(seq_len)[:, None] * 10000.0 ** (-np.arange(0, hs, 2) / hs)
    arrays = [normal(vocab, dim), gains(layers, dim), normal(layers, heads * hs, dim),
              normal(layers, kv_heads * hs, dim), normal(layers, kv_heads * hs, dim),
              normal(layers, dim, heads * hs), gains(layers, dim), normal(layers, hidden, dim),
              normal(layers, dim, hidden), normal(layers, hidden, dim), gains(dim),
              np.cos(angle), np.sin(angle)]
    if not shared:
        arrays.append(normal(vocab, dim))
    header = struct.pack("<7i", dim, hidden, layers, heads, kv_heads,
                         vocab if shared else -vocab, seq_len)
    path.write_bytes(header + b"".join(a.astype("<f4").tobytes() for a in arrays))


def llama_torch_gradient(reference, ids):
    """{file array name: gradient} from autograd through llama_reference, and the loss."""
    names = [n for n in reference.w if not n.startswith("freq_cis")]
    shared = reference.w["wcls"] is reference.w["token_embedding"]
    for name in names:
        reference.w[name].requires_grad_(True)
        reference.w[name].grad = None
    logits = reference.forward(ids)["logits"]  # (n, vocab)
    loss = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]))
    loss.backward()
    out = {}
    for name in names:
        if name == "wcls" and shared:
            continue  # one tensor: autograd summed both uses into token_embedding's gradient
        out[LLAMA_NAMES.get(name, name)] = reference.w[name].grad.detach().numpy()
    return float(loss), out


class LlamaRopeOnHalves(llama_reference.Llama):
    """RoPE pairing i with i + head_size/2 (GPT-NeoX's), not llama2.c's adjacent pairs."""

    def forward(self, ids, head_mask=None):
        saved = llama_reference.rope
        llama_reference.rope = model_oracle_test.rope_on_halves
        try:
            return super().forward(ids, head_mask)
        finally:
            llama_reference.rope = saved


def compare(engine, reference):
    """(worst relative difference, its tensor, problems)."""
    problems = []
    if set(engine) != set(reference):
        problems.append(f"names differ: engine only {sorted(set(engine) - set(reference))}, "
                        f"torch only {sorted(set(reference) - set(engine))}")
    worst, worst_name = 0.0, ""
    for name in sorted(set(engine) & set(reference)):
        e, r = engine[name], reference[name]
        if tuple(e.shape) != tuple(r.shape):
            problems.append(f"{name}: shape {tuple(e.shape)}, torch {tuple(r.shape)}")
            continue
        scale = max(float(abs(r).max()), 1e-8)
        difference = float(abs(e - r).max()) / scale
        if difference > worst:
            worst, worst_name = difference, name
    return worst, worst_name, problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    args = parser.parse_args(argv)
    failures, report = [], []

    def check(name, model, text, reference_gradient, wrong=()):
        """The engine's gradient of `model` against reference_gradient(ids) → (loss, {name:
        gradient}); then against each (label, wrong reference) of `wrong`, which must fail."""
        with tempfile.TemporaryDirectory(prefix="attnviz-grad-") as work:
            loss, engine = engine_gradient(args.cli, model, text, pathlib.Path(work))
        ids = token_ids(args.cli, model, text)
        ref_loss, reference = reference_gradient(ids)
        worst, worst_name, problems = compare(engine, reference)
        loss_difference = abs(loss - ref_loss) / max(abs(ref_loss), 1e-8)
        report.append(f"{name}: {len(ids)} tokens, {len(engine)} tensors, largest relative "
                      f"difference {worst:.2e} ({worst_name}); loss {loss:.6g} vs torch "
                      f"{ref_loss:.6g}")
        if problems or worst > TOLERANCE or loss_difference > 1e-5:
            failures.append(f"{name}: {'; '.join(problems)} worst {worst:.2e} ({worst_name}), "
                            f"loss difference {loss_difference:.2e}")
        for label, wrong_gradient in wrong:
            _, bad = wrong_gradient(ids)
            bad_worst, bad_name, bad_problems = compare(engine, bad)
            report.append(f"  against a wrong reference ({label}): {bad_worst:.2e} "
                          f"({bad_name}) — must fail")
            if bad_worst <= TOLERANCE and not bad_problems:
                failures.append(f"{name}: the comparison passed against a wrong reference "
                                f"({label}): it cannot fail")

    def case(name, folder, text, wrong=None, wrong_detach=False):
        weights = gpt2_reference.read_safetensors(pathlib.Path(folder) / "model.safetensors")
        prefix = "transformer." if "transformer.wte.weight" in weights else ""
        wrongs = []
        if wrong is not None:
            wrongs.append(("scores over d_head", lambda ids: torch_gradient(wrong, ids, prefix)))
        if wrong_detach:
            wrongs.append(("ln_1's bias held constant", lambda ids: torch_gradient(
                gpt2_reference.Gpt2(folder), ids, prefix, detach_bias=True)))
        check(name, folder, text,
              lambda ids: torch_gradient(gpt2_reference.Gpt2(folder), ids, prefix), wrongs)

    def llama_case(name, checkpoint, text, wrong=()):
        check(name, checkpoint, text,
              lambda ids: llama_torch_gradient(llama_reference.Llama(checkpoint), ids),
              [(label, lambda ids, model=model: llama_torch_gradient(model, ids))
               for label, model in wrong])

    stories = ROOT / "assets/models/stories260K"
    with tempfile.TemporaryDirectory(prefix="attnviz-grad-llama-") as tmp:
        for shared in (True, False):
            folder = pathlib.Path(tmp) / f"shared-{shared}"
            folder.mkdir()
            shutil.copy(stories / "tok512.bin", folder / "tok512.bin")
            checkpoint = folder / "tiny.bin"
            write_tiny_llama(checkpoint, seed=7 if shared else 8, shared=shared)
            wrong = ()
            if shared:
                wrong = (("RoPE on halves", LlamaRopeOnHalves(checkpoint)),
                         ("query heads on the wrong key/value head",
                          model_oracle_test.LlamaWithKvHeadsInterleaved(checkpoint)))
            llama_case(f"tiny Llama (4 query heads on 2 key/value heads, classifier "
                       f"{'shared' if shared else 'its own'})", checkpoint,
                       "Once upon a time, there was a little cat.", wrong)
    llama_case("stories260K", stories / "stories260K.bin",
               "Once upon a time, there was a little girl named Lily.")

    with tempfile.TemporaryDirectory(prefix="attnviz-grad-models-") as tmp:
        tmp = pathlib.Path(tmp)
        for dtype, prefix, lm_head in (("F32", False, False), ("F32", True, True),
                                       ("F16", True, False), ("F32", False, True)):
            folder = tmp / f"tiny-{dtype}-{prefix}-{lm_head}"
            write_tiny_gpt2.write_tiny_gpt2(folder, seed=11, dtype=dtype, prefix=prefix,
                                            lm_head=lm_head, vocab=model_oracle_test.TINY_VOCAB,
                                            positions=24)
            model_oracle_test.write_tokenizer(folder)
            first = dtype == "F32" and not prefix and not lm_head
            case(f"tiny GPT-2 {dtype}{', prefixed' if prefix else ''}"
                 f"{', lm_head saved apart' if lm_head else ''}", folder, "the cat sat on the mat",
                 wrong=WrongScale(folder) if first else None, wrong_detach=first)
        # A head of its own (lm_head.weight not wte): each gets its own use's gradient.
        folder = tmp / "untied"
        config, weights = write_tiny_gpt2.tiny_gpt2(seed=5, vocab=model_oracle_test.TINY_VOCAB,
                                                    positions=24)
        folder.mkdir()
        tensors = [(n, "F32", a) for n, a in weights.items()]
        tensors.append(("lm_head.weight", "F32", weights["wte.weight"][::-1].copy()))
        write_tiny_gpt2.write_safetensors(folder / "model.safetensors", tensors, {"format": "pt"})
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
        model_oracle_test.write_tokenizer(folder)
        case("tiny GPT-2, untied head", folder, "the cat sat on the mat")
        # The shape `attnviz-cli train` makes, at GPT-2's initial scale.
        folder = tmp / "train-shape"
        write_tiny_gpt2.write_tiny_gpt2(folder, seed=3, d_model=64, heads=4, layers=2,
                                        vocab=model_oracle_test.TINY_VOCAB, positions=64,
                                        scale=0.02)
        model_oracle_test.write_tokenizer(folder)
        case("the training shape (2 layers of 4 heads, width 64)", folder,
             "abcdefghijklmnopabcdefghijklmnop and the cat sat on the mat")
        case("gpt2-kjv-tiny", ROOT / "assets/models/gpt2-kjv-tiny",
             "In the beginning God created the heaven and the earth.",
             wrong=WrongScale(ROOT / "assets/models/gpt2-kjv-tiny"))
    print("\n".join(report))
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"gradient oracle: {len(report)} lines, every tensor within {TOLERANCE:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
