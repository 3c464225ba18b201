#!/usr/bin/env python3
"""`attnviz-cli model ...` as a user runs it, on the shipped models: every subcommand's output as
documented, and every error (one line on standard error, status 1 for bad input and 2 for usage,
an -o file never touched on error).

Run: /usr/bin/python3 tests/cli/test_model_cli.py --cli PATH/TO/attnviz-cli
Standard library only. Prints "N passed, M failed" and exits non-zero on any failure.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import cli_harness  # tests/cli/cli_harness.py, beside this script

# The engine picks OpenBLAS's kernels for the CPU, as on a user's machine, unless this is set: a
# shell that sets it (this project's machines set Haswell) would hide what the engine does.
os.environ.pop("OPENBLAS_CORETYPE", None)

CLI = None  # set from --cli before the tests run
ROOT = pathlib.Path(__file__).resolve().parents[2]
STORIES = ROOT / "assets/models/stories260K"
KJV = ROOT / "assets/models/gpt2-kjv-tiny"
ERROR_PREFIX = "attnviz-cli: error:"
BAD_INPUT, USAGE = 1, 2


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


class ModelCliCase(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="attnviz-model-cli-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def ok(self, *args):
        result = run(*args)
        self.assertEqual(result.returncode, 0, f"{args}: {result.stderr}")
        self.assertEqual(result.stderr, "", f"{args}: nothing on standard error")
        return result.stdout

    def fails(self, status, *args, message=None):
        """Runs a command that must fail with `status` and one line on standard error; when it
        takes -o, also checks a file there is left exactly as it was."""
        out = self.tmp / "kept.json"
        before = b'{"kept": "written before the command ran"}\n'
        out.write_bytes(before)
        result = run(*args, "-o", out) if args[1:2] == ("attention",) else run(*args)
        self.assertEqual(result.returncode, status, f"{args}: {result.stderr}")
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, f"{args}: one line on stderr, got {result.stderr!r}")
        self.assertTrue(lines[0].startswith(ERROR_PREFIX), lines[0])
        if message:
            self.assertRegex(lines[0], message)
        self.assertEqual(result.stdout, "", f"{args}: nothing on standard output")
        self.assertEqual(out.read_bytes(), before, f"{args}: the -o file was touched")
        return lines[0]


def fields(text):
    """info's "name   value" lines as a dict."""
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition("  ")
        out[name.strip()] = value.strip()
    return out


class Info(ModelCliCase):
    def test_llama(self):
        f = fields(self.ok("model", "info", "stories260K"))
        self.assertEqual(f["model"], "stories260K")
        self.assertIn("llama2.c version 0", f["file"])
        self.assertTrue(f["architecture"].startswith("llama"))
        self.assertEqual(f["layers"], "5")
        self.assertIn("8 per layer, 8 wide", f["heads"])
        self.assertIn("4 key/value heads", f["heads"])
        self.assertEqual((f["d_model"], f["MLP width"]), ("64", "172"))
        self.assertEqual((f["vocabulary"], f["context"]), ("512 tokens", "512 tokens"))
        # dim·vocab + layers·(2·dim + 2·dim·dim + 2·dim·(dim/2) + 3·dim·hidden) + dim
        self.assertEqual(f["parameters"], f"{512 * 64 + 5 * (128 + 2 * 4096 + 2 * 2048 + 3 * 64 * 172) + 64:,}")
        self.assertIn("tok512.bin", f["tokenizer"])

    def test_gpt2(self):
        f = fields(self.ok("model", "info", KJV))
        self.assertIn("safetensors F32", f["file"])
        self.assertTrue(f["architecture"].startswith("gpt2"))
        self.assertEqual((f["layers"], f["d_model"], f["MLP width"]), ("2", "128", "512"))
        self.assertEqual(f["heads"], "4 per layer, 32 wide")
        self.assertEqual((f["vocabulary"], f["context"]), ("512 tokens", "128 tokens"))
        d, v, n, L = 128, 512, 128, 2
        per_layer = 4 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d)
        self.assertEqual(f["parameters"], f"{v * d + n * d + L * per_layer + 2 * d:,}")
        self.assertIn("vocab.json, merges.txt", f["tokenizer"])


