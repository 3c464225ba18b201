#!/usr/bin/env python3
"""`attnviz-cli compute --variant ...` as a user runs it: each cheaper attention method's output
recomputed here, in plain Python, from the head's Q, K and V that the same document holds (the
mask each method stands for written out by hand), and every bad setting refused with one line
(status 1 for bad input, 2 for usage).

Run: /usr/bin/python3 tests/cli/test_variants_cli.py --cli PATH/TO/attnviz-cli
Standard library only. Prints "N passed, M failed" and exits non-zero on any failure.
"""

import json
import math
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

import cli_harness  # tests/cli/cli_harness.py, beside this script

CLI = None  # set from --cli before the tests run
TEXT = "the animal did not cross the street because it was too tired"
BAD_INPUT, USAGE = 1, 2


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def attention(Q, K, V, scale, allowed):
    """softmax(scale · q_i · k_j over the allowed j) · V, row by row; a row with none: 0."""
    out = []
    for i, q in enumerate(Q):
        keys = [j for j in range(len(K)) if allowed(i, j)]
        if not keys:
            out.append([0.0] * len(V[0]))
            continue
        scores = [scale * sum(a * b for a, b in zip(q, K[j])) for j in keys]
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        total = sum(weights)
        out.append([sum(w / total * V[j][c] for w, j in zip(weights, keys))
                    for c in range(len(V[0]))])
    return out


def largest_difference(a, b):
    return max(abs(x - y) for row_a, row_b in zip(a, b) for x, y in zip(row_a, row_b))


