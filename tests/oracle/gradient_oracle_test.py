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

BERT (Hugging Face folders with the MLM head): bert_reference.py, differentiated the same way;
the loss is BertForMaskedLM's with labels: `--mask P,Q` replaces the tokens at P and Q by [MASK]
and predicts them (without --mask every token is predicted where it stands); sentence pairs
(--text-b) give token types. The gradient file holds the file's own names (with or without
"bert.", .gamma/.beta in older files) and nn.Linear's (out, in) shapes; a saved
cls.predictions.decoder.weight equal to the word embeddings is the tied embedding (both uses
summed), decoder.bias is cls.predictions.bias. Cases: tiny random folders (write_tiny_bert.py):
F32 with a pair and masks, F16 with the decoder saved, BF16 with old norm names, an untied
decoder, no mask; the shipped bert-web.

Encoder–decoders (Hugging Face Marian and BART folders): marian_reference.py, differentiated the
same way; `model grad MODEL --source S --text T`'s loss is MarianMTModel's with labels: the
decoder reads the start token and T's pieces and predicts each piece and then the end token,
its cross-attention reading the encoder's output of S. The gradient reaches the encoder through
the cross-attention's keys and values, and the shared embedding gets all three uses (encoder,
decoder, tied unembedding). Marian's sinusoid positions and final_logits_bias are constants
(a buffer in PyTorch): no gradient. Cases: tiny random Marian folders (write_tiny_marian.py,
real SentencePiece vocabularies), tied and with lm_head.weight of its own; a tiny BART
(learned positions from row 2, the embeddings' LayerNorm, GELU, GPT-2's byte-level BPE); the
shipped marian-web-es.

Each comparison is also run once against a wrong reference (the scores divided by d_head instead
of √d_head; the LayerNorm's bias left out of the gradient's path; for Llama, RoPE on GPT-NeoX's
halves, and query heads reading the wrong key/value head; for BERT, a causal mask (attention one
way) and the token types left out; for encoder–decoders, a causal mask on the cross-attention)
and must fail there.

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

import bert_reference  # noqa: E402
import gpt2_reference  # noqa: E402
import llama_reference  # noqa: E402
import marian_reference  # noqa: E402
import model_oracle_test  # noqa: E402
import write_tiny_bert  # noqa: E402
import write_tiny_gpt2  # noqa: E402
import write_tiny_marian  # noqa: E402

TOLERANCE = 1e-3


def engine_gradient(cli, model, text, work, extra=()):
    out = work / "gradient.safetensors"
    run = subprocess.run([cli, "model", "grad", str(model), "--text", text, "-o", str(out)]
                         + list(extra), capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"model grad failed ({run.returncode}): {run.stderr.strip()}")
    loss = float(run.stderr.split()[1])  # "loss 2.345 over ..."
    return loss, gpt2_reference.read_safetensors(out)


def token_ids(cli, model, text, text_b=None):
    pair = ["--text-b", text_b] if text_b is not None else []
    run = subprocess.run([cli, "model", "attention", str(model), "--text", text, "--weights-only"]
                         + pair, capture_output=True, text=True, check=True)
    return [token["id"] for token in json.loads(run.stdout)["tokens"]]


class BertOneWay(bert_reference.Bert):
    """A wrong BERT: each query sees only itself and the keys before it (a decoder's mask)."""

    def forward(self, ids, head_mask=None, types=None):
        saved = torch.softmax

        def causal_softmax(scores, dim):
            n = scores.shape[-1]
            future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
            return saved(scores.masked_fill(future, float("-inf")), dim=dim)

        torch.softmax = causal_softmax
        try:
            return super().forward(ids, head_mask, types)
        finally:
            torch.softmax = saved


def bert_torch_gradient(reference, ids, types, mask, mask_id, file_names, ignore_types=False):
    """{file name: gradient} of BertForMaskedLM's loss with labels, from autograd, and the loss:
    the tokens at `mask` replaced by [MASK] and predicted (every token where it stands without
    `mask`)."""
    for tensor in reference.w.values():
        if tensor.is_floating_point():
            tensor.requires_grad_(True)
            tensor.grad = None
    bare = {name: reference_name(name) for name in file_names}
    decoder_saved = "cls.predictions.decoder.weight" in reference.w
    tied = decoder_saved and torch.equal(reference.w["cls.predictions.decoder.weight"],
                                         reference.w["embeddings.word_embeddings.weight"])
    if tied:  # Hugging Face ties them: one tensor, both uses
        reference.decoder = reference.w["embeddings.word_embeddings.weight"]
    inputs = list(ids)
    for position in mask:
        inputs[position] = mask_id
    logits = reference.forward(inputs, types=None if ignore_types else types)["logits"]
    chosen = mask if mask else list(range(len(ids)))
    loss = torch.nn.functional.cross_entropy(logits[chosen], torch.tensor([ids[p] for p in chosen]))
    loss.backward()
    out = {}
    for name, bare_name in bare.items():
        tensor = reference.w[bare_name]
        if bare_name.endswith("position_ids"):
            continue  # a buffer, not a weight
        grad = tensor.grad if tensor.grad is not None else torch.zeros_like(tensor)
        out[name] = grad.detach().numpy()
    if tied:
        out["cls.predictions.decoder.weight"] = out[next(
            n for n, b in bare.items() if b == "embeddings.word_embeddings.weight")]
    if "cls.predictions.decoder.bias" in out:  # BertForMaskedLM's decoder.bias is this bias
        out["cls.predictions.decoder.bias"] = out["cls.predictions.bias"]
    return float(loss), out


