#!/usr/bin/env bash
# Runs the app headless under valgrind memcheck on the built-in scenario and every step of every
# built-in lesson; fails on any invalid read or write, use of uninitialised values, or definite
# leak not suppressed in tests/valgrind/gl-driver.supp (which explains each suppression).
# Usage: tests/valgrind/run.sh BUILD_DIR  (a build with -DATTNVIZ_NATIVE=OFF: valgrind does not
# know every instruction of -march=native, e.g. AVX-512).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
app="${1:?usage: run.sh BUILD_DIR}/attnviz"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
failures=0
run() {  # name, app arguments...
  local name="$1"; shift
  local log="$out/$name.log"
  xvfb-run -a -s "-screen 0 1920x1200x24" valgrind --tool=memcheck --error-exitcode=3 \
    --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --num-callers=40 --suppressions="$here/gl-driver.supp" --log-file="$log" \
    "$app" "$@" >/dev/null 2>&1
  local status=$?
  local summary
  summary=$(grep -h "ERROR SUMMARY" "$log" | head -n 1 | sed 's/^==[0-9]*== //')
  if [[ $status -eq 0 ]]; then
    echo "valgrind: $name: clean ($summary)"
  else
    echo "valgrind: $name: FAILED (exit $status; $summary); log follows" >&2
    cat "$log" >&2
    failures=$((failures + 1))
  fi
}
run builtin --screenshot "$out/builtin.png" --frames 2
for lesson in $(ls "$here/../../assets/lessons" | sed 's/\.json$//'); do
  mkdir -p "$out/$lesson"
  run "$lesson" --lesson "$lesson" --screenshot-steps "$out/$lesson" --frames 1
done
echo "$((11 - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
