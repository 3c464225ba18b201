#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages AttnViz needs, and only those that are missing.
#   third_party/install-deps.sh build   what `make` needs to build the engine, CLI and app
#   third_party/install-deps.sh test    build + what `make test` needs (PyTorch oracle, Xvfb)
#   third_party/install-deps.sh fuzz    build + what `make fuzz` needs (clang 14 with libFuzzer)
#   third_party/install-deps.sh bench   build + what `make bench` needs (Google Benchmark, PyTorch)
#   third_party/install-deps.sh lint    build + what `make lint` needs (clang-tidy 14)
#   third_party/install-deps.sh train   only what models/train/train_gpt2.py needs (run by hand)
#   third_party/install-deps.sh web     build + what `make web` needs (the browser build)
# `test` includes `web`: make test builds the browser build and tests it in headless Chromium.
# Runs apt-get as root, or through sudo otherwise; does nothing when everything is present.
set -euo pipefail

profile="${1:-build}"
build_packages=(
  cmake make g++ pkg-config
  libeigen3-dev nlohmann-json3-dev doctest-dev
  libimgui-dev libglfw3-dev libgl-dev libstb-dev fonts-dejavu-core fonts-droid-fallback fonts-symbola
  libsentencepiece-dev
)
# clang-format 14: the format check (tests/tools/check_format.sh) uses that version.
# nodejs and npm: GPT-2's reference tokenizer (tests/reference/gpt2-tokenizer/), fetched by npm.
# libpcre2-dev: the reference the Unicode classes and GPT-2's pre-tokenizer are tested against.
# glslang-tools: the shaders compiled as GLSL 3.30 and GLSL ES 3.00 (tests/tools/check_shaders.py).
# python3-sentencepiece: the reference the Marian tokenizer's ids are checked against.
# python3-numpy: the shuffled control model made again and compared (tests/models/).
# clang-14 and its sanitizers' runtime: the sanitizer build (make test-asan) compiles with clang,
# two to three times as fast as GCC with the sanitizers at -O0.
test_packages=(python3 python3-torch python3-numpy python3-sentencepiece xvfb xauth libgl1-mesa-dri xdotool valgrind
               clang-format-14 nodejs npm glslang-tools libpcre2-dev clang-14 libclang-rt-14-dev)
fuzz_packages=(clang-14 libclang-rt-14-dev)
# OpenBLAS: without it Debian's torch multiplies through the reference BLAS (libblas3), which
# would make the comparison of make bench meaningless.
bench_packages=(libbenchmark-dev python3 python3-torch python3-sentencepiece libopenblas0-pthread)
lint_packages=(clang-tidy-14)
# The browser build (make web, issue 27): Emscripten (with Debian's clang, binaryen and
# node-acorn), xz-utils to unpack Dear ImGui's and SentencePiece's source packages (downloaded
# from Debian's archive by third_party/web/web.cmake), patch to apply Debian's patches to
# SentencePiece, and Chromium to test the page headless.
web_packages=(emscripten xz-utils chromium patch)
# models/train/train_gpt2.py: PyTorch on OpenBLAS, the regex module (GPT-2's pre-tokenizer needs
# \p{L} and \p{N}) and its corpus, the King James Bible (the `bible` program reads bible-kjv-text);
# models/train/train_gpt2.py --corpus web and train_bert.py read the World English Bible with
# diatheke; train_marian.py reads it beside the Reina-Valera 1909 (sword-text-sparv) and learns
# its vocabularies with SentencePiece's trainer.
train_packages=(python3 python3-torch python3-numpy python3-regex libopenblas0-pthread bible-kjv bible-kjv-text
                diatheke sword-text-web sword-text-sparv python3-sentencepiece)

case "$profile" in
  build) wanted=("${build_packages[@]}") ;;
  test)  wanted=("${build_packages[@]}" "${test_packages[@]}" "${web_packages[@]}") ;;
  fuzz)  wanted=("${build_packages[@]}" "${fuzz_packages[@]}") ;;
  bench) wanted=("${build_packages[@]}" "${bench_packages[@]}") ;;
  lint)  wanted=("${build_packages[@]}" "${lint_packages[@]}") ;;
  train) wanted=("${train_packages[@]}") ;;
  web)   wanted=("${build_packages[@]}" "${web_packages[@]}") ;;
  *) echo "install-deps: unknown profile '$profile' (use: build | test | fuzz | bench | lint | train | web)" >&2; exit 2 ;;
esac

missing=()
for package in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] && continue
  # A Node.js installed otherwise (another archive's nodejs package bundles npm and conflicts
  # with Debian's) does as well as Debian's.
  [[ "$package" == nodejs ]] && command -v node >/dev/null 2>&1 && continue
  [[ "$package" == npm ]] && command -v npm >/dev/null 2>&1 && continue
  missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing missing packages: ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; install these packages by hand: ${missing[*]}" >&2
  exit 1
fi
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps: not root and no sudo; install these packages by hand: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