def reference_name(name):
    """bert_reference.py's name for a file's tensor name."""
    bare = name[len("bert."):] if name.startswith("bert.") else name
    return bare.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta",
                                                                       "LayerNorm.bias")


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


class CrossOneWay(marian_reference.Marian):
    """A wrong encoder–decoder: target position i attends only to source positions 0..i."""

    def attention(self, x_query, x_key, prefix, n_heads, seen, head_mask):
        if "encoder_attn" in prefix:
            seen = seen & torch.ones(seen.shape, dtype=torch.bool).tril()
        return super().attention(x_query, x_key, prefix, n_heads, seen, head_mask)


def encoder_decoder_ids(cli, model, source, text):
    """(source ids with the end token, the decoder's input: the start token then text's pieces)"""
    run = subprocess.run([cli, "model", "attention", str(model), "--source", source, "--text",
                          text, "--weights-only"], capture_output=True, text=True, check=True)
    out = json.loads(run.stdout)
    return ([token["id"] for token in out["source_tokens"]],
            [token["id"] for token in out["tokens"]])


def encoder_decoder_torch_gradient(reference, source, tokens, end_id):
    """{file name: gradient} of MarianMTModel's loss with labels = tokens[1:] + [end], from
    autograd, and the loss. final_logits_bias is a buffer (no gradient); Marian's positions are
    computed, not read (a file that saves them, as opus-mt's do, holds a constant: PyTorch's
    MarianSinusoidalPositionalEmbedding does not train it)."""
    def constant(name):
        return name == "final_logits_bias" or (not reference.bart and "embed_positions" in name)

    for name, tensor in reference.w.items():
        if not constant(name):
            tensor.requires_grad_(True)
    logits = reference.forward(source, tokens)["logits"]  # (n_t, vocab)
    labels = torch.tensor(list(tokens[1:]) + [end_id])
    loss = torch.nn.functional.cross_entropy(logits, labels)
    loss.backward()
    gradients = {}
    for name, tensor in reference.w.items():
        if constant(name):
            continue
        file_name = name if name == "lm_head.weight" else "model." + name
        gradients[file_name] = tensor.grad.numpy()
    return float(loss), gradients


