#!/usr/bin/python3
"""The engine's real-model forward pass against independent float64 references, layer by layer.

`attnviz-cli model attention MODEL --text TEXT -o OUT.json [--ablate L.H]` writes every
intermediate the engine keeps; gpt2_reference.py (GPT-2) and llama_reference.py (llama2.c) compute
the same from the files with their own readers, in float64, sharing no code with the engine. Every
intermediate is compared: each layer's normalized input, each head's queries, keys, values, raw
scores (null exactly where masked), weights and output, the attention output, the residual after
attention, the MLP's output and the residual after the MLP; the final norm and the last position's
logits. The difference printed is the largest |engine − reference| of an intermediate divided by
its scale (the largest |reference| of it; 1 for weights). Tolerances: 1e-4 relative for every
intermediate, 1e-3 for the logits, and the same argmax.

Cases: tiny random GPT-2 folders (write_tiny_gpt2.py; F32, F16, BF16; names prefixed with
"transformer." or not) with a byte-level BPE vocabulary written here; the shipped gpt2-kjv-tiny on
a few sentences; ablations (--ablate L.H against the reference with that head's output zeroed, and
the logits must move); stories260K (llama2.c, grouped-query attention); tiny random BERT folders
(write_tiny_bert.py: both layouts, every dtype, sentence pairs, [MASK]s) and the shipped bert-web
(bert_reference.py).

Each comparison is also run once against a reference with a deliberate error (GELU without the
tanh approximation, another head ablated, RoPE on the halves of each head instead of adjacent
pairs, key/value heads shared the wrong way) and must fail there: a comparison that cannot fail
fails the test.

Usage: /usr/bin/python3 tests/oracle/model_oracle_test.py --cli build/attnviz-cli
"""

import argparse
import json
import math
import pathlib
import subprocess
import sys
import tempfile

import torch

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import bert_reference  # noqa: E402
import gpt2_reference  # noqa: E402
import llama_reference  # noqa: E402
import write_tiny_bert  # noqa: E402
import write_tiny_gpt2  # noqa: E402

INTERMEDIATE_TOLERANCE = 1e-4
LOGIT_TOLERANCE = 1e-3

KJV_SENTENCES = [
    "In the beginning God created the heaven and the earth.",
    "And God said, Let there be light: and there was light.",
    "And the LORD spake unto Moses, saying, Speak unto the children of Israel.",
    "Jesus wept. Jesus wept. Jesus wept.",
]
STORY_SENTENCES = [
    "Once upon a time, there was a little girl named Lily.",
    "She loved to play outside in the park with her friends. One day, she saw a big red ball.",
    "Tom and Sue went to the shop. Tom and Sue",
]
TINY_TEXTS = ["the cat sat on the mat", "Hé, the 猫!\n\tok"]
# Tiny BERT: (text, second text or None); [MASK] written in the text is the mask token.
WEB_BERT_TEXTS = [("God said, let there be [MASK].", None),
                  ("The teacher asked the students to open their books.",
                   "They read the first chapter together.")]
TINY_BERT_TEXTS = [("the cat sat on the [MASK].", None),
                   ("God said, let there be light!", "the dog was playing"),
                   ("Hé, the 猫 cafe", "ok [MASK] ok")]


# ---- a small byte-level BPE vocabulary for the tiny models ----


def bytes_to_unicode():
    """GPT-2's byte alphabet: printable bytes stand for themselves, the others from U+0100 on."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
                 list(range(ord("®"), ord("ÿ") + 1)))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


TINY_MERGES = [("h", "e"), ("Ġ", "t"), ("Ġt", "he"), ("a", "t")]
TINY_VOCAB = 256 + len(TINY_MERGES) + 1  # the bytes, the merges, <|endoftext|>


def write_tokenizer(folder):
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    for left, right in TINY_MERGES:
        vocab[left + right] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    assert len(vocab) == TINY_VOCAB
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    merges = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in TINY_MERGES)
    (folder / "merges.txt").write_text(merges, encoding="utf-8")


# ---- running the engine ----


def engine(cli, model, text, work, ablate=(), text_b=None):
    out = pathlib.Path(work) / "engine.json"
    command = [cli, "model", "attention", str(model), "--text", text, "-o", str(out)]
    if text_b is not None:
        command += ["--text-b", text_b]
    for layer, head in ablate:  # from 0, as the references' head masks; --ablate from 1
        command += ["--ablate", f"{layer + 1}.{head + 1}"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: status {run.returncode}: {run.stderr.strip()}")
    return json.loads(out.read_text(encoding="utf-8"))


# ---- the comparison ----


def relative_difference(engine_matrix, reference, scale=None):
    """max |engine − reference| / scale (default: max |reference|), masked cells (null) skipped."""
    ref = reference.double()
    mine = torch.tensor([[math.nan if v is None else v for v in row] for row in engine_matrix],
                        dtype=torch.float64)
    if mine.shape != ref.shape:
        return math.inf
    seen = ~torch.isnan(mine)
    if not seen.any():
        return 0.0
    if scale is None:
        scale = max(ref[seen].abs().max().item(), 1e-30)
    return ((mine - ref).abs()[seen].max() / scale).item()


def null_where_masked(engine_matrix, mask):
    """The engine's raw scores are null exactly where the reference masks."""
    return all((v is None) == (not mask[i][j].item())
               for i, row in enumerate(engine_matrix) for j, v in enumerate(row))


