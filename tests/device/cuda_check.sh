#!/usr/bin/env bash
# The CUDA device check (docs/CUDA.md), one script for the GPU machine the `device` tool lends
# (one NVIDIA H200, 16 cores): builds what it needs with CUDA in Release (-j16), runs the CUDA
# tests (the op tests of tests/cuda/ops over CUDA itself: every kernel against the CPU kernels,
# whole models against llama.cpp and the CPU backend), measures the memory bandwidth (the decode
# bound), then runs `bench --backend cuda` on TinyLlama-1.1B-shape models in F16, Q8_0, Q4_0 and
# Q4_K_M (with --vs-cpu) and a 7B-shape Q4_K_M (made here with make-model), at depth 0 and 3000. Every step's output goes to $OUT (or
# --out DIR); a failing step is recorded and the next one runs; each step has a time limit, and
# once 7 minutes have gone the steps left are skipped, so the whole stays inside 8 minutes.
#   bash tests/device/cuda_check.sh [--out DIR] [--build DIR] [--jobs N] [--dry-run]
#   bash tests/device/cuda_check.sh --help
set -uo pipefail

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-$root/cuda-check-out}
build=$root/build-cuda
jobs=16
dry_run=0
budget_s=420  # steps starting later are skipped
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"

# step NAME SECONDS COMMAND...: runs the command with a time limit, its output in $out/NAME.txt,
# and one line in the summary (ok, failed with the exit code, timed out, or skipped when the
# budget is spent).
step() {
  local name=$1 limit=$2
  shift 2
  if [ $SECONDS -ge $budget_s ]; then
    echo "$name: skipped (the ${budget_s} s budget is spent)" | tee -a "$summary"
    return 1
  fi
  if [ $dry_run = 1 ]; then
    echo "[$name, at most ${limit}s] $*" | tee -a "$summary"
    return 0
  fi
  local start=$SECONDS
  timeout "$limit" "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  local verdict="ok"
  [ $rc = 124 ] && verdict="timed out after ${limit}s"
  [ $rc != 0 ] && [ $rc != 124 ] && verdict="failed ($rc)"
  echo "$name: $verdict in $((SECONDS - start)) s" | tee -a "$summary"
  return $rc
}

cli=$build/app/inferscope-cli
vocab=$root/../shared/testdata/llama.cpp-vocab/ggml-vocab-llama-spm.gguf
[ -f "$vocab" ] || vocab=$root/models/stories260K.gguf  # the bundled model's vocabulary
models=$build/cuda-check-models

step machine 30 bash -c "nvidia-smi; lscpu | grep -E 'Model name|^CPU\(s\)|Flags'"
step configure 120 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERSCOPE_CUDA=ON \
  -DINFERSCOPE_GUI=OFF -DINFERSCOPE_VULKAN=OFF || exit 1
step build 300 cmake --build "$build" -j "$jobs" --target inferscope-cli inferscope_cuda test_cuda bench_cuda_bandwidth \
  test_cuda_kernels_gpu test_cuda_backend_gpu || exit 1
step test_cuda 60 "$build/tests/cuda/test_cuda"
step test_cuda_kernels_gpu 60 "$build/tests/cuda/test_cuda_kernels_gpu"
step test_cuda_backend_gpu 120 "$build/tests/cuda/test_cuda_backend_gpu"
step bandwidth 60 "$build/tests/cuda/bench_cuda_bandwidth"
mkdir -p "$models"
for type in f16 q8_0 q4_0 q4_k_m; do
  step "make-tinyllama-$type" 60 "$cli" make-model --preset tinyllama-1.1b --type "$type" --vocab "$vocab" \
    --output "$models/tinyllama-$type.gguf"
done
step make-llama7b-q4_k_m 150 "$cli" make-model --preset llama-7b --type q4_k_m --vocab "$vocab" \
  --output "$models/llama7b-q4_k_m.gguf"
for model in tinyllama-f16 tinyllama-q8_0 tinyllama-q4_0 tinyllama-q4_k_m llama7b-q4_k_m; do
  for depth in 0 3000; do
    vs_cpu=--vs-cpu
    [ "$model" = llama7b-q4_k_m ] && vs_cpu=  # the CPU would take minutes on the 7B shape
    step "bench-$model-d$depth" 60 "$cli" bench --model "$models/$model.gguf" --backend cuda $vs_cpu \
      --depth "$depth" --prompt-tokens 512 --gen-tokens 64 --reps 3 --threads 16 --json
  done
done
echo "figures in $out" | tee -a "$summary"
