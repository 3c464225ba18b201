#!/bin/sh
# What the random-action test (run_monkey.sh) found, each replayed directly
# (docs/testing.md#the-random-action-test): a headless screenshot of the state it crashed in, or
# the clicks that led there (xdotool, in a window under Xvfb). Each must end with status 0 and
# what it checks; with an app built with the sanitizers (the sanitizer build runs this too), with
# no report.
#
#   tests/monkey/findings.sh APP        (KEEP_WORK=1: its temporary folder is kept, to look into)
set -u
app=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-findings.XXXXXX")
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
export ATTNVIZ_STATE_DIR="$work/state"
export LIBGL_ALWAYS_SOFTWARE=1
preload=
# A sanitizer build: GCC's links libasan.so, clang's has the runtime inside the binary; both name
# __asan_init.
if grep -q -a __asan_init "$app"; then  # as run_monkey.sh explains
  for driver in /usr/lib/*/dri/swrast_dri.so /usr/lib/dri/swrast_dri.so; do
    if [ -f "$driver" ]; then
      preload=$driver
      break
    fi
  done
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:verify_asan_link_order=0"
  export LSAN_OPTIONS="suppressions=$here/lsan.supp"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi
failed=0
reported() {
  grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"
}

# shot NAME ARGS...: a screenshot with ARGS, which must succeed.
shot() {
  name=$1
  shift
  if xvfb-run -a -s '-screen 0 1600x1000x24' env LD_PRELOAD="$preload" "$app" "$@" \
    --screenshot "$work/$name.png" \
    >"$work/$name.log" 2>&1 && [ -s "$work/$name.png" ] && ! reported "$work/$name.log"; then
    echo "ok: $name"
  else
    echo "FAILED: $name ($*):"
    cat "$work/$name.log"
    failed=1
  fi
}

# The Across layers view's logit lens, a table of a column per position, on a text of more than
# 63 tokens: ImGui's tables hold at most 64 columns, and the app aborted (seed 5).
long_text=$(printf 'and it came to pass %.0s' $(seq 25))
printf '{"format": "attnviz-scenario", "version": 1, "mode": "self", "target": "%s",
 "d_model": 8, "heads": 2, "d_k": 4, "d_v": 4, "compatibility": "scaled_dot", "seed": 3}\n' \
  "$long_text" >"$work/long.json"
shot lens-past-64-columns "$work/long.json" --model gpt2-kjv-tiny --view layers

# The Models menu read the model open before its items, and after a click on the first item
# (which replaced that model, and freed it) read it again for the second item's check mark: a
# use after free (seeds 31 and 32). Here: stories260K open, the Models menu's first item clicked
# (gpt2-web: the models that read words come first; the menu's place at 1280x720 and the default
# text size); the app closes itself 6 s after it opened (ATTNVIZ_EXIT_AFTER), and the layout it
# writes then must name gpt2-web (the click was made).
{
  echo "ATTNVIZ_EXIT_AFTER=6 LD_PRELOAD='$preload' '$app' --model stories260K --size 1280x720 --layout-out '$work/menu.json' 2>'$work/menu.log' & pid=\$!"
  echo "xdotool search --sync --onlyvisible --name AttnViz >/dev/null"
  echo "sleep 2; xdotool mousemove 120 11 click 1"
  echo "sleep 1; xdotool mousemove 130 36 click 1"
  echo "for i in \$(seq 100); do kill -0 \$pid 2>/dev/null || break; sleep 0.2; done"
  echo "kill -9 \$pid 2>/dev/null; wait \$pid"
} >"$work/menu.sh"
if xvfb-run -a -s '-screen 0 1600x1000x24' sh "$work/menu.sh" >/dev/null 2>&1 &&
  ! reported "$work/menu.log" && grep -q '"model":"gpt2-web"' "$work/menu.json"; then
  echo "ok: models-menu-after-a-switch"
else
  echo "FAILED: models-menu-after-a-switch:"
  cat "$work/menu.log"
  [ -f "$work/menu.json" ] && head -c 400 "$work/menu.json" && echo
  failed=1
fi

exit $failed
