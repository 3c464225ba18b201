#!/usr/bin/python3
"""The engine's encoder–decoder (Marian) against independent float64 references, layer by layer.

`attnviz-cli model attention MODEL --source S [--text T] -o OUT.json` writes every intermediate
the engine keeps of both stacks: the encoder's layers, and the decoder's with their
cross-attention. marian_reference.py computes the same from the files with its own reader, in
float64, sharing no code with the engine, and every intermediate is compared as
model_oracle_test.py compares a decoder's (its compare_layers): each head's queries, keys, values,
raw scores, weights and output, self and cross, each layer's residuals, the encoder's output, the
decoder's final stream and the last position's logits (1e-4 relative; 1e-3 and the same argmax for
the logits).

The tokens: the source's and the target's ids are checked against Debian's python3-sentencepiece
with vocab.json (as Hugging Face's MarianTokenizer maps pieces to ids), on ordinary, empty and odd
texts (accents, emoji, CJK, runs of spaces, a language code).

Cases: tiny random Marian folders (write_tiny_marian.py: F32, F16, BF16, an untied lm_head) with a
given target and with the greedy translation; tiny BART folders (learned positions from row 2,
embedding norms, GELU, GPT-2's BPE with <s> text </s>); knock-outs of an encoder, a decoder and a
cross-attention head (--ablate encoder:L.H, L.H, cross:L.H). Each comparison is also run against a
deliberately wrong reference (Marian's sinusoids interleaved sin, cos, sin, ... as in "Attention
Is All You Need"; the embeddings not scaled by √d; BART's positions from row 0; another head
knocked out) and must fail there.

The commands as a user runs them: translate (the greedy target), tokens --target (its ids as
python3-sentencepiece's), info, bench, and nine mistakes, each one line on standard error with
status 1 or 2 and an -o file left as it was.

Usage: /usr/bin/python3 tests/oracle/marian_oracle_test.py --cli build/attnviz-cli
"""

import argparse
import json
import math
import pathlib
import subprocess
import sys
import tempfile

import sentencepiece
import torch

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import marian_reference  # noqa: E402
import model_oracle_test  # noqa: E402
import write_tiny_marian  # noqa: E402

PAIRS = [
    ("God said, let there be light.", "Y dijo Dios: Sea la luz"),
    ("The teacher asked the students to open their books.", "El maestro"),
    ("In the beginning", ""),
]
ODD_TEXTS = ["", " ", "Light!", "  two   spaces  ", "café naïve Ωmega", "God 🙂 said 光",
             "line\nbreak\ttab", ">>es<< God said", "ﬁ ligature, full-width ＡＢＣ",
             "e\u0301 combining", "\u200bzero width"]