class Comparison:
    def __init__(self, name):
        self.name, self.failures, self.lines, self.largest = name, [], [], {}

    def record(self, label, group, difference, tolerance):
        self.largest[group] = max(self.largest.get(group, 0.0), difference)
        if not difference <= tolerance:  # NaN fails
            self.failures.append(f"{label}: {difference:.3g} > {tolerance:g}")
        return difference

    def ok(self):
        return not self.failures


def compare_heads(note, result, where, heads, ref_heads, is_llama):
    """One attention block's heads (self or cross) against the reference's."""
    for h, (head, ref_head) in enumerate(zip(heads, ref_heads)):
        at = f"{where} head {h}"
        if is_llama and head["kv_head"] != ref_head["kv_head"]:
            result.failures.append(f"{at}: kv_head {head['kv_head']} in the engine, "
                                   f"{ref_head['kv_head']} in the reference")
        for key, ref_key, scale in (("queries", "q", None), ("keys", "k", None),
                                    ("values", "v", None), ("scores", "scores", None),
                                    ("weights", "weights", 1.0), ("output", "output", None)):
            if scale is None and key == "output" and ref_head[ref_key].abs().max() == 0:
                scale = 1.0  # an ablated head: both must be exactly 0
            note(key, relative_difference(head[key], ref_head[ref_key], scale),
                 label=f"{at} {key}")
        if not null_where_masked(head["scores"], ref_head["mask"]):
            result.failures.append(f"{at}: scores not null exactly where masked")


def compare_layers(result, layers, ref_layers, is_llama, stack=""):
    """Every intermediate of a stack of layers; an encoder–decoder's decoder layers also their
    cross-attention. `stack` names the stack in messages ("encoder ")."""
    tol = INTERMEDIATE_TOLERANCE
    if len(layers) != len(ref_layers):
        result.failures.append(f"{stack}different numbers of layers")
        return
    for l, (mine, theirs) in enumerate(zip(layers, ref_layers)):
        per_layer = {}

        def note(key, difference, tolerance=tol, label=None):
            result.record(label or f"{stack}layer {l} {key}", key, difference, tolerance)
            per_layer[key] = max(per_layer.get(key, 0.0), difference)

        note("normalized", relative_difference(mine["normalized"], theirs["attention_norm"]))
        blocks = [("heads", "heads", f"{stack}layer {l}")]
        if "cross_heads" in theirs or "cross_heads" in mine:
            blocks.append(("cross_heads", "cross_heads", f"{stack}layer {l} cross"))
        for key, ref_key, where in blocks:
            if key not in mine or len(mine[key]) != len(theirs.get(ref_key, [])):
                result.failures.append(f"{where}: different numbers of heads")
                continue
            compare_heads(note, result, where, mine[key], theirs[ref_key], is_llama)
        pairs = [("attention_output", "attention_output"),
                 ("residual_mid", "residual_after_attention")]
        if "cross_heads" in theirs:
            pairs += [("cross_attention_output", "cross_attention_output"),
                      ("residual_cross", "residual_after_cross")]
        pairs += [("mlp_output", "mlp_output"), ("residual_out", "residual_after_mlp")]
        for key, ref_key in pairs:
            if key not in mine:
                result.failures.append(f"{stack}layer {l}: no {key} in the engine's output")
                continue
            note(key, relative_difference(mine[key], theirs[ref_key]))
        result.lines.append(f"  {stack}layer {l}: "
                            + "  ".join(f"{k} {v:.1e}" for k, v in per_layer.items()))


