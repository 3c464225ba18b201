#!/usr/bin/env python3
"""Every doctest case runs under CTest: a test case's name may not hold a semicolon.

doctest_discover_tests hands CTest each case's name as a CMake list item, so a name with ';' is
cut there and CTest runs `--test-case=<the first part>`, which matches no case: the test passes
with nothing run. This script lists every TEST_CASE name (its string pieces joined) that holds
one, and fails if there is any.

Run: /usr/bin/python3 tests/tools/check_test_names.py [ROOT]   (standard library only)
"""

import pathlib
import re
import sys

NAME = re.compile(r'TEST_CASE\(((?:\s*"(?:[^"\\]|\\.)*")+)\s*\)')
PIECE = re.compile(r'"((?:[^"\\]|\\.)*)"')


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2])
    bad = []
    for path in sorted((root / "tests").rglob("*.cpp")):
        text = path.read_text(encoding="utf-8")
        for match in NAME.finditer(text):
            name = "".join(PIECE.findall(match.group(1)))
            if ";" in name:
                line = text.count("\n", 0, match.start()) + 1
                bad.append(f"{path.relative_to(root)}:{line}: {name}")
    if bad:
        print("check_test_names: these test names hold ';', which CTest cuts (the case then never "
              "runs); use ',' or ':' instead:", file=sys.stderr)
        for entry in bad:
            print("  " + entry, file=sys.stderr)
        return 1
    print("check_test_names: no test name holds ';'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