class Tokens(ModelCliCase):
    def check_tiling(self, model, text, first_special):
        lines = self.ok("model", "tokens", model, "--text", text).splitlines()
        self.assertEqual(lines[0].split(), ["#", "id", "token", "bytes"])
        rows = lines[1:-1]
        self.assertEqual(lines[-1], f"{len(rows)} tokens")
        at = 0
        for i, row in enumerate(rows):
            match = re.match(r"\s*(\d+)\s+(\d+)\s+(.*?)\s+(\d+)-(\d+)(  \(special\))?$", row)
            self.assertIsNotNone(match, row)
            self.assertEqual(int(match[1]), i)
            begin, end = int(match[4]), int(match[5])
            self.assertEqual(begin, at, f"{row}: the ranges tile the text")
            self.assertGreaterEqual(end, begin)
            at = end
            if i == 0:
                self.assertEqual(bool(match[6]), first_special, row)
        self.assertEqual(at, len(text.encode("utf-8")), "the ranges cover the whole text")
        return rows

    def test_llama_ranges_tile_the_text(self):
        rows = self.check_tiling("stories260K", "Lily saw a big red ball. 猫!", True)
        self.assertIn("<s>", rows[0])

    def test_gpt2_ranges_tile_the_text(self):
        rows = self.check_tiling(KJV, "In the beginning God created 東京\n\tthe earth.", False)
        self.assertTrue(any("東" in r for r in rows) and any("⋯" in r for r in rows))


class Attention(ModelCliCase):
    def test_json_document(self):
        out = self.tmp / "out.json"
        self.ok("model", "attention", "stories260K", "--text", "Once upon a time", "-o", out)
        doc = json.loads(out.read_text(encoding="utf-8"))
        self.assertEqual((doc["format"], doc["version"]), ("attnviz-model-attention", 1))
        self.assertEqual([t["id"] for t in doc["tokens"]][0], 1)
        n = len(doc["tokens"])
        self.assertEqual(len(doc["layers"]), 5)
        head = doc["layers"][0]["heads"][3]
        self.assertEqual(head["kv_head"], 1)
        for row, weights in enumerate(head["weights"]):
            self.assertAlmostEqual(sum(weights), 1.0, places=5)
            self.assertTrue(all(w == 0 for w in weights[row + 1:]))
            self.assertTrue(all(s is None for s in head["scores"][row][row + 1:]))
        self.assertEqual(len(head["queries"]), n)
        self.assertEqual(len(doc["logits"][0]), 512)

    def test_ablation_recorded(self):
        # --ablate counts from 1, as the app and `model heads` show heads; the JSON's indices
        # from 0, as --ablate-from-0 takes them.
        result = self.ok("model", "attention", KJV, "--text", "And God said", "--ablate", "2.2",
                         "--weights-only")
        doc = json.loads(result)
        self.assertEqual(doc["interventions"], [{"layer": 1, "head": 1, "pattern": "computed",
                                                 "output_scale": 0}])
        self.assertNotIn("queries", doc["layers"][0]["heads"][0])
        self.assertEqual(result, self.ok("model", "attention", KJV, "--text", "And God said",
                                         "--ablate-from-0", "1.1", "--weights-only"))
        first = json.loads(self.ok("model", "attention", KJV, "--text", "And God said",
                                   "--ablate", "1.1", "--weights-only"))
        self.assertEqual(first["interventions"][0]["layer"], 0)
        self.assertEqual(first["interventions"][0]["head"], 0)


def predictions(text):
    lines = text.splitlines()
    rows = []
    for line in lines[2:]:
        match = re.match(r"\s*(\d+)\s+(\d+)\s+(.*?)\s+(\d\.\d{4})$", line)
        assert match, line
        rows.append((int(match[1]), int(match[2]), float(match[4])))
    return lines, rows


