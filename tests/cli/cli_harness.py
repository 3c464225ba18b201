"""What the CLI test scripts share: the --cli argument and the run of their unittest cases."""
import os
import sys
import unittest


def take_cli_path(argv, default):
    """The path given by `--cli PATH` or `--cli=PATH` (taken out of argv), else `default`.
    None when --cli has no path."""
    if "--cli" in argv:
        at = argv.index("--cli")
        if at + 1 >= len(argv):
            print("--cli needs the path of attnviz-cli", file=sys.stderr)
            return None
        path = os.path.abspath(argv[at + 1])
        del argv[at:at + 2]
        return path
    for arg in argv:
        if arg.startswith("--cli="):
            argv.remove(arg)
            return os.path.abspath(arg[len("--cli="):])
    return default


def usable(cli, script):
    """Whether `cli` is an executable; says how to call `script` when not."""
    if cli and os.access(cli, os.X_OK):
        return True
    print("usage: %s --cli PATH/TO/attnviz-cli (got %r)" % (script, cli), file=sys.stderr)
    return False


def run_tests(argv):
    """Runs the calling script's test cases; prints "N passed, M failed"; the exit status."""
    program = unittest.main(module="__main__", argv=argv, exit=False, verbosity=2)
    result = program.result
    # A test with failing subtests appears once per failing subtest: count tests, not entries.
    failed_ids = set()
    for test, _ in result.failures + result.errors:
        failed_ids.add(getattr(test, "test_case", test).id())
    for test in result.unexpectedSuccesses:
        failed_ids.add(test.id())
    failed = len(failed_ids)
    passed = max(result.testsRun - failed - len(result.skipped), 0)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or result.testsRun == 0 else 0
