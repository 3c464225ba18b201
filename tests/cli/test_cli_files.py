#!/usr/bin/env python3
"""attnviz-cli's files as a user gets them: init (a scenario written out), export (CSV and JSON
of every matrix), svg (the heatmap and arrows pictures) and bench (its report and options).

Run: /usr/bin/python3 tests/cli/test_cli_files.py --cli PATH/TO/attnviz-cli
Standard library only. Prints "N passed, M failed" and exits non-zero on any failure.
"""

import csv
import json
import math
import os
import re
import sys
import unittest
import xml.etree.ElementTree as ElementTree

import cli_common  # tests/cli/cli_common.py, beside this script
from cli_common import (ERROR_PREFIX, HEAD_KEYS, SVG_NS, TARGET_TOKENS, TempDirTest, UsageErrorAssertion,
                        builtin_result, builtin_scenario, read_bytes, run, scenario, shape,
                        write)


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


if __name__ == "__main__":
    sys.exit(cli_common.main("test_cli_files.py"))