class Predict(ModelCliCase):
    def test_probabilities_descending(self):
        for model, text in (("stories260K", "Once upon a time, there was a"),
                            (KJV, "In the beginning God created the")):
            lines, rows = predictions(self.ok("model", "predict", model, "--text", text, "--top", 7))
            self.assertTrue(lines[0].startswith("after \""), lines[0])
            self.assertEqual(lines[1].split(), ["rank", "id", "token", "probability"])
            self.assertEqual([r[0] for r in rows], list(range(1, 8)))
            probabilities = [r[2] for r in rows]
            self.assertEqual(probabilities, sorted(probabilities, reverse=True))
            self.assertTrue(all(0 < p <= 1 for p in probabilities))
            self.assertLessEqual(sum(probabilities), 1.0 + 1e-3)

    def test_ablation_changes_the_prediction(self):
        text = "In the beginning God created the heaven and the earth. In the beginning God"
        _, plain = predictions(self.ok("model", "predict", KJV, "--text", text))
        # The previous-token head (layer 1, head 3) and the induction head (layer 2, head 2), as
        # `model heads` prints them.
        out = self.ok("model", "predict", KJV, "--text", text, "--ablate", "1.3", "--ablate", "2.2")
        self.assertIn("--ablate 1.3, 2.2", out.splitlines()[0])
        _, ablated = predictions(out)
        self.assertNotEqual(plain, ablated)
        self.assertEqual(out, self.ok("model", "predict", KJV, "--text", text,
                                      "--ablate-from-0", "0.2", "--ablate-from-0", "1.1"))


class Generate(ModelCliCase):
    def test_greedy_is_llama2c(self):
        expected = (STORIES / "EXPECTED-greedy.txt").read_text(encoding="utf-8").splitlines()[0]
        text = self.ok("model", "generate", "stories260K", "--tokens", 60)
        self.assertTrue(text.startswith(expected[:len(text.rstrip("\n"))].rstrip()), text)
        longer = self.ok("model", "generate", "stories260K", "--tokens", 200)
        self.assertTrue(longer.startswith(expected), longer)

    def test_seeded(self):
        def sample(seed):
            return self.ok("model", "generate", "stories260K", "--prompt", "Lily", "--tokens", 40,
                           "--temperature", 1, "--seed", seed)

        first = sample(5)
        self.assertTrue(first.startswith("Lily"))
        self.assertEqual(first, sample(5))
        self.assertNotEqual(first, sample(6))


class Heads(ModelCliCase):
    def test_finds_the_trained_heads(self):
        text = self.ok("model", "heads", KJV)
        lines = text.splitlines()
        self.assertEqual(lines[0].split()[:4], ["layer", "head", "role", "score"])
        rows = {}
        for line in lines[1:-1]:
            parts = line.split()
            rows[(int(parts[0]), int(parts[1]))] = parts
        self.assertEqual(len(rows), 8)
        previous = rows[(1, 3)]
        self.assertEqual(previous[2], "previous-token")
        self.assertGreaterEqual(float(previous[3]), 0.5)
        self.assertEqual(previous[-1], "1.3")  # what --ablate takes: from 1, as the table counts
        induction = rows[(2, 2)]
        self.assertEqual(induction[2], "induction")
        self.assertGreaterEqual(float(induction[3]), 0.3)
        self.assertEqual(induction[-1], "2.2")
        self.assertIn("count from 1, as --ablate takes them", lines[-1])
        self.assertIn("count from 1", lines[-1])

    def test_scores_on_a_text_as_the_app_badges_show_them(self):
        # --on TEXT: each head's score for its role on TEXT, computed here from the attention
        # weights `model attention` writes (checked against PyTorch by the oracle tests).
        text = "xqz plov wrim. xqz plo"
        lines = self.ok("model", "heads", KJV, "--on", text).splitlines()
        self.assertEqual(lines[0].split()[:6], ["layer", "head", "role", "score", "on", "text"])
        self.assertIn("the second number of", run("model", "--help").stdout.replace("\n", " "))
        attention = json.loads(self.ok("model", "attention", KJV, "--text", text, "-o", "-"))
        ids = [token["id"] for token in attention["tokens"]]
        n = len(ids)
        checked = 0
        for line in lines[1:-2]:
            parts = line.split()
            layer, head, role, on_text = int(parts[0]), int(parts[1]), parts[2], parts[4]
            weights = attention["layers"][layer - 1]["heads"][head - 1]["weights"]  # (n, n)
            if role == "induction":
                # Each token seen before, onto the token after its last earlier occurrence.
                copied = []
                for i in range(1, n):
                    earlier = [j for j in range(i) if ids[j] == ids[i]]
                    if earlier:
                        copied.append(weights[i][earlier[-1] + 1])
                expected = sum(copied) / len(copied)
            elif role == "previous-token":
                expected = sum(weights[i][i - 1] for i in range(1, n)) / (n - 1)
            else:
                continue
            self.assertAlmostEqual(float(on_text), expected, delta=0.006, msg=line)
            checked += 1
        self.assertGreaterEqual(checked, 4)  # three induction heads, one previous-token head
        # The score column rounds as the other columns (and the app's badges) do.
        for line in lines[1:-2]:
            parts = line.split()
            if parts[2] == "induction":
                self.assertEqual(parts[3], parts[5], msg=line)
        # A text that writes no token twice cannot measure induction: "-".
        no_repeat = self.ok("model", "heads", KJV, "--on", "abc").splitlines()
        induction_rows = [l.split() for l in no_repeat[1:-2] if l.split()[2] == "induction"]
        self.assertTrue(induction_rows)
        self.assertTrue(all(row[4] == "-" for row in induction_rows))