def engine(cli, model, source, target, work, ablate=()):
    out = pathlib.Path(work) / "engine.json"
    command = [cli, "model", "attention", str(model), "--source", source, "-o", str(out)]
    if target is not None:
        command += ["--text", target]
    for stack, layer, head in ablate:  # from 0, as the reference's head masks; --ablate from 1
        prefix = {"encoder": "encoder:", "cross": "cross:", "decoder": ""}[stack]
        command += ["--ablate", f"{prefix}{layer + 1}.{head + 1}"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: status {run.returncode}: {run.stderr.strip()}")
    return json.loads(out.read_text(encoding="utf-8"))


def compare(name, out, ref):
    result = model_oracle_test.Comparison(name)
    tol = model_oracle_test.INTERMEDIATE_TOLERANCE
    difference = model_oracle_test.relative_difference
    model_oracle_test.compare_layers(result, out["encoder_layers"], ref["encoder"]["layers"],
                                     False, "encoder ")
    model_oracle_test.compare_layers(result, out["layers"], ref["layers"], False)
    if result.failures and "numbers of layers" in " ".join(result.failures):
        return result
    memory = difference(out["encoder_output"], ref["encoder"]["layers"][-1]["residual_after_mlp"])
    result.record("encoder_output", "encoder_output", memory, tol)
    final = difference(out["final_normalized"], ref["layers"][-1]["residual_after_mlp"])
    result.record("final_normalized", "final_normalized", final, tol)
    ref_logits = ref["logits"][-1]
    logits = difference(out["logits"], ref_logits.unsqueeze(0))
    result.record("logits", "logits", logits, model_oracle_test.LOGIT_TOLERANCE)
    mine = int(torch.tensor(out["logits"][0]).argmax())
    theirs = int(ref_logits.argmax())
    if mine != theirs:
        result.failures.append(f"argmax {mine} in the engine, {theirs} in the reference")
    result.lines.append(f"  encoder_output {memory:.1e}  final {final:.1e}  logits {logits:.1e}  "
                        f"argmax {mine} {'=' if mine == theirs else '≠'} {theirs}")
    return result


class InterleavedSinusoids(marian_reference.Marian):
    """Positions as "Attention Is All You Need" writes them (sin and cos alternating), not as
    Marian stores them (sines first, then cosines)."""

    def __init__(self, folder):
        super().__init__(folder)
        table = torch.zeros_like(self.positions)
        half = self.d // 2
        table[:, 0::2], table[:, 1::2] = self.positions[:, :half], self.positions[:, half:]
        self.positions = table


class UnscaledEmbeddings(marian_reference.Marian):
    def __init__(self, folder):
        super().__init__(folder)
        self.scale = 1.0


class PositionsFromRowZero(marian_reference.Marian):
    """BART's learned positions read from row 0, not row 2."""

    def __init__(self, folder):
        super().__init__(folder)
        self.position_offset = 0


def run_case(name, cli, folder, source, target, work, reference, report, ablate=(),
             wrong_reference=None, wrong_ablate=None):
    out = engine(cli, folder, source, target, work, ablate)
    source_ids = [t["id"] for t in out["source_tokens"]]
    ids = [t["id"] for t in out["tokens"]]
    with torch.no_grad():
        result = compare(name, out, reference.forward(source_ids, ids, ablate))
    report.append(result)
    print(f"{name}: {len(source_ids)} source and {len(ids)} target tokens, "
          f"{'ok' if result.ok() else 'FAILED'}; largest relative differences:")
    for line in result.lines:
        print(line)
    for failure in result.failures[:20]:
        print(f"  FAIL {failure}")
    ok = result.ok()
    if wrong_reference is not None or wrong_ablate is not None:
        model = wrong_reference or reference
        with torch.no_grad():
            wrong = compare(name, out, model.forward(
                source_ids, ids, wrong_ablate if wrong_ablate is not None else ablate))
        what = (type(model).__name__ if wrong_reference is not None
                else f"knocking out {wrong_ablate} instead of {list(ablate)}")
        if wrong.ok():
            print(f"  FAIL the comparison passed against a deliberately wrong reference ({what})")
            ok = False
        else:
            print(f"  (against a deliberately wrong reference, {what}: {len(wrong.failures)} "
                  f"differences past tolerance, e.g. {wrong.failures[0]})")
    return ok, out


def check_parts(cli, folder, reference, work):
    """The app's three views of one encoder–decoder (ModelSpec's part: encoder self-attention,
    decoder self-attention, cross-attention), as `attnviz-cli compute` runs a scenario through the
    app's pipeline, each top layer's heads (Q, K, V, α, α·V) and attention output against the
    reference's; each also compared with another part's reference, which must fail."""
    source, target = PAIRS[0]
    ok = True
    exported = {}
    for part in ("encoder", "main", "cross"):
        scenario = {"format": "attnviz-scenario", "version": 2, "target": source,
                    "model": {"name": str(folder), "part": part, "decoder_text": target}}
        path = pathlib.Path(work) / f"part-{part}.json"
        path.write_text(json.dumps(scenario), encoding="utf-8")
        run = subprocess.run([cli, "compute", str(path)], capture_output=True, text=True,
                             timeout=120)
        if run.returncode != 0:
            print(f"parts: compute {part}: status {run.returncode}: {run.stderr.strip()}")
            return False
        exported[part] = json.loads(run.stdout)
    out = engine(cli, folder, source, target, work)
    with torch.no_grad():
        ref = reference.forward([t["id"] for t in out["source_tokens"]],
                                [t["id"] for t in out["tokens"]], ())

    def top(part, index=-1):
        if part == "encoder":
            layer = ref["encoder"]["layers"][index]
            return layer["heads"], layer["attention_output"]
        layer = ref["layers"][index]
        if part == "main":
            return layer["heads"], layer["attention_output"]
        return layer["cross_heads"], layer["cross_attention_output"]

    def largest(export, part, index=-1):
        heads, output = top(part, index)
        worst = 0.0
        for mine, theirs in zip(export["heads"], heads):
            for key, ref_key in (("Q", "q"), ("K", "k"), ("V", "v"), ("weights", "weights"),
                                 ("output", "output")):
                worst = max(worst, model_oracle_test.relative_difference(mine[key],
                                                                         theirs[ref_key]))
        return max(worst, model_oracle_test.relative_difference(export["output"], output))

    tolerance = model_oracle_test.INTERMEDIATE_TOLERANCE
    for part, wrong in (("encoder", "main"), ("main", "cross"), ("cross", "main")):
        difference = largest(exported[part], part)
        # Deliberately wrong: another part (other shapes, except for main and cross when the
        # source and the target are as long), and the same part's layer below (the same shapes).
        against_wrong = min(largest(exported[part], wrong), largest(exported[part], part, -2))
        passed = difference <= tolerance and against_wrong > tolerance
        print(f"parts: {part}: the top layer's heads and output against the reference's, largest "
              f"relative difference {difference:.1e}; against the {wrong} part's and the layer "
              f"below's, at least {against_wrong:.1e} (must fail): "
              f"{'ok' if passed else 'FAILED'}")
        ok = ok and passed
    cross = exported["cross"]
    queries, keys = cross["target_tokens"], cross["source_tokens"]
    expected_queries = [t["text"] for t in out["tokens"]]
    expected_keys = [t["text"] for t in out["source_tokens"]]
    if queries != expected_queries or keys != expected_keys:
        print(f"parts: FAIL the cross part's queries {queries} and keys {keys} are not the target "
              f"{expected_queries} and the source {expected_keys}")
        ok = False
    if cross["config"]["causal"] or cross["mode"] != "cross":
        print(f"parts: FAIL the cross part is causal, or its mode is {cross['mode']}")
        ok = False
    if exported["main"]["mode"] != "self" or not exported["main"]["config"]["causal"]:
        print("parts: FAIL the decoder's self-attention is not self-attention with its mask")
        ok = False
    return ok


def reference_ids(folder, text, side):
    """MarianTokenizer's ids: the side's SentencePiece model's pieces looked up in vocab.json
    (<unk> when missing), </s> after a source; a leading language code one token."""
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    processor = sentencepiece.SentencePieceProcessor(
        model_file=str(folder / ("source.spm" if side == "source" else "target.spm")))
    ids = []
    if side == "source" and text.startswith(">>") and "<<" in text[2:]:
        code = text[:text.index("<<", 2) + 2]
        if code in vocab:
            ids.append(vocab[code])
            text = text[len(code):]
    ids += [vocab.get(piece, vocab["<unk>"]) for piece in processor.encode(text, out_type=str)]
    return ids + ([vocab["</s>"]] if side == "source" else [])


def check_tokens(cli, folder, work):
    """The engine's source and target ids against the reference's, on every text."""
    failures = 0
    for text in [s for s, _ in PAIRS] + ODD_TEXTS:
        out = engine(cli, folder, text, text, work)
        for side, tokens in (("source", out["source_tokens"]), ("target", out["tokens"][1:])):
            mine = [t["id"] for t in tokens]
            theirs = reference_ids(folder, text, side)
            if mine != theirs:
                failures += 1
                print(f"  FAIL {side} {text!r}: engine {mine}, python3-sentencepiece {theirs}")
    total = 2 * (len(PAIRS) + len(ODD_TEXTS))
    print(f"SentencePiece ids: {total - failures} of {total} texts (source and target) as "
          "python3-sentencepiece and vocab.json give them")
    return failures == 0


def check_commands(cli, folder, bert_folder, work):
    """The encoder–decoder's commands as a user runs them: translate, tokens --target, bench,
    info, and the mistakes (one line on standard error; status 1 for bad input, 2 for usage; an
    -o file left as it was)."""
    failures = []

    def run(*args):
        return subprocess.run([cli, *map(str, args)], capture_output=True, text=True, timeout=120)

    def expect(result, status, what, contains=None):
        lines = result.stderr.splitlines()
        if result.returncode != status or (status and len(lines) != 1) or (
                contains and contains not in result.stdout + result.stderr):
            failures.append(f"{what}: status {result.returncode}, {result.stderr.strip()!r}, "
                            f"{result.stdout[:80]!r}")

    # translate is the greedy translation: the text of attention's target tokens, start left out.
    translated = run("model", "translate", folder, "--text", PAIRS[0][0])
    expect(translated, 0, "translate")
    greedy = engine(cli, folder, PAIRS[0][0], None, work)
    ids = [t["id"] for t in greedy["tokens"]]
    if len(ids) < 1 or ids[0] != json.loads((folder / "config.json").read_text())[
            "decoder_start_token_id"]:
        failures.append(f"the greedy target does not start with the start token: {ids[:3]}")
    target = run("model", "tokens", folder, "--target", "--text", PAIRS[0][1])
    expect(target, 0, "tokens --target")
    theirs = reference_ids(folder, PAIRS[0][1], "target")
    listed = [int(line.split()[1]) for line in target.stdout.splitlines()[1:-1]]
    if listed != theirs:
        failures.append(f"tokens --target lists {listed}, python3-sentencepiece {theirs}")
    expect(run("model", "info", folder), 0, "info", "encoder–decoder")
    expect(run("model", "bench", folder, "--tokens", "8", "--repeat", "3"), 0, "bench",
           "allocations=0")
    kept = work / "kept.json"
    before = b'{"kept": true}\n'
    kept.write_bytes(before)
    for status, args, contains in (
            (2, ("attention", folder, "--text", "x", "-o", kept), "--source"),
            (2, ("attention", bert_folder, "--source", "x", "--text", "y", "-o", kept), "--source"),
            (1, ("attention", folder, "--source", "x " * 200, "-o", kept), "at most 64"),
            (2, ("attention", folder, "--source", "x", "--ablate", "cross:3.1", "-o", kept),
             "cross:3.1"),
            (2, ("attention", folder, "--source", "x", "--ablate", "encoder:1.5", "-o", kept),
             "encoder:1.5"),
            (2, ("attention", folder, "--source", "x", "--ablate", "encoder:0.4", "-o", kept),
             "--ablate-from-0 encoder:0.4"),
            (2, ("attention", folder, "--source", "x", "--ablate-from-0", "encoder:0.4", "-o",
                 kept), "counted from 0"),
            (1, ("predict", folder, "--text", "x"), "model translate"),
            (1, ("fill", folder, "--text", "x"), "model translate"),
            (1, ("translate", bert_folder, "--text", "x"), "translates nothing"),
            (2, ("tokens", bert_folder, "--target", "--text", "x"), "--target")):
        expect(run("model", *args), status, " ".join(map(str, args[:1] + args[2:4])), contains)
    if kept.read_bytes() != before:
        failures.append("a failed command touched its -o file")
    for failure in failures:
        print(f"  FAIL {failure}")
    print(f"commands: translate, tokens --target, info, bench and 9 mistakes: "
          f"{'ok' if not failures else 'FAILED'}")
    return not failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True)
    args = parser.parse_args(argv)
    torch.set_grad_enabled(False)
    all_ok, report = True, []
    with tempfile.TemporaryDirectory(prefix="attnviz-marian-oracle-") as tmp:
        tmp = pathlib.Path(tmp)
        for dtype, untied in (("F32", False), ("F16", False), ("BF16", False), ("F32", True)):
            folder = tmp / f"marian-{dtype}{'-untied' if untied else ''}"
            write_tiny_marian.write_tiny_marian(folder, dtype=dtype, untied=untied)
            reference = marian_reference.Marian(folder)
            for p, (source, target) in enumerate(PAIRS + [(PAIRS[0][0], None)]):
                wrong = {0: InterleavedSinusoids, 1: UnscaledEmbeddings}.get(p)
                ok, _ = run_case(f"tiny Marian {folder.name[7:]} pair {p + 1}"
                                 + (" (greedy)" if target is None else ""), args.cli, folder,
                                 source, target, tmp, reference, report,
                                 wrong_reference=wrong(folder) if wrong else None)
                all_ok = all_ok and ok
        # Tiny BART: learned positions from row 2, embedding norms, GELU; GPT-2's BPE with
        # <s> text </s>, the decoder reading </s> <s> and the target.
        for dtype in ("F32", "BF16"):
            folder = tmp / f"bart-{dtype}"
            write_tiny_marian.write_tiny_bart(folder, dtype=dtype)
            reference = marian_reference.Marian(folder)
            for p, (source, target) in enumerate(PAIRS + [(PAIRS[0][0], None)]):
                ok, out = run_case(f"tiny BART {dtype} pair {p + 1}"
                                   + (" (greedy)" if target is None else ""), args.cli, folder,
                                   source, target, tmp, reference, report,
                                   wrong_reference=PositionsFromRowZero(folder) if p == 0 else None)
                all_ok = all_ok and ok
                ends = [t["text"] for t in out["source_tokens"][::len(out["source_tokens"]) - 1]]
                if ends != ["<s>", "</s>"] or out["tokens"][0]["text"] != "</s>":
                    print(f"  FAIL BART's source is not <s> … </s> ({ends}), or the target does "
                          f"not start with </s> ({out['tokens'][0]['text']})")
                    all_ok = False
        folder = tmp / "marian-F32"
        reference = marian_reference.Marian(folder)
        plain = engine(args.cli, folder, *PAIRS[0], tmp)
        for ablate, wrong in (([("encoder", 1, 2)], [("encoder", 1, 3)]),
                              ([("decoder", 0, 1)], [("cross", 0, 1)]),
                              ([("cross", 1, 0)], [("cross", 1, 1)]),
                              ([("encoder", 0, 0), ("cross", 0, 3)], [("encoder", 0, 0)])):
            ok, out = run_case("tiny Marian --ablate " + " ".join(f"{s}:{l + 1}.{h + 1}"
                                                                  for s, l, h in ablate),
                               args.cli, folder, *PAIRS[0], tmp, reference, report,
                               ablate=ablate, wrong_ablate=wrong)
            moved = max(abs(a - b) for a, b in zip(out["logits"][0], plain["logits"][0]))
            print(f"  the logits moved by up to {moved:.3g}")
            all_ok = all_ok and ok and moved > 1e-3
        all_ok = check_parts(args.cli, folder, reference, tmp) and all_ok
        all_ok = check_tokens(args.cli, folder, tmp) and all_ok
        all_ok = check_commands(args.cli, folder, ROOT / "assets/models/bert-web", tmp) and all_ok
    intermediates = max((v for r in report for k, v in r.largest.items() if k != "logits"),
                        default=math.inf)
    logits = max((r.largest.get("logits", 0.0) for r in report), default=math.inf)
    print(f"\n{len(report)} cases: largest relative difference of an intermediate {intermediates:.1e}"
          f" (tolerance {model_oracle_test.INTERMEDIATE_TOLERANCE:g}), of the logits {logits:.1e} "
          f"(tolerance {model_oracle_test.LOGIT_TOLERANCE:g})")
    print("marian oracle: " + ("ok" if all_ok else "FAILED"))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