def compare(name, out, ref, is_llama):
    """Every intermediate of the engine's JSON `out` against the reference's `ref`."""
    result = Comparison(name)
    tol = INTERMEDIATE_TOLERANCE
    compare_layers(result, out["layers"], ref["layers"], is_llama)
    if any(f.endswith("different numbers of layers") for f in result.failures):
        return result
    final = relative_difference(out["final_normalized"], ref["final_norm"])
    result.record("final_normalized", "final_normalized", final, tol)
    if "logits" not in ref:  # BertModel: no head, no logits
        if "logits" in out:
            result.failures.append("logits written for a model without an output head")
        result.lines.append(f"  final_normalized {final:.1e}  (no MLM head: no logits)")
        return result
    if "logit_positions" in out:  # an encoder: the logits at its [MASK]s (or its last position)
        positions = out["logit_positions"]
        logits = relative_difference(out["logits"], ref["logits"][positions])
        result.record("logits", "logits", logits, LOGIT_TOLERANCE)
        mine = torch.tensor(out["logits"], dtype=torch.float64).argmax(dim=-1).tolist()
        theirs = ref["logits"][positions].argmax(dim=-1).tolist()
        if mine != theirs:
            result.failures.append(f"argmax {mine} in the engine, {theirs} in the reference")
        result.lines.append(f"  final_normalized {final:.1e}  logits at {positions} {logits:.1e}  "
                            f"argmax {mine} {'=' if mine == theirs else '≠'} {theirs}")
        return result
    if len(out["logits"]) != 1:  # (1, vocab): the last position's
        result.failures.append(f"logits: {len(out['logits'])} rows, 1 expected")
        return result
    engine_logits = torch.tensor(out["logits"][0], dtype=torch.float64)
    ref_logits = ref["logits"][-1]
    logits = relative_difference(out["logits"], ref_logits.unsqueeze(0))
    result.record("logits", "logits", logits, LOGIT_TOLERANCE)
    same_argmax = int(engine_logits.argmax()) == int(ref_logits.argmax())
    if not same_argmax:
        result.failures.append(f"argmax {int(engine_logits.argmax())} in the engine, "
                               f"{int(ref_logits.argmax())} in the reference")
    result.lines.append(f"  final_normalized {final:.1e}  logits {logits:.1e}  argmax "
                        f"{int(engine_logits.argmax())} {'=' if same_argmax else '≠'} "
                        f"{int(ref_logits.argmax())}")
    return result


# ---- deliberate errors: every comparison must be able to fail ----


