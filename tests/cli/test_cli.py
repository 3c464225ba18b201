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

import cli_common  # tests/cli/cli_common.py, beside this script
from cli_common import (ERROR_PREFIX, HEAD_KEYS, SVG_NS, TARGET_TOKENS, TempDirTest, UsageErrorAssertion,
                        builtin_result, builtin_scenario, read_bytes, run, scenario, shape,
                        write)


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


if __name__ == "__main__":
    sys.exit(cli_common.main("test_cli.py"))
