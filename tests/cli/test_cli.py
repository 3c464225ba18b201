#!/usr/bin/env python3
"""attnviz-cli as a user runs it: exit codes, standard output/error and the JSON it writes.

Run: /usr/bin/python3 tests/cli/test_cli.py --cli PATH/TO/attnviz-cli
Standard library only. Prints "N passed, M failed" and exits non-zero on any failure.
"""

import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

import cli_harness  # tests/cli/cli_harness.py, beside this script

CLI = None  # set from --cli before the tests run

TARGET_TOKENS = ["i", "like", "to", "eat", "apple"]
HEAD_KEYS = ["Q", "K", "V", "scores", "scaled_scores", "masked_scores", "weights", "output",
             "fully_masked_rows"]
ERROR_PREFIX = "attnviz-cli: error:"


def run(*args, stdin_text=None):
    """Runs the CLI with the given arguments; standard input is empty unless given."""
    kwargs = {"capture_output": True, "text": True, "timeout": 60}
    if stdin_text is None:
        kwargs["stdin"] = subprocess.DEVNULL
    else:
        kwargs["input"] = stdin_text
    return subprocess.run([CLI, *args], **kwargs)


def shape(matrix):
    return (len(matrix), len(matrix[0]) if matrix else 0)


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def scenario(**fields):
    """A version-1 scenario document with the given fields."""
    doc = {"format": "attnviz-scenario", "version": 1}
    doc.update(fields)
    return json.dumps(doc)


_cache = {}


def builtin_result():
    """The JSON of `compute --builtin` (computed once)."""
    if "builtin" not in _cache:
        result = run("compute", "--builtin")
        if result.returncode != 0:
            raise AssertionError("compute --builtin failed: " + result.stderr)
        _cache["builtin"] = json.loads(result.stdout)
    return _cache["builtin"]


def builtin_scenario():
    """The built-in scenario with every weight written out (from `init --builtin`)."""
    if "init" not in _cache:
        result = run("init", "--builtin")
        if result.returncode != 0:
            raise AssertionError("init --builtin failed: " + result.stderr)
        _cache["init"] = json.loads(result.stdout)
    return json.loads(json.dumps(_cache["init"]))  # a fresh copy


class UsageErrorAssertion:
    """A usage error: status 2, one line on stderr naming `words`, nothing on stdout."""

    def assertUsageError(self, result, *words):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith(ERROR_PREFIX), lines[0])
        for word in words:
            self.assertIn(word, lines[0])
        self.assertEqual(result.stdout, "")


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="attnviz-cli-test-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def compute_doc(self, doc_text, name="scenario.json"):
        """Writes the scenario and runs compute on it; returns the completed process."""
        path = self.path(name)
        write(path, doc_text)
        return run("compute", path)

    def assertOneLineError(self, result):
        self.assertEqual(result.returncode, 1, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith(ERROR_PREFIX), lines[0])
        self.assertEqual(result.stdout, "")


