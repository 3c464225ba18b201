#!/usr/bin/env bash
# Builds the libFuzzer targets in build-fuzz/ and runs each for FUZZ_SECONDS (default 60).
#   tests/fuzz/run.sh                 every target
#   tests/fuzz/run.sh fuzz_scenario   only the named targets
# Environment: FUZZ_SECONDS, FUZZ_BUILD_DIR (default build-fuzz), FUZZ_CXX (default
# clang++-14, else clang++), FUZZ_JOBS (build jobs). The repository's seed corpus
# (tests/fuzz/corpus/<target>/) is only read; new inputs go to <build>/corpus/<target>/ and
# findings to <build>/findings/<target>/. Exits non-zero when any target finds something
# (crash, sanitizer report, invariant violation, leak, timeout, out of memory).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fuzz_dir="$root/tests/fuzz"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
jobs="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}"
all_targets=(fuzz_tokenizer fuzz_scenario fuzz_compute fuzz_lesson fuzz_safetensors fuzz_gpt2_tokenizer
             fuzz_llama2c_tokenizer fuzz_llama2c fuzz_bert_tokenizer)
targets=("${@:-${all_targets[@]}}")

if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [[ "$seconds" -lt 1 ]]; then
  echo "fuzz: FUZZ_SECONDS must be a whole number of seconds >= 1, got '$seconds'" >&2
  exit 2
fi
cxx="${FUZZ_CXX:-}"
if [[ -z "$cxx" ]]; then
  if command -v clang++-14 >/dev/null 2>&1; then cxx=clang++-14; else cxx=clang++; fi
fi
command -v "$cxx" >/dev/null 2>&1 || { echo "fuzz: $cxx not found (make fuzz installs it)" >&2; exit 2; }

echo "fuzz: configuring $build with $cxx"
cmake -S "$root" -B "$build" -C "$fuzz_dir/cache.cmake" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# Each target: its seed corpus, and a dictionary of the format's words when there is one.
dictionary_of() {
  case "$1" in
    fuzz_scenario|fuzz_compute) echo "$fuzz_dir/scenario.dict" ;;
    fuzz_lesson) echo "$fuzz_dir/lesson.dict" ;;
    fuzz_safetensors) echo "$fuzz_dir/safetensors.dict" ;;
    *) echo "" ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  findings="$build/findings/$target"
  log="$build/logs/$target.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$findings/")
  dictionary=$(dictionary_of "$target")
  [[ -n "$dictionary" && -f "$dictionary" ]] && options+=(-dict="$dictionary")
  echo "fuzz: $target for ${seconds}s (log: $log)"
  status=0
  # The first corpus directory receives new inputs; the repository's seeds are only read.
  "$build/$target" "${options[@]}" "$corpus" "$fuzz_dir/corpus/$target" >"$log" 2>&1 || status=$?
  stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" |
          sed 's/^stat:://' | tr -s ' \n' ' ' || true)
  if [[ $status -ne 0 ]]; then
    failed+=("$target")
    echo "fuzz: $target FAILED (exit $status). The report:" >&2
    grep -E 'ERROR: |runtime error|invariant violated|SUMMARY|terminate called|what\(\):' "$log" | head -6 >&2 || true
    artifact=$(grep -oE 'Test unit written to [^ ]+' "$log" | tail -1 | sed 's/Test unit written to //' || true)
    if [[ -n "$artifact" ]]; then
      echo "fuzz: crash file: $artifact" >&2
      echo "fuzz: reproduce:  $build/$target $artifact" >&2
    fi
    echo "fuzz: full log:   $log" >&2
  else
    echo "fuzz: $target ok: $stats"
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: findings in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no findings (${#targets[@]} targets, ${seconds}s each)"
