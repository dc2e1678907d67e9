#!/usr/bin/env bash
# The sanitizer job: builds with AddressSanitizer and UndefinedBehaviorSanitizer
# (INFERSCOPE_SANITIZE, cmake/Sanitizers.cmake) into build-sanitize/ and runs the tests, halting
# on the first report (leaks included). There are no suppressions.
#
# By default (CI, after the main suite) it builds and runs what parses untrusted input or owns
# memory: the GGUF reader and writer, the tokenizers, the Jinja engine and chat prompts, the KV
# cache and its paging, the forward pass and the runtime, the kernels' CPU paths, the sampler,
# the store and the semantic cache, the reply pipeline, routing and the server. The desktop app,
# the CLI, the Vulkan backend, the comparisons, the weight lab and the benchmarks are left out.
#
#   bash tests/sanitize.sh            # configure, build (-j2), run those suites
#   bash tests/sanitize.sh -R Jinja   # extra arguments go to ctest
#   bash tests/sanitize.sh --all      # every suite, the UI's and Vulkan's too, in build-sanitize-all/
#
# --all preloads Mesa's lavapipe driver so that it stays loaded when the Vulkan loader lets go of
# it, and what it keeps for the life of the process stays reachable (unloaded, its allocations
# show as ~190 leaks that LeakSanitizer cannot even attribute to it). Needs what
# installer/bootstrap.sh installs (gcc's libasan and libubsan come with build-essential).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${INFERSCOPE_JOBS:-2}
suites="core;gguf;kernels;kv;tokenizer;chat;model;sampling;store;semantic;reply;serve;route"

everything=false
if [ "${1:-}" = "--all" ]; then
  shift
  everything=true
  build=${INFERSCOPE_SANITIZE_BUILD_DIR:-$root/build-sanitize-all}
  options=(-DINFERSCOPE_VULKAN=ON -DINFERSCOPE_TEST_SUITES=all -DINFERSCOPE_BUILD_CLI=ON)
else
  build=${INFERSCOPE_SANITIZE_BUILD_DIR:-$root/build-sanitize}
  options=(-DINFERSCOPE_GUI=OFF -DINFERSCOPE_VULKAN=OFF "-DINFERSCOPE_TEST_SUITES=$suites" -DINFERSCOPE_BUILD_CLI=OFF)
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERSCOPE_SANITIZE=ON "${options[@]}"
cmake --build "$build" -j "$jobs"

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# lavapipe stays loaded for the whole run (preloaded; ASan's runtime has to come first).
lvp=$(ls /usr/lib/*/libvulkan_lvp.so 2>/dev/null | head -n1 || true)
if [ -n "$lvp" ] && $everything; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$lvp"
fi
cd "$build"
exec ctest --output-on-failure -j "$jobs" --timeout 1800 "$@"
