#!/usr/bin/env bash
# One-step set-up on a fresh Debian 12 machine: installs the Debian packages Inferscope needs,
# configures and builds it (Release, Ninja, -j2), then either runs the main job or the tests.
#   bash installer/bootstrap.sh run   # build, then start the desktop app with the bundled model
#   bash installer/bootstrap.sh cli   # build, then generate from the bundled model in the terminal
#   bash installer/bootstrap.sh test  # build, then run the whole test suite (ctest)
set -euo pipefail

mode=${1:-run}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${INFERSCOPE_BUILD_DIR:-$root/build}
jobs=${INFERSCOPE_JOBS:-2}

packages=(build-essential cmake ninja-build pkg-config git
          libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libsqlite3-dev libhnswlib-dev libcpp-httplib-dev libyaml-cpp-dev libcli11-dev
          qt6-base-dev libqcustomplot-dev libqcustomplot2.1-qt6 fonts-dejavu-core
          libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers vulkan-tools)

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "Installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERSCOPE_VULKAN=ON
  cmake --build "$build" -j "$jobs"
}

install_packages
configure_and_build

# The desktop app needs a display; Qt would abort without one.
require_display() {
  [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}${QT_QPA_PLATFORM:-}" ] && return 0
  echo "No display: DISPLAY and WAYLAND_DISPLAY are unset, so the desktop app cannot open its window." >&2
  echo "Run 'bash $0 cli' for the command-line demo, or set QT_QPA_PLATFORM=offscreen to start" >&2
  echo "the app without a window." >&2
  exit 1
}

case "$mode" in
  run)
    shift || true
    if [ ! -x "$build/app/desktop/inferscope" ]; then
      echo "The desktop app was not built (Qt 6 or QCustomPlot missing?); see the cmake output above." >&2
      exit 1
    fi
    require_display
    exec "$build/app/desktop/inferscope" "$@"
    ;;
  cli)
    shift || true
    exec "$build/app/inferscope-cli" generate --prompt "Once upon a time" --max-tokens 128 "$@"
    ;;
  test)
    cd "$build"
    exec ctest --output-on-failure -j "$jobs" --timeout 900
    ;;
  *)
    echo "usage: $0 run|cli|test" >&2
    exit 2
    ;;
esac