# -----------------------------------------------------------------------------
# Usage
# -----------------------------------------------------------------------------
class UsageTest(unittest.TestCase):
    def test_help_exits_0_and_prints_usage(self):
        result = run("--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("Usage", result.stdout)

    def test_version_prints_the_name_and_a_version(self):
        result = run("--version")
        self.assertEqual(result.returncode, 0)
        self.assertRegex(result.stdout, r"^attnviz-cli \d+\.\d+\.\d+\s*$")

    def test_no_arguments_exits_2_with_usage_on_stderr(self):
        result = run()
        self.assertEqual(result.returncode, 2)
        self.assertIn("Usage", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_help_lists_export_and_svg(self):
        result = run("--help")
        self.assertIn("attnviz-cli export", result.stdout)
        self.assertIn("attnviz-cli svg", result.stdout)

    def test_unknown_command_exits_2_with_one_line_on_stderr(self):
        result = run("frobnicate")
        self.assertEqual(result.returncode, 2)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith(ERROR_PREFIX), lines[0])
        self.assertIn("frobnicate", lines[0])
        self.assertEqual(result.stdout, "")


# -----------------------------------------------------------------------------
# compute --builtin
# -----------------------------------------------------------------------------
class ComputeBuiltinTest(unittest.TestCase):
    def test_exits_0_with_json_on_stdout(self):
        result = run("compute", "--builtin")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIsInstance(json.loads(result.stdout), dict)

    def test_has_the_tokens_inputs_and_outputs(self):
        doc = builtin_result()
        self.assertEqual(doc["target_tokens"], TARGET_TOKENS)
        self.assertEqual(doc["source_tokens"], TARGET_TOKENS)  # self mode
        self.assertEqual(shape(doc["X_target"]), (5, 8))
        self.assertEqual(shape(doc["X_source"]), (5, 8))
        self.assertEqual(shape(doc["concat"]), (5, 8))
        self.assertEqual(shape(doc["output"]), (5, 8))
        self.assertEqual(doc["warnings"], [])

    def test_has_two_heads_with_every_intermediate(self):
        heads = builtin_result()["heads"]
        self.assertEqual(len(heads), 2)
        for h, head in enumerate(heads):
            with self.subTest(head=h):
                for key in HEAD_KEYS:
                    self.assertIn(key, head)
                self.assertEqual(shape(head["Q"]), (5, 4))
                self.assertEqual(shape(head["K"]), (5, 4))
                self.assertEqual(shape(head["V"]), (5, 4))
                for key in ["scores", "scaled_scores", "masked_scores", "weights"]:
                    self.assertEqual(shape(head[key]), (5, 5), key)
                self.assertEqual(shape(head["output"]), (5, 4))
                self.assertEqual(head["fully_masked_rows"], [])

    def test_every_weights_row_sums_to_one(self):
        for h, head in enumerate(builtin_result()["heads"]):
            for i, row in enumerate(head["weights"]):
                with self.subTest(head=h, row=i):
                    self.assertAlmostEqual(sum(row), 1.0, delta=1e-5)

    def test_apple_attends_most_to_eat_in_head_0(self):
        row = builtin_result()["heads"][0]["weights"][TARGET_TOKENS.index("apple")]
        self.assertEqual(row.index(max(row)), TARGET_TOKENS.index("eat"))

    def test_scores_are_q_dot_k_and_weights_their_scaled_softmax(self):
        # From the spec: scores = Q·Kᵀ, scaled = scores / sqrt(d_k), weights = softmax(scaled).
        for h, head in enumerate(builtin_result()["heads"]):
            Q, K = head["Q"], head["K"]
            for i in range(5):
                scores = [sum(q * k for q, k in zip(Q[i], K[j])) for j in range(5)]
                scaled = [s / 2.0 for s in scores]
                top = max(scaled)
                exps = [math.exp(s - top) for s in scaled]
                weights = [e / sum(exps) for e in exps]
                for j in range(5):
                    with self.subTest(head=h, row=i, col=j):
                        self.assertAlmostEqual(head["scores"][i][j], scores[j], delta=1e-4)
                        self.assertAlmostEqual(head["scaled_scores"][i][j], scaled[j], delta=1e-4)
                        self.assertAlmostEqual(head["weights"][i][j], weights[j], delta=1e-5)

    def test_head_output_is_weights_times_v(self):
        for h, head in enumerate(builtin_result()["heads"]):
            W, V = head["weights"], head["V"]
            for i in range(5):
                for d in range(4):
                    expected = sum(W[i][j] * V[j][d] for j in range(5))
                    with self.subTest(head=h, row=i, col=d):
                        self.assertAlmostEqual(head["output"][i][d], expected, delta=1e-5)


# -----------------------------------------------------------------------------
# compute FILE, -o, stdin
# -----------------------------------------------------------------------------
class ComputeFileTest(TempDirTest):
    def test_output_file_is_written_and_stdout_is_empty(self):
        source, out = self.path("s.json"), self.path("out.json")
        write(source, scenario(target="the cat sat on the mat"))
        result = run("compute", source, "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertTrue(os.path.isfile(out))

    def test_output_file_equals_stdout(self):
        source, out = self.path("s.json"), self.path("out.json")
        write(source, scenario(target="the cat sat on the mat", heads=4))
        to_file = run("compute", source, "-o", out)
        to_stdout = run("compute", source)
        self.assertEqual(to_file.returncode, 0, to_file.stderr)
        self.assertEqual(to_stdout.returncode, 0, to_stdout.stderr)
        with open(out, encoding="utf-8") as f:
            self.assertEqual(json.load(f), json.loads(to_stdout.stdout))

    def test_dash_reads_the_scenario_from_stdin(self):
        result = run("compute", "-", stdin_text=scenario(target="dogs chase cats"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["target_tokens"], ["dogs", "chase", "cats"])


class BadInputTest(TempDirTest):
    BAD_INPUTS = {
        "malformed": '{"format": "attnviz-scenario", "target": "a',
        "bad_key": scenario(target="a b", heads=0),
        "missing": None,  # the file does not exist
    }

    def bad_path(self, kind):
        path = self.path(kind + ".json")
        if self.BAD_INPUTS[kind] is not None:
            write(path, self.BAD_INPUTS[kind])
        return path

    def test_malformed_file_is_a_one_line_error(self):
        result = run("compute", self.bad_path("malformed"))
        self.assertOneLineError(result)
        self.assertIn("malformed JSON", result.stderr)

    def test_missing_file_is_a_one_line_error(self):
        path = self.bad_path("missing")
        result = run("compute", path)
        self.assertOneLineError(result)
        self.assertIn(path, result.stderr)

    def test_file_with_a_bad_key_is_a_one_line_error_naming_it(self):
        result = run("compute", self.bad_path("bad_key"))
        self.assertOneLineError(result)
        self.assertIn("heads", result.stderr)

    def test_error_leaves_an_existing_output_byte_identical(self):
        for kind in self.BAD_INPUTS:
            with self.subTest(kind=kind):
                out = self.path("out-" + kind + ".json")
                old = b'{"previous": "result"}\n\x00\xff binary tail'
                with open(out, "wb") as f:
                    f.write(old)
                result = run("compute", self.bad_path(kind), "-o", out)
                self.assertOneLineError(result)
                self.assertEqual(read_bytes(out), old)

    def test_error_does_not_create_the_output(self):
        for kind in self.BAD_INPUTS:
            with self.subTest(kind=kind):
                out = self.path("never-" + kind + ".json")
                result = run("compute", self.bad_path(kind), "-o", out)
                self.assertOneLineError(result)
                self.assertFalse(os.path.exists(out))
        leftovers = [n for n in os.listdir(self.dir) if n.startswith(".")]
        self.assertEqual(leftovers, [])

    def test_output_into_a_missing_folder_is_a_one_line_error(self):
        out = self.path(os.path.join("no-such-folder", "out.json"))
        result = run("compute", "--builtin", "-o", out)
        self.assertOneLineError(result)
        self.assertIn(out, result.stderr)


# -----------------------------------------------------------------------------
# Warnings, masks and overflow
# -----------------------------------------------------------------------------
class WarningTest(TempDirTest):
    def test_unknown_key_is_a_warning_on_stderr_and_in_the_json(self):
        result = self.compute_doc(scenario(target="a b", colour="blue"))
        self.assertEqual(result.returncode, 0, result.stderr)
        warning_lines = [l for l in result.stderr.splitlines() if "warning" in l]
        self.assertEqual(len(warning_lines), 1, result.stderr)
        self.assertIn("colour", warning_lines[0])
        warnings = json.loads(result.stdout)["warnings"]
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("colour", warnings[0])


class CausalTest(TempDirTest):
    def test_masked_scores_are_null_exactly_above_the_diagonal_and_weights_0_there(self):
        result = self.compute_doc(scenario(target="one two three four", causal=True))
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = json.loads(result.stdout)
        for h, head in enumerate(doc["heads"]):
            for i in range(4):
                for j in range(4):
                    with self.subTest(head=h, row=i, col=j):
                        if j > i:
                            self.assertIsNone(head["masked_scores"][i][j])
                            self.assertEqual(head["weights"][i][j], 0)
                        else:
                            self.assertIsNotNone(head["masked_scores"][i][j])
                            self.assertEqual(head["masked_scores"][i][j],
                                             head["scaled_scores"][i][j])
            with self.subTest(head=h, row=0):
                self.assertEqual(head["weights"][0][0], 1)  # the first query sees only itself

    def test_in_cross_mode_a_file_asking_for_it_loads_without_it_and_a_warning(self):
        # Cross-attention has no causal mask: the source is written whole before any query.
        result = self.compute_doc(scenario(mode="cross", target="one two three four",
                                           source="un deux trois", causal=True))
        self.assertEqual(result.returncode, 0, result.stderr)
        warning_lines = [l for l in result.stderr.splitlines() if "warning" in l]
        self.assertEqual(len(warning_lines), 1, result.stderr)
        self.assertIn("causal", warning_lines[0])
        self.assertIn("cross", warning_lines[0])
        doc = json.loads(result.stdout)
        self.assertFalse(doc["config"]["causal"])
        self.assertEqual(len(doc["warnings"]), 1, doc["warnings"])
        for head in doc["heads"]:
            self.assertTrue(all(x is not None for row in head["masked_scores"] for x in row))
            self.assertTrue(all(x > 0 for row in head["weights"] for x in row))


class FullyMaskedRowTest(TempDirTest):
    MASKED_ROW = 2

    def masked_result(self):
        mask = [[1] * 5 for _ in range(5)]
        mask[self.MASKED_ROW] = [0] * 5
        result = self.compute_doc(scenario(target="i like to eat apple", mask=mask))
        self.assertEqual(result.returncode, 0, result.stderr)
        return result, json.loads(result.stdout)

    def test_the_row_is_listed_as_fully_masked_in_every_head(self):
        _, doc = self.masked_result()
        self.assertEqual(len(doc["heads"]), 2)
        for h, head in enumerate(doc["heads"]):
            with self.subTest(head=h):
                self.assertEqual(head["fully_masked_rows"], [self.MASKED_ROW])

    def test_its_weights_and_head_output_are_0(self):
        _, doc = self.masked_result()
        for h, head in enumerate(doc["heads"]):
            with self.subTest(head=h):
                self.assertEqual(head["weights"][self.MASKED_ROW], [0] * 5)
                self.assertEqual(head["output"][self.MASKED_ROW], [0] * 4)
                for i in range(5):
                    if i != self.MASKED_ROW:
                        self.assertAlmostEqual(sum(head["weights"][i]), 1.0, delta=1e-5)

    def test_it_is_warned_about(self):
        result, doc = self.masked_result()
        self.assertTrue(any("mask" in w for w in doc["warnings"]), doc["warnings"])
        self.assertIn("warning", result.stderr)


class OverflowTest(TempDirTest):
    def overflow_result(self):
        doc = builtin_scenario()
        # 'apple' and 'eat' have the food feature (row 1): their scores reach about 1e76.
        doc["weights"]["W_Q"][0][1][0] = 1e38
        doc["weights"]["W_K"][0][1][0] = 1e38
        result = self.compute_doc(json.dumps(doc))
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_weights_rows_still_sum_to_one(self):
        doc = self.overflow_result()
        for h, head in enumerate(doc["heads"]):
            for i, row in enumerate(head["weights"]):
                with self.subTest(head=h, row=i):
                    self.assertNotIn(None, row)
                    self.assertTrue(all(math.isfinite(x) for x in row))
                    self.assertAlmostEqual(sum(row), 1.0, delta=1e-5)

    def test_a_warning_mentions_the_float_range(self):
        doc = self.overflow_result()
        self.assertTrue(any("float range" in w for w in doc["warnings"]), doc["warnings"])


# -----------------------------------------------------------------------------
# heatmap, tokens, init
# -----------------------------------------------------------------------------
class HeatmapTest(unittest.TestCase):
    def test_shows_every_head_with_the_token_labels(self):
        result = run("heatmap", "--builtin")
        self.assertEqual(result.returncode, 0, result.stderr)
        # Headed as the app counts heads, from 1 (--head counts from 0, as the files do).
        self.assertIn("head 1:", result.stdout)
        self.assertIn("head 2:", result.stdout)
        self.assertNotIn("head 0:", result.stdout)
        for token in TARGET_TOKENS:
            self.assertIn(token, result.stdout)

    def test_head_option_shows_only_that_head(self):
        result = run("heatmap", "--builtin", "--head", "1")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("head 2:", result.stdout)
        self.assertNotIn("head 1:", result.stdout)

    def test_head_past_the_last_is_an_error(self):
        result = run("heatmap", "--builtin", "--head", "5")
        self.assertEqual(result.returncode, 1)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith(ERROR_PREFIX), lines[0])


class DocsScenariosTest(unittest.TestCase):
    """The translation pairs of docs/scenarios (in the user guide's pictures): in head 0 each
    query attends most to its translation, as their comments say."""
    DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "scenarios")
    PAIRS = {
        "translation.json": {"i": "je", "eat": "mange", "apple": "pomme"},
        "arabic.json": {"i": "\u0623\u0646\u0627", "eat": "\u0622\u0643\u0644", "apple": "\u062a\u0641\u0627\u062d\u0629"},
    }

    def test_each_query_attends_most_to_its_translation(self):
        for name, pairs in self.PAIRS.items():
            with self.subTest(scenario=name):
                result = run("compute", os.path.join(self.DOCS, name))
                self.assertEqual(result.returncode, 0, result.stderr)
                doc = json.loads(result.stdout)
                weights = doc["heads"][0]["weights"]
                for query, key in pairs.items():
                    row = weights[doc["target_tokens"].index(query)]
                    self.assertEqual(doc["source_tokens"][row.index(max(row))], key, (query, row))


class TokensTest(unittest.TestCase):
    def test_counts_nine_tokens(self):
        result = run("tokens", "I like Natural Language Processing, a lot!")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("9 tokens", result.stdout)
        for token in ["Natural", "Processing", ",", "lot", "!"]:
            self.assertIn(token, result.stdout)

    def test_a_first_line_names_the_columns_above_them(self):
        result = run("tokens", "I like Natural Language Processing, a lot!")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(lines[0].split()[:5], ["#", "token", "kind", "from", "embedding"])
        self.assertIn("d_model 8", lines[0])
        # Each name stands above its column: "Natural" under "token", "word" under "kind", ...
        natural = lines[3]
        self.assertEqual(natural.split()[:4], ["2", "Natural", "word", "hashed"])
        for name, value in (("token", "Natural"), ("kind", "word"), ("from", "hashed"),
                            ("embedding", "[")):
            with self.subTest(column=name):
                self.assertEqual(lines[0].index(name), natural.index(value))
        self.assertEqual(len(lines), 1 + 9 + 1)  # the names, a line per token, the count

    def test_the_heading_says_when_only_the_first_values_are_shown(self):
        result = run("tokens", "--d-model", "12", "apple")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("first 8 of d_model 12", result.stdout.splitlines()[0])

    def test_text_may_be_given_with_text(self):
        result = run("tokens", "--text", "the animal was tired")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("4 tokens", result.stdout)
        self.assertNotIn("--text", result.stdout)


# -----------------------------------------------------------------------------
# --text, --mode and --source: the scenario's sentences from the command line
# -----------------------------------------------------------------------------
class SentenceOptionsTest(UsageErrorAssertion, TempDirTest):
    def builtin_with(self, name="typed.json", **fields):
        """The built-in scenario, complete, with the given fields changed, written to a file."""
        doc = builtin_scenario()
        doc.update(fields)
        write(self.path(name), json.dumps(doc))
        return self.path(name)

    def test_text_is_the_builtin_scenario_with_that_sentence(self):
        # What the app shows after the sentence is typed into the built-in scenario.
        result = run("compute", "--text", "the animal was tired")
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = json.loads(result.stdout)
        self.assertEqual(doc["target_tokens"], ["the", "animal", "was", "tired"])
        typed = run("compute", self.builtin_with(target="the animal was tired"))
        self.assertEqual(typed.returncode, 0, typed.stderr)
        self.assertEqual(doc, json.loads(typed.stdout))
        self.assertNotEqual(doc["heads"][0]["weights"], builtin_result()["heads"][0]["weights"])

    def test_heatmap_of_a_sentence_is_headed_by_that_sentence(self):
        result = run("heatmap", "--text", "the animal was tired")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(lines[0], "The animal was tired")
        self.assertNotIn("apple", result.stdout)
        for token in ("the", "animal", "was", "tired"):
            self.assertIn(token, lines[3])

    def test_heatmap_header_is_the_builtin_sentence_or_a_files_title(self):
        self.assertEqual(run("heatmap", "--builtin").stdout.splitlines()[0], "I like to eat apple")
        # An untitled file is headed by its sentence, a named one by its name.
        untitled = run("heatmap", self.builtin_with(target="the cat sat"))
        self.assertEqual(untitled.stdout.splitlines()[0], "The cat sat")
        named = run("heatmap", self.builtin_with(target="the cat sat", title="Week 3"))
        self.assertEqual(named.stdout.splitlines()[0], "Week 3")
        # --text in a named scenario keeps its name.
        renamed = run("heatmap", self.path("typed.json"), "--text", "a dog ran")
        self.assertEqual(renamed.returncode, 0, renamed.stderr)
        self.assertEqual(renamed.stdout.splitlines()[0], "Week 3")
        self.assertIn("dog", renamed.stdout)

    def test_svg_and_export_take_the_sentence_too(self):
        result = run("svg", "--text", "the animal was tired", "--heatmap", self.path("h.svg"))
        self.assertEqual(result.returncode, 0, result.stderr)
        root = ElementTree.parse(self.path("h.svg")).getroot()
        self.assertEqual(len([e for e in root.iter(SVG_NS + "rect") if e.get("class") == "cell"]), 16)
        self.assertIn("The animal was tired", ElementTree.tostring(root, encoding="unicode"))
        result = run("export", "--text", "the animal was tired", "--json", self.path("r.json"))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(self.path("r.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["target_tokens"], ["the", "animal", "was", "tired"])

    def test_cross_mode_takes_the_source_for_keys_and_values(self):
        result = run("compute", "--mode", "cross", "--text", "je mange une pomme", "--source",
                     "i eat an apple")
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = json.loads(result.stdout)
        self.assertEqual(doc["target_tokens"], ["je", "mange", "une", "pomme"])
        self.assertEqual(doc["source_tokens"], ["i", "eat", "an", "apple"])
        self.assertEqual(shape(doc["heads"][0]["weights"]), (4, 4))
        self.assertEqual(result.stderr, "")

    def test_cross_mode_without_a_source_starts_with_the_sentence_as_the_app_does(self):
        result = run("compute", "--mode", "cross", "--text", "a b c")
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = json.loads(result.stdout)
        self.assertEqual(doc["source_tokens"], ["a", "b", "c"])

    def test_source_of_a_cross_file_is_replaced(self):
        path = self.builtin_with(mode="cross", source="je mange une pomme")
        result = run("compute", path, "--source", "le chat")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["source_tokens"], ["le", "chat"])

    def test_cross_mode_of_a_causal_scenario_turns_the_mask_off_with_a_warning(self):
        path = self.builtin_with(causal=True)
        result = run("compute", path, "--mode", "cross", "--source", "le chat noir")
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = json.loads(result.stdout)
        self.assertIn("causal", result.stderr)
        self.assertTrue(any("causal" in w for w in doc["warnings"]), doc["warnings"])
        self.assertFalse(doc["config"]["causal"])
        for head in doc["heads"]:
            self.assertTrue(all(x is not None for row in head["masked_scores"] for x in row))

    def test_empty_or_blank_text_is_a_usage_error(self):
        outputs = {"compute": [], "heatmap": [], "export": ["--json", self.path("x.json")],
                   "svg": ["--heatmap", self.path("x.svg")], "tokens": []}
        for command, output in outputs.items():
            for text in ("", "   "):
                with self.subTest(command=command, text=text):
                    self.assertUsageError(run(command, "--text", text, *output), "--text")
        self.assertEqual(os.listdir(self.dir), [])
        self.assertUsageError(run("heatmap", "--text"), "--text", "sentence")
        self.assertUsageError(run("compute", "--mode", "cross", "--source", ""), "--source")

    def test_source_without_cross_mode_is_a_usage_error_and_writes_nothing(self):
        result = run("compute", "--text", "le chat", "--source", "the cat", "-o", self.path("o.json"))
        self.assertUsageError(result, "--source", "--mode cross")
        self.assertFalse(os.path.exists(self.path("o.json")))
        self.assertUsageError(run("heatmap", "--mode", "self", "--source", "x"), "--source",
                              "--mode self")
        # A file in self mode: found once it is read.
        result = run("heatmap", self.builtin_with(), "--source", "x")
        self.assertUsageError(result, "--source", "self-attention")

    def test_a_bad_mode_an_unknown_option_and_source_for_tokens_are_usage_errors(self):
        self.assertUsageError(run("heatmap", "--mode", "both"), "--mode", "self or cross")
        self.assertUsageError(run("heatmap", "--txt", "a b"), "--txt")
        self.assertUsageError(run("compute", "--text", "a b", "--sentence", "c"), "--sentence")
        self.assertUsageError(run("tokens", "--source", "a b"), "--source")
        self.assertUsageError(run("heatmap", self.builtin_with(), "--builtin", "--text", "a"),
                              "not both")


class InitTest(TempDirTest):
    def init_file(self):
        path = self.path("init.json")
        result = run("init", "--builtin", "-o", path)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertTrue(os.path.isfile(path))
        return path

    def test_its_file_is_accepted_by_compute(self):
        result = run("compute", self.init_file())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")

    def test_its_file_computes_like_the_builtin(self):
        result = run("compute", self.init_file())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout), builtin_result())


