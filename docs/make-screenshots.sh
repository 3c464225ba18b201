#!/usr/bin/env bash
# Regenerates the screenshots of the README and docs/user-guide.md with the app's own screenshot
# mode (under Xvfb when there is no display). Usage: docs/make-screenshots.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
app="${1:-build}/attnviz"
out=docs/screenshots
mkdir -p "$out"
run() {
  if [[ -n "${DISPLAY:-}" ]]; then "$app" "$@"; else xvfb-run -a -s "-screen 0 3900x2300x24" "$app" "$@"; fi
}
run --screenshot "$out/light-1280x720.png"
run --screenshot "$out/dark-1280x720.png" --theme dark
run --screenshot "$out/light-1920x1080.png" --size 1920x1080 --query 4
run --screenshot "$out/dark-3840x2160.png" --size 3840x2160 --theme dark --query 4
run --screenshot "$out/cross-1280x720.png" --scenario docs/scenarios/translation.json --query 3
run --screenshot "$out/arabic-1280x720.png" --scenario docs/scenarios/arabic.json --query 3
run --screenshot "$out/pipeline-1920x1080.png" --size 1920x1080 --view pipeline --query 4
run --screenshot "$out/neuron-1280x720.png" --view neuron --query 4
run --screenshot "$out/geometry-1280x720.png" --lesson why-project --step 4
run --screenshot "$out/compare-1280x720.png" --view compare
run --screenshot "$out/lesson-1280x720.png" --lesson self-attention --step 2
run --screenshot "$out/presenter-1280x720.png" --presenter --lesson cross-attention --step 2
run --screenshot "$out/model-1280x720.png" --lesson trained-heads --step 0
run --screenshot "$out/next-token-1280x720.png" --lesson induction-heads --step 0
run --screenshot "$out/layers-1280x720.png" --lesson depth --step 0
run --screenshot "$out/model-pipeline-1920x1080.png" --size 1920x1080 --model stories260K \
  --view pipeline --layer 2 --head 3
run --screenshot "$out/flash-1920x1080.png" --size 1920x1080 --scenario docs/scenarios/flash.json \
  --view cheaper
run --screenshot "$out/linformer-1920x1080.png" --size 1920x1080 --lesson linformer --step 2
run --screenshot "$out/sparse-1920x1080.png" --size 1920x1080 --lesson sparse-and-shared-keys \
  --step 1
run --screenshot "$out/reformer-1920x1080.png" --size 1920x1080 --lesson reformer --step 2
run --screenshot "$out/shared-keys-1920x1080.png" --size 1920x1080 --lesson sparse-and-shared-keys \
  --step 2
run --screenshot "$out/decoding-1920x1080.png" --size 1920x1080 --lesson kv-cache --step 2
# The browser build (make web), in headless Chromium, when it is built.
site="${WEB_SITE:-build-web/site}"
if [[ -f "$site/index.html" ]]; then
  /usr/bin/python3 tests/web/page_screenshot.py --site "$site" --out "$out/browser-1280x720.png" \
    --options "lesson=trained-heads"
fi
echo "screenshots written to $out/"
