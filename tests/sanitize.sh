#!/usr/bin/env bash
# The sanitizer job: builds the engine, kernel, CLI, Vulkan and UI tests with AddressSanitizer
# and UndefinedBehaviorSanitizer into build-sanitize/ and runs them all, halting on the first
# report. The only suppression is Mesa's lavapipe driver (tests/sanitize.supp), which stays
# loaded for the whole run so that what it keeps is still reachable and its frames symbolized.
#   bash tests/sanitize.sh            # configure, build (-j2), run every test
#   bash tests/sanitize.sh -R Jinja   # extra arguments go to ctest
# .ci/run calls it after the main suite. Needs what installer/bootstrap.sh installs (gcc's
# libasan and libubsan come with build-essential).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${INFERSCOPE_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${INFERSCOPE_JOBS:-2}

flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERSCOPE_VULKAN=ON \
      -DCMAKE_CXX_FLAGS_RELEASE="$flags" -DCMAKE_C_FLAGS_RELEASE="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
      -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build "$build" -j "$jobs"

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$root/tests/sanitize.supp:print_suppressions=0"
# lavapipe stays loaded after the Vulkan loader lets go of it (ASan's runtime has to come first).
lvp=$(ls /usr/lib/*/libvulkan_lvp.so 2>/dev/null | head -n1 || true)
if [ -n "$lvp" ]; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$lvp"
fi
cd "$build"
exec ctest --output-on-failure -j "$jobs" --timeout 1800 "$@"