def gelu_exact(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


class Gpt2WithExactGelu(gpt2_reference.Gpt2):
    gelu_tanh = staticmethod(gelu_exact)


class BertWithTanhGelu(bert_reference.Bert):
    """GELU's tanh approximation where BERT's "gelu" is erf's."""

    def gelu(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


class BertWithTypesIgnored(bert_reference.Bert):
    """Every token of type 0: the second sentence's token type embedding left out."""

    def forward(self, ids, head_mask=None, types=None):
        return super().forward(ids, head_mask, None)


ROPE_ON_PAIRS = llama_reference.rope


def rope_on_halves(x, head_size):
    """Rotary positions as GPT-NeoX pairs them (i with i + head_size/2): not llama2.c's."""
    n, width = x.shape
    heads = x.reshape(n, width // head_size, head_size)
    half = head_size // 2
    pairs = torch.cat([heads[..., :half].unsqueeze(-1), heads[..., half:].unsqueeze(-1)], -1)
    turned = ROPE_ON_PAIRS(pairs.reshape(n, width), head_size).reshape(n, -1, half, 2)
    return torch.cat([turned[..., 0], turned[..., 1]], -1).reshape(n, width)


class LlamaWithKvHeadsInterleaved(llama_reference.Llama):
    """Query head h reading key/value head h mod n_kv_heads instead of h / (heads / kv_heads)."""

    def kv_head_of(self, head):
        return head % self.kv_heads


# ---- the cases ----


def run_case(name, cli, model_path, text, work, reference, ablate=(), is_llama=False,
             wrong_reference=None, wrong_ablate=None, report=None, text_b=None):
    """Compares the engine with `reference` (a model object); with wrong_reference or
    wrong_ablate, also checks that the comparison fails against them. An encoder's tokens carry
    their types, which its reference is given."""
    out = engine(cli, model_path, text, work, ablate, text_b)
    ids = [t["id"] for t in out["tokens"]]
    types = [t.get("type", 0) for t in out["tokens"]]
    mask = {(l, h): 0.0 for l, h in ablate}
    extra = {"types": types} if "type" in out["tokens"][0] else {}
    with torch.no_grad():
        ref = reference.forward(ids, mask, **extra)
    result = compare(name, out, ref, is_llama)
    print(f"{name}: {len(ids)} tokens, {'ok' if result.ok() else 'FAILED'}; largest relative "
          "differences:")
    for line in result.lines:
        print(line)
    for failure in result.failures[:20]:
        print(f"  FAIL {failure}")
    if report is not None:
        report.append(result)
    ok = result.ok()
    if wrong_reference is not None or wrong_ablate is not None:
        wrong_model = wrong_reference or reference
        wrong_mask = {(l, h): 0.0 for l, h in (wrong_ablate if wrong_ablate is not None else ablate)}
        with torch.no_grad():
            wrong = compare(name, out, wrong_model.forward(ids, wrong_mask, **extra), is_llama)
        what = (type(wrong_model).__name__ if wrong_reference is not None
                else f"ablating {wrong_ablate} instead of {list(ablate)}")
        if wrong.ok():
            print(f"  FAIL the comparison passed against a deliberately wrong reference ({what})")
            ok = False
        else:
            print(f"  (against a deliberately wrong reference, {what}: {len(wrong.failures)} "
                  f"differences past tolerance, e.g. {wrong.failures[0]})")
    return ok, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True, help="the attnviz-cli binary")
    args = parser.parse_args(argv)
    torch.set_grad_enabled(False)
    all_ok = True
    report = []
    summary = {}

    def case(*a, **k):
        nonlocal all_ok
        ok, out = run_case(*a, report=report, **k)
        all_ok = all_ok and ok
        return out

    with tempfile.TemporaryDirectory(prefix="attnviz-model-oracle-") as tmp:
        tmp = pathlib.Path(tmp)
        # Tiny random GPT-2 folders in every dtype, prefixed and not.
        for dtype in ("F32", "F16", "BF16"):
            for prefix in (False, True):
                folder = tmp / f"tiny-{dtype}-{'prefixed' if prefix else 'bare'}"
                write_tiny_gpt2.write_tiny_gpt2(folder, seed=7, dtype=dtype, prefix=prefix,
                                                lm_head=prefix, mask_buffers=prefix,
                                                vocab=TINY_VOCAB, positions=24)
                write_tokenizer(folder)
                reference = gpt2_reference.Gpt2(folder)
                for t, text in enumerate(TINY_TEXTS):
                    case(f"tiny GPT-2 {dtype} {'prefixed' if prefix else 'unprefixed'} "
                         f"text {t + 1}", args.cli, folder, text, tmp, reference,
                         wrong_reference=Gpt2WithExactGelu(folder) if t == 0 else None)
        summary["tiny GPT-2 (F32, F16, BF16; prefixed and not)"] = len(report)

        # Tiny random BERT folders: BertForMaskedLM (prefixed, with the MLM head) in every dtype,
        # with the decoder stored, untied, and with old LayerNorm names; BertModel (no head).
        bert_cases = [("masked-lm", "F32", {}), ("masked-lm", "F16", {"decoder": True}),
                      ("masked-lm", "BF16", {"old_norm_names": True}),
                      ("masked-lm", "F32", {"untied": True}), ("model", "F32", {})]
        for layout, dtype, options in bert_cases:
            folder = tmp / f"bert-{layout}-{dtype}-{'-'.join(options) or 'plain'}"
            write_tiny_bert.write_tiny_bert(folder, seed=11, dtype=dtype, layout=layout,
                                            **options)
            reference = bert_reference.Bert(folder)
            for t, (text, text_b) in enumerate(TINY_BERT_TEXTS):
                wrong = None
                if t == 0:
                    wrong = BertWithTanhGelu(folder)
                elif t == 1:
                    wrong = BertWithTypesIgnored(folder)
                case(f"tiny BERT {folder.name[5:]} text {t + 1}", args.cli, folder, text, tmp,
                     reference, wrong_reference=wrong, text_b=text_b)
        folder = tmp / "bert-masked-lm-F32-plain"
        reference = bert_reference.Bert(folder)
        case("tiny BERT --ablate 2.3", args.cli, folder, TINY_BERT_TEXTS[1][0], tmp, reference,
             ablate=[(1, 2)], wrong_ablate=[(1, 3)], text_b=TINY_BERT_TEXTS[1][1])
        summary["tiny BERT"] = len(report) - summary["tiny GPT-2 (F32, F16, BF16; prefixed and not)"]

        # The shipped BERT, trained here: a sentence with a [MASK], a pair, an ablation.
        bert_web = ROOT / "assets/models/bert-web"
        reference = bert_reference.Bert(bert_web)
        for s, (text, text_b) in enumerate(WEB_BERT_TEXTS):
            case(f"bert-web text {s + 1}", args.cli, bert_web, text, tmp, reference,
                 text_b=text_b, wrong_reference=BertWithTanhGelu(bert_web) if s == 0 else None)
        case("bert-web --ablate 2.1", args.cli, bert_web, WEB_BERT_TEXTS[0][0], tmp, reference,
             ablate=[(1, 0)], wrong_ablate=[(1, 1)])

        # The shipped GPT-2, trained here.
        kjv = ROOT / "assets/models/gpt2-kjv-tiny"
        reference = gpt2_reference.Gpt2(kjv)
        wrong = Gpt2WithExactGelu(kjv)
        for s, text in enumerate(KJV_SENTENCES):
            case(f"gpt2-kjv-tiny sentence {s + 1}", args.cli, kjv, text, tmp, reference,
                 wrong_reference=wrong if s == 0 else None)

        # Ablation: --ablate L.H is the reference with that head's output zeroed, and it matters.
        text = KJV_SENTENCES[3]
        plain = engine(args.cli, kjv, text, tmp)
        for ablate in ([(0, 2)], [(1, 1)], [(0, 2), (1, 1)]):
            out = case(f"gpt2-kjv-tiny --ablate {' '.join(f'{l + 1}.{h + 1}' for l, h in ablate)}",
                       args.cli, kjv, text, tmp, reference, ablate=ablate,
                       wrong_ablate=[(l, (h + 1) % 4) for l, h in ablate])
            moved = max(abs(a - b) for a, b in zip(out["logits"][0], plain["logits"][0]))
            print(f"  the logits moved by up to {moved:.3g}")
            if not moved > 1e-2:
                print("  FAIL ablating the head left the logits as they were")
                all_ok = False

        # stories260K: llama2.c, RMSNorm, RoPE, grouped-query attention, SwiGLU.
        stories = ROOT / "assets/models/stories260K/stories260K.bin"
        reference = llama_reference.Llama(stories)
        wrong_rope = llama_reference.Llama(stories)
        wrong_rope_forward = wrong_rope.forward

        class LlamaWithRopeOnHalves:
            def forward(self, ids, head_mask=None):
                saved = llama_reference.rope
                llama_reference.rope = rope_on_halves
                try:
                    return wrong_rope_forward(ids, head_mask)
                finally:
                    llama_reference.rope = saved

        wrong_kv = LlamaWithKvHeadsInterleaved(stories)
        for s, text in enumerate(STORY_SENTENCES):
            case(f"stories260K sentence {s + 1}", args.cli, stories, text, tmp, reference,
                 is_llama=True,
                 wrong_reference=[LlamaWithRopeOnHalves(), wrong_kv, None][s])
        out = case("stories260K --ablate 3.6", args.cli, stories, STORY_SENTENCES[0], tmp,
                   reference, ablate=[(2, 5)], is_llama=True, wrong_ablate=[(2, 4)])

    print("\nlargest relative differences by case group:")
    groups = [("tiny GPT-2", lambda r: r.name.startswith("tiny GPT-2")),
              ("tiny BERT", lambda r: r.name.startswith("tiny BERT") and "--ablate" not in r.name),
              ("tiny BERT ablation", lambda r: r.name.startswith("tiny BERT --ablate")),
              ("bert-web", lambda r: r.name.startswith("bert-web")),
              ("gpt2-kjv-tiny", lambda r: r.name.startswith("gpt2-kjv-tiny sentence")),
              ("gpt2-kjv-tiny ablations", lambda r: "--ablate" in r.name and "gpt2" in r.name),
              ("stories260K", lambda r: r.name.startswith("stories260K sentence")),
              ("stories260K ablation", lambda r: r.name.startswith("stories260K --ablate"))]
    for title, belongs in groups:
        members = [r for r in report if belongs(r)]
        intermediates = max((v for r in members for k, v in r.largest.items() if k != "logits"),
                            default=0.0)
        logits = max((r.largest.get("logits", 0.0) for r in members), default=0.0)
        print(f"  {title}: {len(members)} cases, intermediates {intermediates:.1e} "
              f"(tolerance {INTERMEDIATE_TOLERANCE:g}), logits {logits:.1e} "
              f"(tolerance {LOGIT_TOLERANCE:g})")
    print("model oracle: " + ("ok" if all_ok else "FAILED"))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