class Bench(ModelCliCase):
    def test_line(self):
        # 48 tokens: past the sizes at which OpenBLAS's AVX-512 kernels allocated in a narrow
        # head's products (d_head 8 in stories260K) before those stayed in Eigen.
        for model, mode in (("stories260K", "full"), ("stories260K", "append"),
                            ("stories260K", "last-layer"), ("gpt2-kjv-tiny", "full")):
            text = self.ok("model", "bench", model, "--tokens", 48, "--repeat", 5,
                           "--mode", mode)
            match = re.match(r"median_us=([\d.]+) p90_us=([\d.]+) allocations=(\d+) repeat=5 ", text)
            self.assertIsNotNone(match, text)
            self.assertLessEqual(float(match[1]), float(match[2]))
            self.assertEqual(match[3], "0", f"{model} --mode {mode}: {text}")


class Errors(ModelCliCase):
    def damaged_copy(self, source):
        folder = self.tmp / source.name
        shutil.copytree(source, folder)
        return folder

    def test_missing_model(self):
        self.fails(BAD_INPUT, "model", "attention", self.tmp / "none", "--text", "a",
                   message="none")
        self.fails(BAD_INPUT, "model", "info", "no-such-shipped-model")

    def test_truncated_safetensors(self):
        folder = self.damaged_copy(KJV)
        data = (folder / "model.safetensors").read_bytes()
        (folder / "model.safetensors").write_bytes(data[:len(data) // 2])
        self.fails(BAD_INPUT, "model", "attention", folder, "--text", "a", message="model.safetensors")

    def test_config_not_json(self):
        folder = self.damaged_copy(KJV)
        (folder / "config.json").write_text("{ n_embd: 128,", encoding="utf-8")
        self.fails(BAD_INPUT, "model", "attention", folder, "--text", "a", message="config.json")

    def test_truncated_bin(self):
        folder = self.damaged_copy(STORIES)
        data = (folder / "stories260K.bin").read_bytes()
        (folder / "stories260K.bin").write_bytes(data[:-100])
        self.fails(BAD_INPUT, "model", "attention", folder / "stories260K.bin", "--text", "a",
                   message="stories260K.bin")

    def test_missing_tokenizer(self):
        folder = self.damaged_copy(KJV)
        (folder / "merges.txt").unlink()
        self.fails(BAD_INPUT, "model", "attention", folder, "--text", "a", message="merges.txt")
        folder = self.damaged_copy(STORIES)
        (folder / "tok512.bin").unlink()
        self.fails(BAD_INPUT, "model", "attention", folder / "stories260K.bin", "--text", "a",
                   message="tok512.bin")

    def test_ablate(self):
        # A head the model does not have is a mistake in the command line (status 2).
        self.fails(USAGE, "model", "attention", KJV, "--text", "a", "--ablate", "3.1",
                   message=re.escape("2 layers of 4 heads (1.1 to 2.4 counted from 1)"))
        self.fails(USAGE, "model", "attention", KJV, "--text", "a", "--ablate", "2.5")
        self.fails(USAGE, "model", "attention", KJV, "--text", "a", "--ablate-from-0", "2.0",
                   message=re.escape("2 layers of 4 heads (0.0 to 1.3 counted from 0)"))
        self.fails(USAGE, "model", "predict", "stories260K", "--text", "a", "--ablate", "1.9")
        # A 0 is the old count, from 0: the message shows both forms.
        for zero in ("0.4", "2.0", "0.0"):
            self.fails(USAGE, "model", "attention", KJV, "--text", "a", "--ablate", zero,
                       message=re.escape(f"count from 1, as the app and `model heads` show them "
                                         f"(the first head of the first layer is --ablate 1.1); "
                                         f"--ablate-from-0 {zero}"))
        self.fails(USAGE, "model", "attention", KJV, "--text", "a", "--ablate-from-0")
        for bad in ("1", "1.", ".1", "a.b", "1.2.3", "-1.0", "1.-1", ""):
            self.fails(USAGE, "model", "attention", KJV, "--text", "a", "--ablate", bad,
                       message="LAYER.HEAD")
        self.fails(USAGE, "model", "attention", KJV, "--text", "a", "--ablate")

    def test_text_longer_than_the_context(self):
        self.fails(BAD_INPUT, "model", "attention", KJV, "--text", "and " * 200,
                   message="at most 128")
        self.fails(BAD_INPUT, "model", "predict", KJV, "--text", "and " * 200)
        self.fails(BAD_INPUT, "model", "generate", KJV, "--prompt", "and " * 200)

    def test_bad_sampling_values(self):
        for option, value in (("--temperature", "-1"), ("--top-p", "0"), ("--top-p", "1.5"),
                              ("--temperature", "nan"), ("--top-k", "-2"), ("--temperature", "x")):
            self.fails(USAGE, "model", "generate", "stories260K", option, value, message=option)
            self.fails(USAGE, "model", "predict", "stories260K", "--text", "a", option, value)

    def test_usage(self):
        self.fails(USAGE, "model", "bogus", "stories260K")
        self.fails(USAGE, "model")
        self.fails(USAGE, "model", "attention", "stories260K", "--text", "a", "--bogus")
        self.fails(USAGE, "model", "attention", "stories260K", "--text", "a", "extra")
        self.fails(USAGE, "model", "attention", "--text", "a")  # no MODEL
        self.fails(USAGE, "model", "attention", "stories260K")  # no --text
        self.fails(USAGE, "model", "tokens", "stories260K", "--text")
        self.fails(USAGE, "model", "bench", "stories260K")  # no --tokens
        self.fails(USAGE, "model", "predict", "stories260K", "--text", "a", "--top", "0")
        self.fails(USAGE, "model", "heads", KJV, "--ablate", "0.1")
        self.fails(USAGE, "model", "heads", KJV, "--ablate-from-0", "0.1")

    def test_model_help_is_the_model_commands(self):
        for args in (("model", "--help"), ("model", "predict", "--help"), ("model", "-h")):
            text = self.ok(*args)
            self.assertTrue(text.startswith("attnviz-cli model"), text[:80])
            for command in ("info", "tokens", "attention", "translate", "predict", "generate",
                            "fill", "heads", "bench"):
                self.assertIn(f"attnviz-cli model {command}", text)
            for shipped in ("gpt2-web", "bert-web", "marian-web-es", "stories260K"):
                self.assertIn(shipped, text)
            self.assertIn("--ablate-from-0", text)
            self.assertNotIn("attnviz-cli compute", text)  # the scenario commands are not in it
        whole = self.ok("--help")
        self.assertIn("attnviz-cli compute", whole)
        self.assertIn("attnviz-cli model --help", whole)

    def test_output_folder_missing(self):
        result = run("model", "attention", "stories260K", "--text", "a", "-o",
                     self.tmp / "no" / "such" / "out.json")
        self.assertEqual(result.returncode, BAD_INPUT)
        self.assertEqual(len(result.stderr.splitlines()), 1)
        self.assertFalse((self.tmp / "no").exists())


def main():
    global CLI
    argv = list(sys.argv)
    CLI = cli_harness.take_cli_path(argv, CLI)
    if not cli_harness.usable(CLI, "test_model_cli.py"):
        return 2
    return cli_harness.run_tests(argv)


if __name__ == "__main__":
    sys.exit(main())
