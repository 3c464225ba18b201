#!/usr/bin/env python3
"""Every output option of attnviz-cli (and the app's --screenshot and --layout-out) against every
kind of path (issue 36): each case in a fresh temporary folder, a symbolic link, a chain of two,
a dangling link, a file of mode 0600, a named pipe with a reader, "-", /dev/stdout with standard
output redirected to a file, /dev/fd/N of a pipe, a character device made with mknod inside the
folder (as root; skipped otherwise), and the errors: a folder where a file is expected, a
missing folder. What an option writes into a plain new file is what every other target must
receive; nothing a path pointed at may be replaced, and no temporary file may be left.

Usage: test_outputs.py --cli build/attnviz-cli [--app build/attnviz]
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_harness import run_tests, take_cli_path, usable  # noqa: E402

CLI = None
APP = None
TIMEOUT = 60

# Each output option of the CLI, as the arguments that write to PATH.
WRITERS = {
    "compute -o": lambda path: ["compute", "--builtin", "-o", path],
    "init -o": lambda path: ["init", "--builtin", "-o", path],
    "export --json": lambda path: ["export", "--builtin", "--json", path],
    "svg --heatmap": lambda path: ["svg", "--builtin", "--heatmap", path],
    "svg --arrows": lambda path: ["svg", "--builtin", "--arrows", path],
    "model attention -o": lambda path: ["model", "attention", "gpt2-kjv-tiny", "--text",
                                        "In the beginning", "--weights-only", "-o", path],
}


def run_cli(args, **kwargs):
    return subprocess.run([CLI] + args, capture_output=kwargs.pop("capture_output", True),
                          timeout=TIMEOUT, **kwargs)


def names_in(folder):
    return sorted(os.listdir(folder))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


class FifoReader(threading.Thread):
    """Reads a named pipe to its end on a thread of its own. It opens the pipe at once, and the
    test holds a second write end until finish(), so that a writer that fails, or that replaces
    the pipe instead of writing into it, makes the case fail rather than wait for ever."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.received = None
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.held = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.set_blocking(self.fd, True)
        self.start()

    def run(self):
        chunks = []
        for chunk in iter(lambda: os.read(self.fd, 1 << 20), b""):
            chunks.append(chunk)
        self.received = b"".join(chunks)

    def finish(self):
        os.close(self.held)
        self.join(TIMEOUT)
        os.close(self.fd)
        return self.received


