#!/usr/bin/python3
"""`attnviz-cli train`, `attnviz-cli model grad` and `attnviz-cli fit` as a user runs them: the help, every mistake
in the command line (status 2) and bad input (status 1), one line each; two runs of the same
seed write the same files, byte for byte; a short run learns its text and its folder opens as a
model that predicts it; fine-tuning a shipped model keeps its tokenizer; the gradient file's
names and shapes are the model file's own; fit's moved weights make each word look at the word
before (recomputed here from the file), and cannot without positions.

Usage: /usr/bin/python3 tests/cli/test_train_cli.py --cli build/attnviz-cli
"""

import json
import os
import re
import struct
import subprocess
import sys
import unittest

import cli_common
from cli_common import TempDirTest, UsageErrorAssertion, run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAT_TEXT = "the cat sat on the mat. " * 40
SMALL = ["--steps", "20", "--width", "16", "--length", "24", "--texts", "4", "--quiet"]


def read_header(data):
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length])


class TrainCommandLine(TempDirTest, UsageErrorAssertion):
    def test_help_names_every_task(self):
        result = run("train", "--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        for word in ("induction", "copy", "reverse", "sort", "text FILE", "--from", "train.json"):
            self.assertIn(word, result.stdout)

    def test_mistakes_in_the_command_line(self):
        out = self.path("out")
        self.assertUsageError(run("train", "-o", out), "--task")
        self.assertUsageError(run("train", "--task", "translate", "-o", out), "no task")
        self.assertUsageError(run("train", "--task", "copy"), "-o DIR")
        self.assertUsageError(run("train", "--task", "text", "-o", out), "FILE")
        self.assertUsageError(run("train", "--task", "copy", "--steps", "many", "-o", out),
                              "--steps")
        self.assertUsageError(run("train", "--task", "copy", "--lr", "nan", "-o", out), "--lr")
        self.assertUsageError(run("train", "--task", "copy", "--threads", "0", "-o", out),
                              "--threads")
        self.assertUsageError(run("train", "--task", "copy", "--sideways", "-o", out),
                              "--sideways")
        self.assertFalse(os.path.exists(out))

    def test_bad_input_says_so_and_writes_nothing(self):
        out = self.path("out")
        self.assertOneLineError(run("train", "--task", "copy", "--width", "30", "-o", out))
        self.assertOneLineError(run("train", "--task", "text", self.path("missing.txt"), "-o", out))
        cli_common.write(self.path("one.txt"), "a")
        self.assertOneLineError(run("train", "--task", "text", self.path("one.txt"), "-o", out))
        self.assertOneLineError(run("train", "--task", "copy", "--from", "no-such-model", "-o", out))
        self.assertOneLineError(run("train", "--task", "copy", "--from", "stories260K", "-o", out))
        crowded = run("train", "--task", "copy", "--threads", "17", "-o", out)  # 16 texts a step
        self.assertOneLineError(crowded)
        self.assertIn("at most one a text", crowded.stderr)
        self.assertFalse(os.path.exists(out))
        cli_common.write(self.path("a-file"), "keep me")
        self.assertOneLineError(run("train", "--task", "copy", *SMALL, "-o", self.path("a-file")))
        with open(self.path("a-file")) as f:
            self.assertEqual(f.read(), "keep me")

    def test_the_same_seed_writes_the_same_files(self):
        for name, seed in (("a", "3"), ("b", "3"), ("c", "4")):
            result = run("train", "--task", "copy", "--seed", seed, *SMALL, "-o", self.path(name))
            self.assertEqual(result.returncode, 0, result.stderr)
        files = ["config.json", "model.safetensors", "vocab.json", "merges.txt", "train.json"]
        for name in files:
            self.assertEqual(cli_common.read_bytes(self.path("a/" + name)),
                             cli_common.read_bytes(self.path("b/" + name)), name)
        self.assertNotEqual(cli_common.read_bytes(self.path("a/model.safetensors")),
                            cli_common.read_bytes(self.path("c/model.safetensors")))
        # Two threads: the same files again for the same seed, the same first loss as one
        # thread (the texts split between them), and the count in the record.
        for name in ("t1", "t2"):
            result = run("train", "--task", "copy", "--seed", "3", "--threads", "2", *SMALL,
                         "-o", self.path(name))
            self.assertEqual(result.returncode, 0, result.stderr)
        for name in files:
            self.assertEqual(cli_common.read_bytes(self.path("t1/" + name)),
                             cli_common.read_bytes(self.path("t2/" + name)), name)
        two = json.loads(cli_common.read_bytes(self.path("t1/train.json")))
        one = json.loads(cli_common.read_bytes(self.path("a/train.json")))
        self.assertEqual(two["threads"], 2)
        self.assertNotIn("threads", one)
        self.assertAlmostEqual(two["loss"][0], one["loss"][0], places=5)
        record = json.loads(cli_common.read_bytes(self.path("a/train.json")))
        self.assertEqual(record["task"], "copy")
        self.assertEqual(len(record["loss"]), 20)
        self.assertEqual(record["model"]["attention_only"], True)

    def test_a_short_run_learns_its_text(self):
        cli_common.write(self.path("cat.txt"), CAT_TEXT)
        # Attention only (the default): the MLP would take a minute under the sanitizers.
        result = subprocess.run(
            [cli_common.CLI, "train", "--task", "text", self.path("cat.txt"), "--steps", "300", "--warmup", "50",
             "--width", "32", "--length", "24", "--texts", "8", "-o", self.path("cat")],
            capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("saved", result.stderr)
        record = json.loads(cli_common.read_bytes(self.path("cat/train.json")))
        self.assertLess(record["loss"][-1], 0.3)
        self.assertGreater(record["loss"][0], 5.0)
        predicted = run("model", "predict", self.path("cat"), "--text", "the cat sat on the m",
                        "--top", "1")
        self.assertEqual(predicted.returncode, 0, predicted.stderr)
        self.assertRegex(predicted.stdout, r"\n\s+1\s+97\s+a\s")  # the first guess: "a"

    def test_fine_tuning_keeps_the_shipped_tokenizer(self):
        cli_common.write(self.path("verse.txt"), "In the beginning God created the heaven. " * 8)
        result = run("train", "--from", "gpt2-kjv-tiny", "--task", "text", self.path("verse.txt"),
                     "--steps", "3", "--length", "16", "--texts", "2", "--quiet",
                     "-o", self.path("tuned"))
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in ("vocab.json", "merges.txt"):
            self.assertEqual(cli_common.read_bytes(self.path("tuned/" + name)),
                             cli_common.read_bytes(os.path.join(
                                 ROOT, "assets/models/gpt2-kjv-tiny", name)))
        record = json.loads(cli_common.read_bytes(self.path("tuned/train.json")))
        self.assertEqual(record["from"], "gpt2-kjv-tiny")
        info = run("model", "info", self.path("tuned"))
        self.assertEqual(info.returncode, 0, info.stderr)


class GradCommandLine(TempDirTest, UsageErrorAssertion):
    def test_the_gradient_has_the_files_names_and_shapes(self):
        out = self.path("g.safetensors")
        result = run("model", "grad", "gpt2-kjv-tiny", "--text", "In the beginning", "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stderr, r"^loss [0-9.]+ over \d+ predictions")
        header = read_header(cli_common.read_bytes(out))
        model = read_header(cli_common.read_bytes(
            os.path.join(ROOT, "assets/models/gpt2-kjv-tiny/model.safetensors")))
        shapes = {name: entry["shape"] for name, entry in header.items() if name != "__metadata__"}
        self.assertEqual(shapes, {name: entry["shape"] for name, entry in model.items()
                                  if name != "__metadata__"})
        self.assertTrue(all(entry["dtype"] == "F32" for name, entry in header.items()
                            if name != "__metadata__"))
        self.assertEqual(header["__metadata__"]["format"], "pt")

    def test_a_llama2c_gradient_has_the_checkpoints_arrays(self):
        # stories260K: dim 64, hidden 172, 5 layers, 8 query heads on 4 key/value heads, 512
        # tokens, the classifier shared with the embedding (so no wcls).
        out = self.path("g.safetensors")
        result = run("model", "grad", "stories260K", "--text", "Once upon a time", "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        header = read_header(cli_common.read_bytes(out))
        shapes = {name: entry["shape"] for name, entry in header.items() if name != "__metadata__"}
        self.assertEqual(shapes, {
            "token_embedding_table": [512, 64], "rms_att_weight": [5, 64], "wq": [5, 64, 64],
            "wk": [5, 32, 64], "wv": [5, 32, 64], "wo": [5, 64, 64], "rms_ffn_weight": [5, 64],
            "w1": [5, 172, 64], "w2": [5, 64, 172], "w3": [5, 172, 64], "rms_final_weight": [64]})

    def test_a_bert_gradient_has_the_files_names_and_linear_shapes(self):
        # bert-web: BertForMaskedLM with "bert." names; nn.Linear's weights are (out, in) in the
        # file, and so in the gradient.
        out = self.path("g.safetensors")
        result = run("model", "grad", "bert-web", "--text", "God said, let there be light.",
                     "--text-b", "And there was light.", "--mask", "6,3", "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stderr, r"^loss [0-9.]+ over 2 predictions")
        header = read_header(cli_common.read_bytes(out))
        model = read_header(cli_common.read_bytes(
            os.path.join(ROOT, "assets/models/bert-web/model.safetensors")))
        weights = {name: entry["shape"] for name, entry in model.items()
                   if name != "__metadata__" and not name.endswith("position_ids")}
        shapes = {name: entry["shape"] for name, entry in header.items() if name != "__metadata__"}
        self.assertEqual(shapes, weights)
        self.assertIn("[MASK]", header["__metadata__"]["what"])
        # Without --mask: every token predicted where it stands.
        every = run("model", "grad", "bert-web", "--text", "let there be light", "-o", out)
        self.assertEqual(every.returncode, 0, every.stderr)
        self.assertRegex(every.stderr, r"over 6 predictions")  # [CLS] let there be light [SEP]

    def test_an_encoder_decoder_gradient_has_the_files_names_and_linear_shapes(self):
        # marian-web-es: every weight of the file but its constants (final_logits_bias, a buffer;
        # the sinusoid positions it saves), nn.Linear's (out, in) shapes.
        out = self.path("g.safetensors")
        result = run("model", "grad", "marian-web-es", "--source",
                     "God said, let there be light.", "--text", "Y dijo Dios: Sea la luz.",
                     "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        # The target's pieces and the end token, each predicted.
        pieces = run("model", "tokens", "marian-web-es", "--target", "--text",
                     "Y dijo Dios: Sea la luz.")
        self.assertEqual(pieces.returncode, 0, pieces.stderr)
        count = int(re.search(r"^(\d+) tokens$", pieces.stdout, re.MULTILINE).group(1))
        self.assertRegex(result.stderr, rf"^loss [0-9.]+ over {count + 1} predictions")
        header = read_header(cli_common.read_bytes(out))
        model = read_header(cli_common.read_bytes(
            os.path.join(ROOT, "assets/models/marian-web-es/model.safetensors")))
        weights = {name: entry["shape"] for name, entry in model.items()
                   if name not in ("__metadata__", "final_logits_bias")
                   and not name.endswith("embed_positions.weight")}
        shapes = {name: entry["shape"] for name, entry in header.items() if name != "__metadata__"}
        self.assertEqual(shapes, weights)
        self.assertIn("reading the source", header["__metadata__"]["what"])
        self.assertIn("source_tokens", header["__metadata__"])

    def test_standard_output(self):
        result = run_binary("model", "grad", "gpt2-kjv-tiny", "--text", "In the beginning",
                            "-o", "-")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("wpe.weight", read_header(result.stdout))

    def test_refusals(self):
        out = self.path("g.safetensors")
        self.assertUsageError(run("model", "grad", "gpt2-kjv-tiny", "--text", "a"), "-o")
        self.assertUsageError(run("model", "grad", "gpt2-kjv-tiny", "-o", out), "--text")
        # An encoder–decoder reads --source, and only it; --mask is an encoder's.
        self.assertUsageError(run("model", "grad", "marian-web-es", "--text", "Sea la luz.",
                                  "-o", out), "--source")
        self.assertUsageError(run("model", "grad", "gpt2-kjv-tiny", "--source", "a", "--text",
                                  "In the", "-o", out), "--source")
        self.assertUsageError(run("model", "grad", "marian-web-es", "--source", "Let there be",
                                  "--text", "Sea la", "--mask", "1", "-o", out), "--mask")
        self.assertOneLineError(run("model", "grad", "gpt2-kjv-tiny", "--text", "", "-o", out))
        # --mask: an encoder's, at positions the text has.
        decoder = run("model", "grad", "gpt2-kjv-tiny", "--text", "In the", "--mask", "1",
                      "-o", out)
        self.assertOneLineError(decoder)
        self.assertIn("encoder", decoder.stderr)
        outside = run("model", "grad", "bert-web", "--text", "let there be light", "--mask", "6",
                      "-o", out)
        self.assertOneLineError(outside)
        self.assertIn("positions 0 to 5", outside.stderr)
        for bad in ("", "1,,2", "-1", "x", "1.5"):
            self.assertUsageError(run("model", "grad", "bert-web", "--text", "a", "--mask", bad,
                                      "-o", out), "--mask")
        self.assertFalse(os.path.exists(out))


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def attention_of(scenario_path, head=0):
    """Head `head`'s α recomputed here from the file's W_Q and W_K and the engine's X (in plain
    Python: softmax(X·W_Q·(X·W_K)ᵀ / √d_k))."""
    import math
    computed = run("compute", scenario_path)
    assert computed.returncode == 0, computed.stderr
    X = json.loads(computed.stdout)["X_target"]
    weights = read_json(scenario_path)["weights"]
    W_Q, W_K = weights["W_Q"][head], weights["W_K"][head]
    d_k = len(W_Q[0])
    def project(W):
        return [[sum(x[m] * W[m][c] for m in range(len(x))) for c in range(d_k)] for x in X]
    Q, K = project(W_Q), project(W_K)
    rows = []
    for q in Q:
        scores = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d_k) for k in K]
        top = max(scores)
        e = [math.exp(v - top) for v in scores]
        rows.append([v / sum(e) for v in e])
    return rows


class FitCommandLine(TempDirTest, UsageErrorAssertion):
    def scenario(self, **changes):
        """The built-in scenario on "the cat sat on the mat" with `changes`, as a file."""
        made = run("init", "--text", "the cat sat on the mat")
        self.assertEqual(made.returncode, 0, made.stderr)
        path = self.path("cat.json")
        data = json.loads(made.stdout)
        data.update(changes)
        cli_common.write(path, json.dumps(data))
        return path

    def test_mistakes_and_bad_input(self):
        out = self.path("out.json")
        self.assertUsageError(run("fit", "--text", "the cat", "-o", out), "--target")
        self.assertUsageError(run("fit", "--text", "the cat", "--target", "sideways", "-o", out),
                              "previous-word")
        self.assertUsageError(run("fit", "--text", "the cat", "--target", "first-word", "--steps",
                                  "-3", "-o", out), "--steps")
        self.assertUsageError(run("fit", "--text", "the cat", "--target", "first-word", "--lr",
                                  "nan", "-o", out), "--lr")
        self.assertOneLineError(run("fit", "--text", "the cat sat", "--target", "pronoun-noun",
                                    "-o", out))
        self.assertOneLineError(run("fit", self.scenario(hard=True), "--target", "first-word",
                                    "-o", out))
        self.assertOneLineError(run("fit", self.scenario(compatibility="additive"), "--target",
                                    "first-word", "-o", out))
        self.assertOneLineError(run("fit", "--text", "the cat", "--target", "first-word", "--head",
                                    "5", "-o", out))
        self.assertFalse(os.path.exists(out))

    def test_gradient_descent_makes_each_word_look_at_the_word_before(self):
        path = self.scenario(positional="sinusoidal")
        out = self.path("fitted.json")
        result = run("fit", path, "--target", "previous-word", "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("the heatmap matches", result.stderr)
        before, after = attention_of(path), attention_of(out)
        for i, row in enumerate(after):
            wanted = max(i - 1, 0)
            self.assertEqual(row.index(max(row)), wanted, f"row {i}: {row}")
            self.assertGreater(row[wanted], 0.8)
        self.assertLess(before[2][1], 0.8)  # it did not look there before
        # The other head and W_V are as they were.
        a, b = read_json(path)["weights"], read_json(out)["weights"]
        self.assertEqual(a["W_Q"][1], b["W_Q"][1])
        self.assertEqual(a["W_V"], b["W_V"])
        self.assertNotEqual(a["W_Q"][0], b["W_Q"][0])

    def test_without_positions_the_two_thes_cannot_be_told_apart(self):
        result = run("fit", self.scenario(), "--target", "previous-word", "--steps", "300",
                     "-o", self.path("out.json"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("not matched yet", result.stderr)
        after = attention_of(self.path("out.json"))
        self.assertEqual([round(v, 5) for v in after[0]], [round(v, 5) for v in after[4]])


def run_binary(*args):
    return subprocess.run([cli_common.CLI, *args], capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL)


if __name__ == "__main__":
    sys.exit(cli_common.main(__file__))