class VariantsCliCase(unittest.TestCase):
    def compute(self, *args):
        result = run("compute", "--text", TEXT, *args)
        self.assertEqual(result.returncode, 0, f"{args}: {result.stderr}")
        self.assertEqual(result.stderr, "")
        document = json.loads(result.stdout)
        head = document["heads"][document["variant"]["head"]]
        return document, head, document["variant"]

    def compute_scenario(self, fields, *args):
        """`compute` on a scenario file holding TEXT and `fields`: the whole document."""
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "scenario.json"
            path.write_text(json.dumps({"format": "attnviz-scenario", "version": 1,
                                        "target": TEXT, **fields}))
            result = run("compute", path, *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def fails(self, status, *args):
        result = run(*args)
        self.assertEqual(result.returncode, status, f"{args}: {result.stderr}")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertTrue(result.stderr.startswith("attnviz-cli: error:"), result.stderr)
        self.assertEqual(result.stdout, "")
        return result.stderr

    def test_flash_equals_the_engine_for_every_tile(self):
        for tile in ["1", "2x3", "5x4", "7", "64"]:
            with self.subTest(tile=tile):
                document, head, variant = self.compute("--variant", "flash", "--tile", tile,
                                                       "--head", "1")
                n = len(document["target_tokens"])
                self.assertLess(largest_difference(variant["output"], head["output"]), 1e-5)
                queries, _, keys = tile.partition("x")
                bq, bk = int(queries), int(keys or queries)
                self.assertEqual(len(variant["tiles"]), math.ceil(n / bq) * math.ceil(n / bk))
                self.assertEqual(variant["scores_held"], min(bq, n) * min(bk, n))
                self.assertEqual(variant["pairs_computed"], n * n)

    def test_masks_are_the_patterns_written_out(self):
        cases = {
            ("window", "--width", "3"): lambda i, j: -1 <= j - i <= 1,
            ("dilated", "--width", "3", "--dilation", "2"): lambda i, j: j - i in (-2, 0, 2),
            ("blocks", "--block", "4"): lambda i, j: i // 4 == j // 4,
            ("blocks", "--block", "4", "--global", "0,5"):
                lambda i, j: i // 4 == j // 4 or i in (0, 5) or j in (0, 5),
        }
        for (method, *options), allowed in cases.items():
            with self.subTest(method=method, options=options):
                _, head, variant = self.compute("--variant", method, *options)
                n = len(head["Q"])
                mask = [[1 if allowed(i, j) else 0 for j in range(n)] for i in range(n)]
                self.assertEqual(variant["mask"], mask)
                expected = attention(head["Q"], head["K"], head["V"], variant["scale"],
                                     lambda i, j: mask[i][j] == 1)
                self.assertLess(largest_difference(variant["output"], expected), 1e-5)
                self.assertEqual(variant["pairs_computed"], sum(map(sum, mask)))
                self.assertEqual(variant["pairs_of_full_attention"], n * n)

    def test_export_json_writes_the_variant_too(self):
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="attnviz-variants-"))
        try:
            out = tmp / "flash.json"
            result = run("export", "--builtin", "--json", out, "--variant", "flash", "--tile",
                         "2")
            self.assertEqual(result.returncode, 0, result.stderr)
            document = json.loads(out.read_text())
            self.assertEqual(document["variant"]["method"], "flash")
            self.assertEqual(document["variant"]["query_block"], 2)
            self.assertIn("heads", document)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_decode_is_the_causal_computation(self):
        _, head, variant = self.compute("--variant", "decode")
        n = len(head["Q"])
        expected = attention(head["Q"], head["K"], head["V"], variant["scale"],
                             lambda i, j: j <= i)
        self.assertLess(largest_difference(variant["output"], expected), 1e-5)
        self.assertLess(variant["largest_difference"], 1e-5)
        with_cache, without = variant["work_per_step"], variant["work_per_step_without_cache"]
        self.assertEqual(len(with_cache), n)
        # The work of a step grows by the same amount each step with the cache; without it, by
        # a whole token's key and value more.
        steps = {b - a for a, b in zip(with_cache, with_cache[1:])}
        self.assertEqual(len(steps), 1)
        self.assertGreater(without[-1] - without[-2], with_cache[-1] - with_cache[-2])

    def test_decode_under_grouped_query_attention_uses_the_groups_keys(self):
        # 4 heads sharing 2 key/value heads: head 1 takes head 0's K and V, head 2 its own.
        document = self.compute_scenario(
            {"d_model": 8, "heads": 4, "d_k": 2, "d_v": 2, "kv_groups": 2, "causal": True},
            "--variant", "decode", "--head", "1")
        heads, variant = document["heads"], document["variant"]
        self.assertEqual(heads[1]["K"], heads[0]["K"])
        self.assertEqual(heads[1]["V"], heads[0]["V"])
        self.assertNotEqual(heads[2]["K"], heads[1]["K"])
        self.assertNotEqual(heads[1]["Q"], heads[0]["Q"])
        expected = attention(heads[1]["Q"], heads[0]["K"], heads[0]["V"], variant["scale"],
                             lambda i, j: j <= i)
        self.assertLess(largest_difference(variant["output"], expected), 1e-5)
        self.assertLess(largest_difference(heads[1]["output"], expected), 1e-5)

    def test_shared_keys_counts_by_hand_and_differs_from_multi_head(self):
        def grouped(extra, head):
            fields = {"d_model": 8, "heads": 4, "d_k": 2, "d_v": 3, "compatibility": "additive"}
            return self.compute_scenario({**fields, **extra}, "--variant", "shared_keys",
                                         "--head", head)["variant"]
        variant = grouped({"kv_groups": 2}, 1)
        self.assertEqual(variant["kv_groups"], 2)
        self.assertEqual(variant["key_value_head"], 0)
        # 4 heads, d_model 8, d_k 2, d_v 3: W_K and W_V of G groups are G * 8 * (2 + 3); the
        # cache keeps G * (2 + 3) numbers per token.
        self.assertEqual([(c["groups"], c["key_value_weights"], c["cache_per_token"])
                          for c in variant["choices"]],
                         [(4, 160, 20), (2, 80, 10), (1, 40, 5)])
        self.assertTrue(all(c["query_weights"] == 64 and c["output_weights"] == 96
                            for c in variant["choices"]))
        self.assertGreater(variant["largest_difference"], 1e-3)  # head 1 lost its own keys
        # The first head of a group keeps its own keys: nothing changes for it.
        self.assertEqual(grouped({"kv_groups": 2}, 0)["largest_difference"], 0)
        self.assertEqual(grouped({}, 1)["largest_difference"], 0)

    def test_linformer_is_attention_over_its_summaries(self):
        _, head, variant = self.compute("--variant", "linformer", "--k", "3",
                                        "--share-projection")
        E = variant["E"]
        self.assertEqual((len(E), len(E[0])), (3, len(head["K"])))

        def project(M):
            return [[sum(E[r][j] * M[j][c] for j in range(len(M))) for c in range(len(M[0]))]
                    for r in range(len(E))]

        keys, values = project(head["K"]), project(head["V"])
        expected = attention(head["Q"], keys, values, variant["scale"], lambda i, j: True)
        self.assertLess(largest_difference(variant["output"], expected), 1e-4)
        self.assertEqual(variant["pairs_computed"], 3 * len(head["Q"]))

    def test_reformer_pairs_share_a_bucket_and_rows_sum_to_one(self):
        _, head, variant = self.compute("--variant", "reformer", "--buckets", "4", "--chunk",
                                        "3", "--rounds", "2")
        buckets = variant["bucket_of_token"]
        self.assertEqual(len(buckets), 2)
        for i, row in enumerate(variant["weights"]):
            self.assertAlmostEqual(sum(row), 1.0, places=5)
            for j, weight in enumerate(row):
                if variant["pairs_mask"][i][j]:
                    self.assertTrue(any(b[i] == b[j] for b in buckets), (i, j))
                else:
                    self.assertEqual(weight, 0)
        self.assertLess(variant["pairs_computed"], 2 * len(head["Q"]) ** 2)

    def test_bad_settings_are_refused(self):
        self.assertIn("--tile needs", self.fails(USAGE, "compute", "--builtin", "--variant",
                                                 "flash", "--tile", "0"))
        self.assertIn("give --variant NAME too",
                      self.fails(USAGE, "compute", "--builtin", "--k", "2"))
        self.assertIn("flash, linformer, reformer",
                      self.fails(USAGE, "compute", "--builtin", "--variant", "lightning"))
        self.assertIn("go with compute",
                      self.fails(USAGE, "heatmap", "--builtin", "--variant", "flash"))
        self.assertIn("go with compute",
                      self.fails(USAGE, "export", "--builtin", "--csv", ".", "--variant",
                                 "flash"))
        self.assertIn("must be between 1 and n = 5, got 9",
                      self.fails(BAD_INPUT, "compute", "--builtin", "--variant", "linformer",
                                 "--k", "9"))
        self.assertIn("the number of buckets must be 1 or an even number",
                      self.fails(BAD_INPUT, "compute", "--builtin", "--variant", "reformer",
                                 "--buckets", "0"))
        self.assertIn("needs self-attention",
                      self.fails(BAD_INPUT, "compute", "--text", "a b c", "--source", "d e", "--mode", "cross",
                                 "--variant", "reformer"))
        self.assertIn("the window's width must be between 1",
                      self.fails(BAD_INPUT, "compute", "--builtin", "--variant", "window",
                                 "--width", "0"))
        self.assertIn("--head must be 0 to 1",
                      self.fails(BAD_INPUT, "compute", "--builtin", "--variant", "flash",
                                 "--head", "5"))
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="attnviz-variants-"))
        try:
            causal = tmp / "causal.json"
            causal.write_text('{"format": "attnviz-scenario", "target": "one two three four", '
                              '"causal": true}')
            self.assertIn("linformer has no causal mask",
                          self.fails(BAD_INPUT, "compute", causal, "--variant", "linformer",
                                     "--k", "2"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    global CLI
    argv = list(sys.argv)
    CLI = cli_harness.take_cli_path(argv, CLI)
    if not cli_harness.usable(CLI, "test_variants_cli.py"):
        return 2
    return cli_harness.run_tests(argv)


if __name__ == "__main__":
    sys.exit(main())
