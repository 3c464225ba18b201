#!/bin/sh
# Pictures and files to compare before and after a restructuring (docs/testing.md, "Checking a
# restructuring"): every view in both themes, in the one-layer scenario and with each shipped
# model, presenter mode, every step of every lesson, three window sizes, the layout JSON, and the
# files the CLI writes (scenarios written back, results, CSV, SVG, a model's attention).
#
#   tests/tools/screenshot_suite.sh BUILD_DIR OUT_DIR
#
# Run it on the build before the change and on the build after, into two folders, then
#   diff -r OLD NEW    (the PNG encoder is deterministic: identical bytes, identical pixels)
# Needs xvfb-run. Writes nothing outside OUT_DIR.
set -eu
build=$1
out=$2
app="$build/attnviz"
cli="$build/attnviz-cli"
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/shots" "$out/lessons" "$out/layout" "$out/files"

views="heatmaps pipeline neuron geometry compare model next layers cheaper arrows output"
shot() {  # NAME ARGS...
  name=$1
  shift
  xvfb-run -a -s '-screen 0 2000x1200x24' "$app" --screenshot "$out/shots/$name.png" "$@" \
    >"$out/shots/$name.log" 2>&1 || echo "failed: $name (status $?)" >>"$out/shots/$name.log"
}

for theme in light dark; do
  for v in $views; do
    shot "one-layer-$theme-$v" --theme "$theme" --view "$v"
    shot "kjv-$theme-$v" --theme "$theme" --view "$v" --model gpt2-kjv-tiny
  done
done
for v in $views; do
  shot "stories-light-$v" --view "$v" --model stories260K
  shot "kjv-selected-$v" --view "$v" --model gpt2-kjv-tiny --layer 1 --head 1 --query 2
  shot "one-layer-selected-$v" --view "$v" --head 1 --query 2 --colormap color-blind
done
for v in heatmaps pipeline arrows output next; do
  shot "presenter-$v" --presenter --view "$v"
  shot "presenter-kjv-$v" --presenter --view "$v" --model gpt2-kjv-tiny --theme dark
done
for size in 800x600 1600x900 1920x1080; do
  shot "size-$size" --size "$size"
  shot "size-kjv-$size" --size "$size" --model gpt2-kjv-tiny --view pipeline
done
shot scale-2 --scale 2 --view pipeline
shot panels-two --panels input,heatmaps --view geometry

for lesson in "$root"/assets/lessons/*.json; do
  name=$(basename "$lesson" .json)
  for theme in light dark; do
    xvfb-run -a -s '-screen 0 2000x1200x24' "$app" --lesson "$lesson" --theme "$theme" \
      --screenshot-steps "$out/lessons/$name-$theme" >"$out/lessons/$name-$theme.log" 2>&1 ||
      echo "failed (status $?)" >>"$out/lessons/$name-$theme.log"
  done
done
xvfb-run -a "$app" --presenter --lesson 12 --screenshot-steps "$out/lessons/presenter-12" \
  >"$out/lessons/presenter-12.log" 2>&1 || true

for v in $views; do
  xvfb-run -a "$app" --screenshot "$out/layout/$v.png" --layout-out "$out/layout/$v.json" \
    --view "$v" >/dev/null 2>&1 || true
  xvfb-run -a "$app" --screenshot "$out/layout/kjv-$v.png" --model gpt2-kjv-tiny \
    --layout-out "$out/layout/kjv-$v.json" --view "$v" >/dev/null 2>&1 || true
done

# The files: every scenario the repository holds, written back by the CLI (scenario_to_json),
# and what it computes from the built-in one and from the model scenarios.
n=0
for scenario in "$root"/tests/fuzz/corpus/fuzz_scenario/*.json "$root"/tests/bench/scenarios/*.json \
  "$root"/assets/scenarios/*.json; do
  n=$((n + 1))
  name="$n-$(basename "$scenario" .json)"
  "$cli" init "$scenario" -o "$out/files/init-$name.json" >"$out/files/init-$name.log" 2>&1 ||
    echo "failed (status $?)" >>"$out/files/init-$name.log"
done
"$cli" compute --builtin -o "$out/files/compute.json" >/dev/null 2>&1
"$cli" compute --builtin --mode cross --source "the cat sat" -o "$out/files/compute-cross.json" \
  >/dev/null 2>&1
"$cli" heatmap --builtin >"$out/files/heatmap.txt" 2>&1
mkdir -p "$out/files/csv"
"$cli" export --builtin --csv "$out/files/csv" >/dev/null 2>&1
"$cli" svg --builtin --heatmap "$out/files/heatmap.svg" --arrows "$out/files/arrows.svg" \
  --all-heads >/dev/null 2>&1
"$cli" model attention gpt2-kjv-tiny --text "In the beginning God created" \
  -o "$out/files/kjv-attention.json" >/dev/null 2>&1
"$cli" model heads stories260K --text "Once upon a time" >"$out/files/stories-heads.txt" 2>&1
echo "$(find "$out" -name '*.png' | wc -l) pictures, $(find "$out/files" -type f | wc -l) files in $out"
