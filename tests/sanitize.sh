#!/usr/bin/env bash
# The sanitizer job: builds the engine, kernel, CLI, Vulkan and UI tests with AddressSanitizer
# and UndefinedBehaviorSanitizer (INFERSCOPE_SANITIZE, cmake/Sanitizers.cmake) into
# build-sanitize/ and runs them all, halting on the first report (leaks included). There are no
# suppressions: Mesa's lavapipe driver is preloaded so that it stays loaded when the Vulkan loader
# lets go of it, and what it keeps for the life of the process stays reachable (unloaded, its
# allocations show as ~190 leaks that LeakSanitizer cannot even attribute to it).
#   bash tests/sanitize.sh            # configure, build (-j2), run every test
#   bash tests/sanitize.sh -R Jinja   # extra arguments go to ctest
# .ci/run calls it after the main suite. Needs what installer/bootstrap.sh installs (gcc's
# libasan and libubsan come with build-essential).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${INFERSCOPE_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${INFERSCOPE_JOBS:-2}

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERSCOPE_VULKAN=ON -DINFERSCOPE_SANITIZE=ON
cmake --build "$build" -j "$jobs"

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# lavapipe stays loaded for the whole run (preloaded; ASan's runtime has to come first).
lvp=$(ls /usr/lib/*/libvulkan_lvp.so 2>/dev/null | head -n1 || true)
if [ -n "$lvp" ]; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$lvp"
fi
cd "$build"
exec ctest --output-on-failure -j "$jobs" --timeout 1800 "$@"
