#!/usr/bin/env bash
# Builds the fuzz targets (clang, build-fuzz/) and runs each for SECONDS (default 600), two at
# a time, on a corpus kept in build-fuzz/corpus/<target> (seeded on the first run). Prints, per
# target, the inputs run, the corpus size and the crashes written to build-fuzz/artifacts/<target>/.
#   bash tests/fuzz/run_all.sh [SECONDS] [TARGET...]
# Exit status 1 when any target found a crash, a leak or a timeout. See tests/fuzz/README.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${INFERSCOPE_FUZZ_BUILD_DIR:-$root/build-fuzz}
testdata=${INFERSCOPE_TESTDATA_DIR:-$root/../shared/testdata}
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_gguf fuzz_tokenizer fuzz_jinja fuzz_chat_prompt)
parallel=${INFERSCOPE_FUZZ_PARALLEL:-2}

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_C_COMPILER=clang -DINFERSCOPE_BUILD_FUZZERS=ON -DINFERSCOPE_GUI=OFF -DINFERSCOPE_VULKAN=OFF \
        -DINFERSCOPE_TESTDATA_DIR="$testdata"
fi
ninja -C "$build" -j 2 fuzz_gguf fuzz_gguf_seeds fuzz_tokenizer fuzz_jinja fuzz_chat_prompt

# The tokenizer seeds are llama.cpp's tokenizer test inputs, each behind the two bytes that pick
# the vocabulary and the flags (fuzz_tokenizer.cpp).
seed_tokenizer() {
  local out=$1
  for f in "$testdata"/llama.cpp-vocab/*.inp; do
    awk -v out="$out" -v base="$(basename "$f")" 'BEGIN { RS = "\n__ggml_vocab_test__\n" }
      { n++; file = out "/" base "-" n; printf "%c%c%s", n % 12, 0, $0 > file; close(file) }' "$f"
  done
}

seed() {
  local target=$1 corpus=$build/corpus/$1
  [ -n "$(ls -A "$corpus" 2>/dev/null)" ] && return 0
  mkdir -p "$corpus"
  case $target in
    fuzz_gguf) "$build/tests/fuzz/fuzz_gguf_seeds" "$corpus" "$testdata/stories260K.gguf" "$testdata/quant/q4_k_m.gguf" ;;
    fuzz_tokenizer) seed_tokenizer "$corpus" ;;
    fuzz_jinja | fuzz_chat_prompt) cp "$root"/tests/chat/templates/*.jinja "$corpus"/ ;;
  esac
}

options() {
  case $1 in
    fuzz_gguf) echo "-dict=$root/tests/fuzz/gguf.dict -max_len=16384 -timeout=10" ;;
    fuzz_tokenizer) echo "-max_len=4096 -timeout=10" ;;
    fuzz_jinja | fuzz_chat_prompt) echo "-dict=$root/tests/fuzz/jinja.dict -max_len=8192 -timeout=5" ;;
  esac
}

run() {
  local target=$1 artifacts=$build/artifacts/$1
  mkdir -p "$artifacts"
  # shellcheck disable=SC2046
  "$build/tests/fuzz/$target" "$build/corpus/$target" $(options "$target") -max_total_time="$seconds" \
      -rss_limit_mb=4096 -artifact_prefix="$artifacts/" -print_final_stats=1 > "$build/$target.log" 2>&1 || true
}

for t in "${targets[@]}"; do seed "$t"; done
running=0
for t in "${targets[@]}"; do
  run "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then wait -n; running=$((running - 1)); fi
done
wait

found=0
printf '%-18s %12s %10s %8s %s\n' target inputs 'inputs/s' corpus findings
for t in "${targets[@]}"; do
  log=$build/$t.log
  runs=$(awk '/number_of_executed_units:/ { n = $2 } END { print n }' "$log")
  rate=$(awk '/average_exec_per_sec:/ { n = $2 } END { print n }' "$log")
  corpus=$(ls "$build/corpus/$t" | wc -l)
  findings=$(ls "$build/artifacts/$t" | wc -l)
  [ "$findings" -gt 0 ] && found=1
  printf '%-18s %12s %10s %8s %s\n' "$t" "${runs:-?}" "${rate:-?}" "$corpus" "$findings"
done
[ "$found" -eq 0 ] || { echo "findings are in $build/artifacts/<target>/ (logs: $build/<target>.log)"; exit 1; }