# -----------------------------------------------------------------------------
# export, svg
# -----------------------------------------------------------------------------
SVG_NS = "{http://www.w3.org/2000/svg}"
HEAD_MATRICES = ["Q", "K", "V", "scores", "scaled_scores", "masked_scores", "weights", "output"]


def read_csv(path):
    """(header, row labels, rows of floats) of a CSV file written by export --csv."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0][1:]
    labels = [row[0] for row in rows[1:]]
    values = [[float(x) for x in row[1:]] for row in rows[1:]]
    return header, labels, values


def expected_csv_names(heads, cross=False):
    """Heads counted from 1 in the names, as the app shows them (the JSON's heads[0] is head1)."""
    names = ["X_target.csv"] + (["X_source.csv"] if cross else [])
    for h in range(1, heads + 1):
        names += ["head%d_%s.csv" % (h, m) for m in HEAD_MATRICES]
    return names + ["concat.csv", "output.csv"]


class ExportTest(TempDirTest):
    def export_builtin(self):
        folder = self.path("csv")
        os.mkdir(folder)
        result = run("export", "--builtin", "--csv", folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "")
        return folder

    def test_csv_writes_one_file_per_matrix(self):
        folder = self.export_builtin()
        self.assertEqual(sorted(os.listdir(folder)), sorted(expected_csv_names(2)))

    def test_csv_numbers_equal_the_json_of_compute(self):
        folder = self.export_builtin()
        doc = builtin_result()

        def same(name, matrix, rows, columns):
            header, labels, values = read_csv(os.path.join(folder, name))
            self.assertEqual(header, columns, name)
            self.assertEqual(labels, rows, name)
            # A masked score is null in JSON and -inf in CSV.
            expected = [[-math.inf if x is None else x for x in row] for row in matrix]
            self.assertEqual(values, expected, name)

        dims = lambda n: ["d%d" % d for d in range(1, n + 1)]  # counted from 1, as the app does
        same("X_target.csv", doc["X_target"], TARGET_TOKENS, dims(8))
        for h, head in enumerate(doc["heads"]):
            with self.subTest(head=h):
                p = "head%d_" % (h + 1)  # the JSON's heads[h] is the app's head h + 1
                same(p + "Q.csv", head["Q"], TARGET_TOKENS, dims(4))
                same(p + "K.csv", head["K"], TARGET_TOKENS, dims(4))
                same(p + "V.csv", head["V"], TARGET_TOKENS, dims(4))
                for key in ["scores", "scaled_scores", "masked_scores", "weights"]:
                    same(p + key + ".csv", head[key], TARGET_TOKENS, TARGET_TOKENS)
                same(p + "output.csv", head["output"], TARGET_TOKENS, dims(4))
        same("concat.csv", doc["concat"], TARGET_TOKENS,
             ["head%d_d%d" % (h, d) for h in range(1, 3) for d in range(1, 5)])
        same("output.csv", doc["output"], TARGET_TOKENS, dims(8))

    def test_masked_scores_are_minus_inf_in_csv(self):
        source, folder = self.path("s.json"), self.path("csv")
        os.mkdir(folder)
        write(source, scenario(target="one two three", causal=True))
        result = run("export", source, "--csv", folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        _, _, values = read_csv(os.path.join(folder, "head1_masked_scores.csv"))
        self.assertEqual(values[0][1:], [-math.inf, -math.inf])
        self.assertTrue(math.isfinite(values[0][0]))

    def test_cross_mode_adds_x_source(self):
        source, folder = self.path("s.json"), self.path("csv")
        os.mkdir(folder)
        write(source, scenario(mode="cross", target="the cat", source="le chat noir", heads=1, d_model=4))
        result = run("export", source, "--csv", folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(os.listdir(folder)), sorted(expected_csv_names(1, cross=True)))
        _, labels, _ = read_csv(os.path.join(folder, "X_source.csv"))
        self.assertEqual(labels, ["le", "chat", "noir"])

    def test_json_equals_compute(self):
        out = self.path("result.json")
        result = run("export", "--builtin", "--json", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out, encoding="utf-8") as f:
            self.assertEqual(json.load(f), builtin_result())

    def test_without_csv_or_json_is_a_usage_error(self):
        result = run("export", "--builtin")
        self.assertEqual(result.returncode, 2)
        self.assertTrue(result.stderr.startswith(ERROR_PREFIX), result.stderr)

    def test_missing_folder_is_a_one_line_error_and_writes_nothing(self):
        folder, out = self.path("no-such-folder"), self.path("result.json")
        result = run("export", "--builtin", "--csv", folder, "--json", out)
        self.assertOneLineError(result)
        self.assertIn(folder, result.stderr)
        self.assertEqual(os.listdir(self.dir), [])

    def test_bad_scenario_writes_nothing(self):
        source, folder, out = self.path("bad.json"), self.path("csv"), self.path("result.json")
        os.mkdir(folder)
        write(source, scenario(target="a b", heads=0))
        result = run("export", source, "--csv", folder, "--json", out)
        self.assertOneLineError(result)
        self.assertEqual(os.listdir(folder), [])
        self.assertFalse(os.path.exists(out))


class SvgTest(TempDirTest):
    def svg(self, *args):
        result = run("svg", "--builtin", *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "")

    def parse(self, name):
        root = ElementTree.parse(self.path(name)).getroot()
        self.assertEqual(root.tag, SVG_NS + "svg")
        return root

    def with_class(self, root, tag, css_class):
        return [e for e in root.iter(SVG_NS + tag) if e.get("class") == css_class]

    def test_heatmap_has_one_cell_per_query_and_key(self):
        self.svg("--heatmap", self.path("h.svg"))
        cells = self.with_class(self.parse("h.svg"), "rect", "cell")
        self.assertEqual(len(cells), 25)
        self.assertEqual({(c.get("data-query"), c.get("data-key")) for c in cells},
                         {(str(i), str(j)) for i in range(5) for j in range(5)})

    def test_heatmap_cells_carry_the_weights_of_the_head(self):
        self.svg("--heatmap", self.path("h.svg"), "--head", "1")
        weights = builtin_result()["heads"][1]["weights"]
        for cell in self.with_class(self.parse("h.svg"), "rect", "cell"):
            i, j = int(cell.get("data-query")), int(cell.get("data-key"))
            self.assertAlmostEqual(float(cell.get("data-alpha")), weights[i][j], delta=5e-4)

    def test_contrast_gives_the_largest_weight_the_top_colour(self):
        # Head 0's largest weight (0.74) is not 1: on the usual scale its cell is not the
        # colormap's top colour; with --contrast it is, and only cells of that weight are.
        self.svg("--heatmap", self.path("plain.svg"))
        self.svg("--heatmap", self.path("contrast.svg"), "--contrast")
        def fill_of_largest(name):
            cells = self.with_class(self.parse(name), "rect", "cell")
            largest = max(cells, key=lambda c: float(c.get("data-alpha")))
            return largest.get("fill"), {c.get("fill") for c in cells}
        plain, plain_fills = fill_of_largest("plain.svg")
        contrast, contrast_fills = fill_of_largest("contrast.svg")
        self.assertNotEqual(plain, contrast)
        self.assertNotEqual(plain_fills, contrast_fills)
        with open(self.path("contrast.svg"), encoding="utf-8") as svg:
            self.assertIn("0.74", svg.read())  # the legend's top

    def test_arrows_draw_each_pair_above_the_threshold(self):
        self.svg("--arrows", self.path("a.svg"), "--threshold", "0.1")
        heads = builtin_result()["heads"]
        expected = {(str(h), str(i), str(j)) for h, head in enumerate(heads)
                    for i, row in enumerate(head["weights"]) for j, w in enumerate(row) if w >= 0.1}
        arrows = self.with_class(self.parse("a.svg"), "path", "arrow")
        self.assertEqual(len(arrows), len(expected))
        self.assertEqual({(a.get("data-head"), a.get("data-query"), a.get("data-key")) for a in arrows},
                         expected)

    def test_arrows_of_one_head(self):
        self.svg("--arrows", self.path("a.svg"), "--head", "0")
        arrows = self.with_class(self.parse("a.svg"), "path", "arrow")
        self.assertTrue(arrows)
        self.assertEqual({a.get("data-head") for a in arrows}, {"0"})

    def test_heatmap_and_arrows_at_once(self):
        self.svg("--heatmap", self.path("h.svg"), "--arrows", self.path("a.svg"), "--theme", "dark",
                 "--colormap", "color-blind")
        self.parse("h.svg")
        self.parse("a.svg")

    def test_head_past_the_last_is_an_error_and_writes_nothing(self):
        result = run("svg", "--builtin", "--heatmap", self.path("h.svg"), "--head", "2")
        self.assertOneLineError(result)
        self.assertEqual(os.listdir(self.dir), [])

    def test_head_and_all_heads_together_is_a_usage_error(self):
        result = run("svg", "--builtin", "--arrows", self.path("a.svg"), "--head", "0", "--all-heads")
        self.assertEqual(result.returncode, 2)
        self.assertEqual(os.listdir(self.dir), [])

    def test_bad_scenario_leaves_existing_files_untouched(self):
        source, out = self.path("bad.json"), self.path("h.svg")
        write(source, '{"format": "attnviz-scenario", "target": "a')
        with open(out, "wb") as f:
            f.write(b"old picture")
        result = run("svg", source, "--heatmap", out, "--arrows", self.path("a.svg"))
        self.assertOneLineError(result)
        self.assertEqual(read_bytes(out), b"old picture")
        self.assertFalse(os.path.exists(self.path("a.svg")))


# -----------------------------------------------------------------------------
# bench
# -----------------------------------------------------------------------------
BENCH_LINE = re.compile(r"^median_us=(\d+(?:\.\d+)?) p90_us=(\d+(?:\.\d+)?) allocations=(\d+)\n$")


class BenchTest(UsageErrorAssertion, unittest.TestCase):
    """attnviz-cli bench: one line, no heap allocation in the steady state. Nothing is timed."""

    def bench(self, *args):
        result = run("bench", *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        match = BENCH_LINE.match(result.stdout)
        self.assertIsNotNone(match, repr(result.stdout))
        median, p90, allocations = float(match.group(1)), float(match.group(2)), int(match.group(3))
        self.assertGreater(median, 0.0)
        self.assertGreaterEqual(p90, median)
        return allocations


    def test_prints_one_line_and_a_recompute_allocates_nothing(self):
        self.assertEqual(self.bench("--tokens", "8", "--d-model", "32", "--heads", "4", "--repeat", "50"), 0)

    def test_classroom_shape_allocates_nothing_with_the_default_repeat(self):
        self.assertEqual(self.bench("--tokens", "32", "--d-model", "64", "--heads", "8"), 0)

    def test_cross_causal_and_every_compatibility_allocate_nothing(self):
        for compat in ("dot", "scaled_dot", "general", "additive", "cosine"):
            with self.subTest(compat=compat):
                self.assertEqual(self.bench("--tokens", "12", "--d-model", "16", "--heads", "2", "--d-k", "3",
                                            "--d-v", "5", "--cross", "9", "--compat", compat, "--causal",
                                            "--repeat", "30"), 0)

    def test_two_threads_print_the_line_and_allocate_nothing(self):
        self.assertEqual(self.bench("--tokens", "32", "--d-model", "64", "--heads", "8", "--threads", "2",
                                    "--repeat", "200"), 0)
        self.assertEqual(self.bench("--tokens", "20", "--d-model", "48", "--heads", "3", "--threads", "2",
                                    "--cross", "7", "--repeat", "50"), 0)

    def test_threads_out_of_range_are_usage_errors(self):
        for threads in ("0", "17", "two"):
            with self.subTest(threads=threads):
                self.assertUsageError(run("bench", "--tokens", "8", "--d-model", "32", "--heads", "4", "--threads",
                                          threads), "--threads")

    def test_help_lists_bench(self):
        self.assertIn("attnviz-cli bench", run("--help").stdout)

    def test_zero_tokens_is_a_usage_error(self):
        self.assertUsageError(run("bench", "--tokens", "0", "--d-model", "32", "--heads", "4"), "--tokens", "1024")

    def test_values_past_the_limits_are_usage_errors(self):
        for args, word in ((["--d-model", "2048", "--heads", "4", "--tokens", "8"], "--d-model"),
                           (["--d-model", "32", "--heads", "17", "--tokens", "8"], "--heads"),
                           (["--d-model", "32", "--heads", "4", "--tokens", "1025"], "--tokens"),
                           (["--d-model", "32", "--heads", "4", "--tokens", "8", "--d-k", "0"], "--d-k"),
                           (["--d-model", "32", "--heads", "4", "--tokens", "8", "--cross", "x"], "--cross")):
            with self.subTest(args=args):
                self.assertUsageError(run("bench", *args), word)

    def test_a_shape_past_the_limits_together_is_a_usage_error(self):
        # Each value is in range alone; 16 heads of 65 make 1040 columns, past the 1024 allowed.
        self.assertUsageError(run("bench", "--tokens", "32", "--d-model", "1024", "--heads", "16", "--d-k", "65"),
                              "16 x 65", "1024")

    def test_help_after_bench_prints_the_usage(self):
        result = run("bench", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("attnviz-cli bench", result.stdout)

    def test_heads_that_do_not_divide_d_model_are_a_usage_error(self):
        self.assertUsageError(run("bench", "--tokens", "8", "--d-model", "30", "--heads", "4"), "--heads 4",
                              "--d-k")

    def test_with_d_k_heads_need_not_divide_d_model(self):
        self.assertEqual(self.bench("--tokens", "8", "--d-model", "30", "--heads", "4", "--d-k", "5",
                                    "--repeat", "20"), 0)

    def test_unknown_option_and_missing_shape_are_usage_errors(self):
        self.assertUsageError(run("bench", "--tokens", "8", "--d-model", "32", "--heads", "4", "--fast"),
                              "--fast")
        self.assertUsageError(run("bench", "--tokens", "8", "--d-model", "32"), "--heads")
        self.assertUsageError(run("bench", "--tokens", "8", "--d-model", "32", "--heads", "4", "--compat",
                                  "magic"), "--compat", "magic")


# -----------------------------------------------------------------------------
def main():
    global CLI
    argv = list(sys.argv)
    CLI = cli_harness.take_cli_path(argv, CLI)
    if not cli_harness.usable(CLI, "test_cli.py"):
        return 2
    return cli_harness.run_tests(argv)


if __name__ == "__main__":
    sys.exit(main())
