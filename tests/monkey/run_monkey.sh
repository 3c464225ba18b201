#!/bin/sh
# The random-action test (docs/testing.md#the-random-action-test): the app, built with ASan and
# UBSan, drives itself with `--monkey SEED` under Xvfb and Mesa's software GL, for each seed given;
# it must exit with status 0, print its summary line, and leave no sanitizer report. The app works
# in a temporary folder of its own (its state folder inside it) and writes nothing elsewhere.
#
#   tests/monkey/run_monkey.sh APP ACTIONS SEED...
#
# On a failure it prints the sanitizer's report and the last actions before it (every action is
# traced); `ATTNVIZ_MONKEY_TRACE=1 APP --monkey SEED --monkey-actions ACTIONS` under xvfb-run
# replays the run (the same seed makes the same actions).
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 APP ACTIONS SEED..." >&2
  exit 2
fi
app=$1
actions=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp "${TMPDIR:-/tmp}/attnviz-monkey-log.XXXXXX")
trap 'rm -f "$log"' EXIT

# Mesa's software driver unloads itself as the window closes, and LeakSanitizer, which looks for
# leaks after that, then finds memory the driver kept (in its own globals) unreachable, with a
# stack it cannot name. Loaded first, it stays loaded to the end: nothing of Mesa's is reported,
# and the suppressions below are left for what is reported by name. (ASan then does not come
# first among the libraries, which it otherwise insists on.)
preload=
for driver in /usr/lib/*/dri/swrast_dri.so /usr/lib/dri/swrast_dri.so; do
  if [ -f "$driver" ]; then
    preload=$driver
    break
  fi
done

export LIBGL_ALWAYS_SOFTWARE=1
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:verify_asan_link_order=0"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ATTNVIZ_MONKEY_TRACE=1

failed=0
for seed in "$@"; do
  start=$(date +%s)
  xvfb-run -a -s '-screen 0 1600x1000x24' env LD_PRELOAD="$preload" \
    "$app" --monkey "$seed" --monkey-actions "$actions" --size 1280x720 >/dev/null 2>"$log"
  status=$?
  seconds=$(($(date +%s) - start))
  summary=$(grep '^attnviz: monkey: seed .* frames' "$log")
  # The app removes its folder as it exits; after a crash, this does.
  folder=$(sed -n 's/^attnviz: monkey: seed [0-9]*, [0-9]* actions, in \(.*attnviz-monkey-.*\)$/\1/p' "$log")
  [ -n "$folder" ] && [ -d "$folder" ] && rm -rf "$folder"
  if [ $status -eq 0 ] && [ -n "$summary" ] &&
    ! grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|WARNING: .*Sanitizer' "$log"; then
    echo "$summary ($seconds s)"
    continue
  fi
  failed=1
  echo "FAILED: seed $seed, $actions actions: status $status after $seconds s"
  echo "--- the last actions:"
  grep '^monkey ' "$log" | tail -n 15
  echo "--- everything else the app wrote:"
  grep -v '^monkey ' "$log" | head -n 200
done
exit $failed
