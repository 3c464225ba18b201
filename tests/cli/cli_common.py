"""What the CLI's test scripts (test_cli.py, test_cli_files.py) share: running attnviz-cli, the
built-in scenario and result, temporary folders and the assertions on errors.

Standard library only. `CLI` is set by the script's main() from --cli.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import cli_harness  # tests/cli/cli_harness.py, beside this script

CLI = None  # set from --cli before the tests run

TARGET_TOKENS = ["i", "like", "to", "eat", "apple"]
HEAD_KEYS = ["Q", "K", "V", "scores", "scaled_scores", "masked_scores", "weights", "output",
             "fully_masked_rows"]
ERROR_PREFIX = "attnviz-cli: error:"
SVG_NS = "{http://www.w3.org/2000/svg}"


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


def main(script):
    """A test script's main: the CLI from --cli, then the script's test cases; the exit status."""
    global CLI
    argv = list(sys.argv)
    CLI = cli_harness.take_cli_path(argv, CLI)
    if not cli_harness.usable(CLI, script):
        return 2
    return cli_harness.run_tests(argv)