def compare(engine, reference):
    """(worst relative difference, its tensor, problems)."""
    problems = []
    if set(engine) != set(reference):
        problems.append(f"names differ: engine only {sorted(set(engine) - set(reference))}, "
                        f"torch only {sorted(set(reference) - set(engine))}")
    worst, worst_name = 0.0, ""
    # A tensor whose gradient is 0 in exact arithmetic holds round-off alone (BERT's key bias: a
    # softmax does not change when every score of its row moves by the same q · b_K): it is
    # measured against a thousandth of the largest gradient of all.
    overall = max((float(abs(r).max()) for r in reference.values() if r.size), default=0.0)
    for name in sorted(set(engine) & set(reference)):
        e, r = engine[name], reference[name]
        if tuple(e.shape) != tuple(r.shape):
            problems.append(f"{name}: shape {tuple(e.shape)}, torch {tuple(r.shape)}")
            continue
        scale = max(float(abs(r).max()), 1e-3 * overall, 1e-8)
        difference = float(abs(e - r).max()) / scale
        if difference > worst:
            worst, worst_name = difference, name
    return worst, worst_name, problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    args = parser.parse_args(argv)
    failures, report = [], []

    def check(name, model, text, reference_gradient, wrong=(), extra=(), text_b=None,
              ids=None):
        """The engine's gradient of `model` against reference_gradient(ids) → (loss, {name:
        gradient}); then against each (label, wrong reference) of `wrong`, which must fail.
        `extra`: more of model grad's options; `ids`: the ids the references read (the model's
        tokens of text by default)."""
        with tempfile.TemporaryDirectory(prefix="attnviz-grad-") as work:
            loss, engine = engine_gradient(args.cli, model, text, pathlib.Path(work),
                                           list(extra) + (["--text-b", text_b] if text_b else []))
        ids = ids if ids is not None else token_ids(args.cli, model, text, text_b)
        ref_loss, reference = reference_gradient(ids)
        worst, worst_name, problems = compare(engine, reference)
        loss_difference = abs(loss - ref_loss) / max(abs(ref_loss), 1e-8)
        count = sum(len(part) for part in ids) if isinstance(ids, tuple) else len(ids)
        report.append(f"{name}: {count} tokens, {len(engine)} tensors, largest relative "
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

    def bert_case(name, folder, text, text_b=None, mask=(), wrong=False):
        folder = pathlib.Path(folder)
        file_names = list(gpt2_reference.read_safetensors(folder / "model.safetensors"))
        vocabulary = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")
        mask_id = vocabulary.index("[MASK]")

        def types_of(ids):  # [CLS] A [SEP] B [SEP]: 0 up to the first [SEP], then 1
            if text_b is None:
                return [0] * len(ids)
            first_sep = ids.index(vocabulary.index("[SEP]"))
            return [0 if i <= first_sep else 1 for i in range(len(ids))]

        def gradient(model, ignore_types=False):
            return lambda ids: bert_torch_gradient(model, ids, types_of(ids), list(mask), mask_id,
                                                   file_names, ignore_types)

        wrongs = []
        if wrong:
            wrongs.append(("attention one way (a causal mask)", gradient(BertOneWay(folder))))
            if text_b is not None:
                wrongs.append(("token types left out",
                               gradient(bert_reference.Bert(folder), ignore_types=True)))
        extra = ["--mask", ",".join(str(p) for p in mask)] if mask else []
        check(name, folder, text, gradient(bert_reference.Bert(folder)), wrongs, extra, text_b)

    def encoder_decoder_case(name, folder, source, text, wrong=False):
        config = json.loads((pathlib.Path(folder) / "config.json").read_text(encoding="utf-8"))
        end_id = config["eos_token_id"]
        ids = encoder_decoder_ids(args.cli, folder, source, text)

        def gradient(kind):
            return lambda pair: encoder_decoder_torch_gradient(kind(folder), *pair, end_id)

        wrongs = [("the cross-attention causal", gradient(CrossOneWay))] if wrong else []
        check(name, folder, text, gradient(marian_reference.Marian), wrongs, ["--source", source],
              ids=ids)

    with tempfile.TemporaryDirectory(prefix="attnviz-grad-marian-") as tmp:
        tmp = pathlib.Path(tmp)
        for untied in (False, True):
            folder = tmp / f"marian-{'untied' if untied else 'tied'}"
            write_tiny_marian.write_tiny_marian(folder, seed=21, untied=untied)
            encoder_decoder_case(
                f"tiny Marian ({'lm_head of its own' if untied else 'tied'})", folder,
                "God said, let there be light.", "Y dijo Dios: Sea la luz.", wrong=not untied)
        folder = tmp / "bart"
        write_tiny_marian.write_tiny_bart(folder, seed=22)
        encoder_decoder_case("tiny BART", folder, "the cat sat", "a cat sat on it", wrong=True)
        encoder_decoder_case("marian-web-es", ROOT / "assets/models/marian-web-es",
                             "God said, let there be light.", "Y dijo Dios: Sea la luz.",
                             wrong=True)
        # Without --source: refused in one line, nothing written.
        out = tmp / "refused.safetensors"
        refused = subprocess.run([args.cli, "model", "grad", str(tmp / "marian-tied"), "--text",
                                  "Sea la luz.", "-o", str(out)], capture_output=True, text=True)
        report.append(f"tiny Marian without --source: status {refused.returncode}, "
                      f"{refused.stderr.strip()}")
        if refused.returncode == 0 or "--source" not in refused.stderr or out.exists():
            failures.append("an encoder–decoder's gradient without a source was not refused")

    with tempfile.TemporaryDirectory(prefix="attnviz-grad-bert-") as tmp:
        tmp = pathlib.Path(tmp)
        for dtype, options, label in (("F32", {}, ""),
                                      ("F16", {"decoder": True}, ", decoder saved (tied)"),
                                      ("BF16", {"old_norm_names": True}, ", .gamma/.beta names"),
                                      ("F32", {"untied": True}, ", decoder of its own")):
            folder = tmp / f"bert-{dtype}-{'-'.join(options) or 'plain'}"
            write_tiny_bert.write_tiny_bert(folder, seed=13, dtype=dtype, **options)
            first = not options
            bert_case(f"tiny BERT {dtype}{label}, a pair, two masks", folder,
                      "the cat sat on the mat", "god said let there be light", mask=(2, 9),
                      wrong=first)
        folder = tmp / "bert-F32-plain"
        bert_case("tiny BERT, no mask (every token predicted where it stands)", folder,
                  "the dog was playing on the mat .")
        # BertModel (no MLM head) predicts no tokens: refused in one line, nothing written.
        folder = tmp / "bert-model"
        write_tiny_bert.write_tiny_bert(folder, seed=13, layout="model")
        out = tmp / "refused.safetensors"
        refused = subprocess.run([args.cli, "model", "grad", str(folder), "--text", "the cat",
                                  "-o", str(out)], capture_output=True, text=True)
        report.append(f"tiny BertModel (no MLM head): status {refused.returncode}, "
                      f"{refused.stderr.strip()}")
        if (refused.returncode != 1 or "no masked-language-model head" not in refused.stderr
                or out.exists()):
            failures.append("a BertModel's gradient was not refused in one line")
    bert_case("bert-web", ROOT / "assets/models/bert-web",
              "God said, let there be light, and there was light.", mask=(7,), wrong=True)

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