class OutputCase(unittest.TestCase):
    expected = {}

    @classmethod
    def setUpClass(cls):
        # What each option writes into a plain new file.
        for name, arguments in WRITERS.items():
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "plain.out")
                done = run_cli(arguments(path))
                assert done.returncode == 0, (name, done.stderr)
                cls.expected[name] = read(path)
                assert cls.expected[name], name
                assert names_in(folder) == ["plain.out"], (name, names_in(folder))

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="attnviz-outputs-")

    def tearDown(self):
        shutil.rmtree(self.folder, ignore_errors=True)

    def fresh(self, name):
        """A fresh empty folder for one case of one option."""
        path = os.path.join(self.folder, name.replace(" ", "_").replace("-", ""))
        os.mkdir(path)
        return path

    def assert_ok(self, done, name):
        self.assertEqual(done.returncode, 0, (name, done.stderr))

    def assert_one_line_error(self, done, name, mentions):
        self.assertEqual(done.returncode, 1, (name, done.stderr))
        lines = done.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, (name, lines))
        self.assertIn(mentions, lines[0], name)

    def test_a_symbolic_link_stays_a_link(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                write(os.path.join(folder, "real.out"), b"old")
                os.symlink("real.out", os.path.join(folder, "link.out"))
                self.assert_ok(run_cli(arguments(os.path.join(folder, "link.out"))), name)
                self.assertTrue(os.path.islink(os.path.join(folder, "link.out")))
                self.assertEqual(os.readlink(os.path.join(folder, "link.out")), "real.out")
                self.assertEqual(read(os.path.join(folder, "real.out")), self.expected[name])
                self.assertEqual(names_in(folder), ["link.out", "real.out"])

    def test_a_chain_of_two_links(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                os.mkdir(os.path.join(folder, "sub"))
                write(os.path.join(folder, "sub", "real.out"), b"old")
                os.symlink(os.path.join(folder, "sub", "real.out"),
                           os.path.join(folder, "sub", "second.out"))
                os.symlink("sub/second.out", os.path.join(folder, "first.out"))
                self.assert_ok(run_cli(arguments(os.path.join(folder, "first.out"))), name)
                self.assertTrue(os.path.islink(os.path.join(folder, "first.out")))
                self.assertTrue(os.path.islink(os.path.join(folder, "sub", "second.out")))
                self.assertEqual(read(os.path.join(folder, "sub", "real.out")),
                                 self.expected[name])
                self.assertEqual(names_in(folder), ["first.out", "sub"])
                self.assertEqual(names_in(os.path.join(folder, "sub")),
                                 ["real.out", "second.out"])

    def test_a_dangling_link_creates_its_target(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                os.symlink("made.out", os.path.join(folder, "dangling.out"))
                self.assert_ok(run_cli(arguments(os.path.join(folder, "dangling.out"))), name)
                self.assertTrue(os.path.islink(os.path.join(folder, "dangling.out")))
                self.assertEqual(read(os.path.join(folder, "made.out")), self.expected[name])
                self.assertEqual(names_in(folder), ["dangling.out", "made.out"])

    def test_a_file_of_mode_0600_stays_0600(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                path = os.path.join(folder, "private.out")
                write(path, b"old")
                os.chmod(path, 0o600)
                self.assert_ok(run_cli(arguments(path)), name)
                self.assertEqual(stat.S_IMODE(os.lstat(path).st_mode), 0o600)
                self.assertEqual(read(path), self.expected[name])
                self.assertEqual(names_in(folder), ["private.out"])

    def test_a_named_pipe_with_a_reader_gets_everything_and_stays_a_pipe(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                fifo = os.path.join(folder, "pipe.out")
                os.mkfifo(fifo)
                reader = FifoReader(fifo)
                done = run_cli(arguments(fifo))
                received = reader.finish()
                self.assert_ok(done, name)
                self.assertEqual(received, self.expected[name])
                self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
                self.assertEqual(names_in(folder), ["pipe.out"])

    def test_dash_is_standard_output(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                done = subprocess.run([CLI] + arguments("-"), capture_output=True,
                                      timeout=TIMEOUT, cwd=folder)
                self.assert_ok(done, name)
                self.assertEqual(done.stdout, self.expected[name])
                self.assertEqual(names_in(folder), [])

    def test_dev_stdout_redirected_to_a_file_reaches_that_file(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                redirected = os.path.join(folder, "redirected.out")
                with open(redirected, "wb") as out:
                    done = subprocess.run([CLI] + arguments("/dev/stdout"), stdout=out,
                                          stderr=subprocess.PIPE, timeout=TIMEOUT)
                self.assert_ok(done, name)
                self.assertEqual(read(redirected), self.expected[name])
                self.assertTrue(os.path.islink("/dev/stdout"), "/dev/stdout was replaced")
                self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode),
                                "/dev/null was replaced")

    def test_dev_stderr_reaches_standard_error(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                done = run_cli(arguments("/dev/stderr"))
                self.assert_ok(done, name)
                self.assertTrue(done.stderr.endswith(self.expected[name]), name)

    def test_dev_fd_of_a_pipe_reaches_the_pipe(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                read_end, write_end = os.pipe()
                chunks = []

                def drain():
                    for chunk in iter(lambda: os.read(read_end, 1 << 20), b""):
                        chunks.append(chunk)

                reader = threading.Thread(target=drain, daemon=True)
                reader.start()
                done = subprocess.run([CLI] + arguments("/dev/fd/%d" % write_end),
                                      capture_output=True, timeout=TIMEOUT, pass_fds=(write_end,))
                os.close(write_end)
                reader.join(TIMEOUT)
                os.close(read_end)
                self.assert_ok(done, name)
                self.assertEqual(b"".join(chunks), self.expected[name])

    def test_a_character_device_made_with_mknod_stays_a_device(self):
        if os.geteuid() != 0:
            self.skipTest("mknod needs root")
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                device = os.path.join(folder, "null.out")
                try:
                    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
                except PermissionError as error:
                    self.skipTest("mknod is not allowed here: %s" % error)
                before = os.lstat(device)
                self.assert_ok(run_cli(arguments(device)), name)
                after = os.lstat(device)
                self.assertTrue(stat.S_ISCHR(after.st_mode))
                self.assertEqual((after.st_ino, after.st_rdev), (before.st_ino, before.st_rdev))
                self.assertEqual(names_in(folder), ["null.out"])

    def test_a_folder_where_a_file_is_expected_is_one_line_and_status_1(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                os.mkdir(os.path.join(folder, "folder.out"))
                done = run_cli(arguments(os.path.join(folder, "folder.out")))
                self.assert_one_line_error(done, name, os.path.join(folder, "folder.out"))
                self.assertEqual(names_in(folder), ["folder.out"])
                self.assertEqual(names_in(os.path.join(folder, "folder.out")), [])

    def test_a_missing_folder_is_one_line_and_status_1(self):
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                path = os.path.join(folder, "missing", "x.out")
                done = run_cli(arguments(path))
                self.assert_one_line_error(done, name, path)
                self.assertIn("does not exist", done.stderr.decode())
                self.assertEqual(names_in(folder), [])

    def test_a_read_only_folder_keeps_the_old_file(self):
        if os.geteuid() == 0:
            self.skipTest("root ignores folder permissions")
        for name, arguments in WRITERS.items():
            with self.subTest(option=name):
                folder = self.fresh(name)
                path = os.path.join(folder, "kept.out")
                write(path, b"old")
                os.chmod(folder, 0o555)
                try:
                    done = run_cli(arguments(path))
                finally:
                    os.chmod(folder, 0o755)
                self.assert_one_line_error(done, name, path)
                self.assertEqual(read(path), b"old")
                self.assertEqual(names_in(folder), ["kept.out"])


class CsvFolderCase(unittest.TestCase):
    def test_csv_dash_is_refused_with_one_line(self):
        done = run_cli(["export", "--builtin", "--csv", "-"])
        self.assertEqual(done.returncode, 2, done.stderr)
        lines = done.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("--csv", lines[0])
        self.assertIn("folder", lines[0])
        self.assertEqual(done.stdout, b"")

    def test_csv_into_a_linked_folder_writes_through_linked_files(self):
        with tempfile.TemporaryDirectory() as folder:
            os.mkdir(os.path.join(folder, "real"))
            os.symlink("real", os.path.join(folder, "linked"))
            write(os.path.join(folder, "elsewhere.csv"), b"old")
            os.symlink("../elsewhere.csv", os.path.join(folder, "real", "output.csv"))
            done = run_cli(["export", "--builtin", "--csv", os.path.join(folder, "linked")])
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertTrue(os.path.islink(os.path.join(folder, "linked")))
            self.assertTrue(os.path.islink(os.path.join(folder, "real", "output.csv")))
            self.assertNotEqual(read(os.path.join(folder, "elsewhere.csv")), b"old")
            names = names_in(os.path.join(folder, "real"))
            self.assertTrue(all(n.endswith(".csv") for n in names), names)  # no temporary file

    def test_json_and_heatmap_both_to_standard_output(self):
        done = run_cli(["svg", "--builtin", "--heatmap", "-", "--arrows", "-"])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.count(b"<svg"), 2)


class AppOutputCase(unittest.TestCase):
    """The app's own outputs: --screenshot (a PNG) and --layout-out, through a link and into a
    pipe, under Xvfb."""

    def setUp(self):
        if not APP:
            self.skipTest("no --app given")
        if not shutil.which("xvfb-run"):
            self.skipTest("xvfb-run is not installed")

    def run_app(self, *args, cwd=None):
        env = dict(os.environ)
        state = tempfile.mkdtemp(prefix="attnviz-state-")
        env["ATTNVIZ_STATE_DIR"] = state
        try:
            return subprocess.run(["xvfb-run", "-a", APP, "--size", "320x240", "--frames", "2"] +
                                  list(args), capture_output=True, timeout=120, env=env, cwd=cwd)
        finally:
            shutil.rmtree(state, ignore_errors=True)

    def test_screenshot_and_layout_through_links_and_into_a_pipe(self):
        with tempfile.TemporaryDirectory() as folder:
            write(os.path.join(folder, "real.png"), b"old")
            os.symlink("real.png", os.path.join(folder, "link.png"))
            layout_fifo = os.path.join(folder, "layout.json")
            os.mkfifo(layout_fifo)
            reader = FifoReader(layout_fifo)
            done = self.run_app("--screenshot", os.path.join(folder, "link.png"),
                                "--layout-out", layout_fifo)
            received = reader.finish()
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertTrue(os.path.islink(os.path.join(folder, "link.png")))
            self.assertEqual(read(os.path.join(folder, "real.png"))[:8], b"\x89PNG\r\n\x1a\n")
            self.assertTrue(stat.S_ISFIFO(os.lstat(layout_fifo).st_mode))
            self.assertTrue(received and received.startswith(b"{"), received)
            self.assertEqual(names_in(folder), ["layout.json", "link.png", "real.png"])

    def run_app_without_display(self, *args):
        """The app with no X display: what it refuses before opening a window."""
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        state = tempfile.mkdtemp(prefix="attnviz-state-")
        env["ATTNVIZ_STATE_DIR"] = state
        try:
            return subprocess.run([APP, "--size", "320x240", "--frames", "2"] + list(args),
                                  capture_output=True, timeout=60, env=env)
        finally:
            shutil.rmtree(state, ignore_errors=True)

    def test_screenshot_into_a_missing_folder_is_one_line_before_a_window_opens(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "missing", "shot.png")
            done = self.run_app_without_display("--screenshot", path)
            self.assertEqual(done.returncode, 1, done.stderr)
            lines = done.stderr.decode().strip().split("\n")
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(path, lines[0])
            self.assertIn("does not exist", lines[0])
            self.assertEqual(names_in(folder), [])

    def test_layout_into_a_folder_or_through_a_file_is_refused_before_a_window_opens(self):
        with tempfile.TemporaryDirectory() as folder:
            write(os.path.join(folder, "plain"), b"kept")
            for layout, reason in ((folder, "folder"),
                                   (os.path.join(folder, "plain", "layout.json"), "not a folder")):
                done = self.run_app_without_display("--screenshot",
                                                    os.path.join(folder, "shot.png"),
                                                    "--layout-out", layout)
                self.assertEqual(done.returncode, 1, done.stderr)
                self.assertIn(reason, done.stderr.decode())
            self.assertEqual(names_in(folder), ["plain"])
            self.assertEqual(read(os.path.join(folder, "plain")), b"kept")


def main():
    global CLI, APP
    argv = list(sys.argv)
    CLI = take_cli_path(argv, None)
    if "--app" in argv:
        at = argv.index("--app")
        APP = os.path.abspath(argv[at + 1])
        del argv[at:at + 2]
    if not usable(CLI, "test_outputs.py"):
        return 2
    return run_tests(argv)


if __name__ == "__main__":
    sys.exit(main())
