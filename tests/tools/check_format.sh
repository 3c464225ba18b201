#!/usr/bin/env bash
# The tree's C++ as .clang-format says. clang-format 14 is the one used (Debian 12's; other
# versions format some lines differently). Usage:
#   tests/tools/check_format.sh          list every file that is not formatted; fail if any
#   tests/tools/check_format.sh --fix    format them in place (make format)
set -euo pipefail
cd "$(dirname "$0")/../.."
tool=$(command -v clang-format-14 || true)
if [[ -z "$tool" ]]; then
  echo "check_format: clang-format-14 not found (third_party/install-deps.sh test installs it)" >&2
  exit 1
fi
# Every C++ source of the project: git's list in a checkout, else the folders' files.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- 'core/*.cpp' 'core/*.hpp' 'app/*.cpp' 'app/*.hpp' \
                                       'cli/*.cpp' 'cli/*.hpp' 'tests/*.cpp' 'tests/*.hpp')
else
  mapfile -t files < <(find core app cli tests -name '*.cpp' -o -name '*.hpp' | sort)
fi
if [[ "${1:-}" == "--fix" ]]; then
  "$tool" -i --style=file "${files[@]}"
  echo "check_format: formatted ${#files[@]} files"
  exit 0
fi
# One run over every file; each difference is reported as "FILE:LINE:COL: error: ...".
mapfile -t unformatted < <("$tool" --style=file --dry-run --Werror "${files[@]}" 2>&1 |
                             sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
if [[ ${#unformatted[@]} -gt 0 ]]; then
  echo "check_format: ${#unformatted[@]} of ${#files[@]} files are not formatted as .clang-format says:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "check_format: run 'make format' (clang-format 14) and look at the diff" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted as .clang-format says"
