#!/usr/bin/env bash
#===- scripts/setup.sh - Install dependencies, configure and build -------===#
#
# Idempotent set-up for a fresh Debian 12 machine (run as root, or with sudo
# available, when something has to be installed):
#
#   bash scripts/setup.sh          # install what is missing, configure, build
#   source scripts/setup.sh        # install what is missing, define helpers
#
# Sourcing installs what is missing, cds to the repository root and defines
# `configure_and_build [ninja targets...]`; running it also builds.
#
# Environment:
#   NORM_BUILD_DIR      build directory, relative to the root (default: build)
#   NORM_CMAKE_ARGS     extra arguments for the CMake configure step
#   NORM_RECONFIGURE=1  re-run CMake even if <build>/build.ninja exists
#   NORM_JOBS           parallel build jobs (default: 2)
#   NORM_SKIP_INSTALL=1 do not check or install packages
#
# When sourced this file leaves the caller's shell options alone: every step
# runs in a subshell and checks its commands explicitly, so that it also
# stops at the first error when called as `step || ...` (where bash ignores
# `set -e`).
#
#===----------------------------------------------------------------------===#

NORM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NORM_LLVM_ROOT="${NORM_LLVM_ROOT:-/usr/lib/llvm-22}"
NORM_BUILD_DIR="${NORM_BUILD_DIR:-build}"
NORM_JOBS="${NORM_JOBS:-2}"
export NORM_ROOT NORM_LLVM_ROOT NORM_BUILD_DIR NORM_JOBS

# Debian packages the build, the tests and the benchmark need. python3 and
# python3-pip are handled separately: any python3 on PATH (e.g. pyenv) wins.
NORM_APT_PACKAGES=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  ninja-build cmake g++ libgtest-dev libbenchmark-dev libdnnl-dev
  libomp-22-dev mpich libmpich-dev
)
# Python modules (import name == pip name) for the bindings and pytest.
NORM_PIP_MODULES=(nanobind numpy ml_dtypes pytest scikit_build_core)

norm_log() { printf '==> %s\n' "$*"; }

# Runs a command as root: directly when we are root, else through sudo.
norm_as_root() (
  set -euo pipefail
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "error: '$*' needs root; run this script as root" >&2
    exit 1
  fi
)

# Installs the missing Debian packages; does nothing (not even
# `apt-get update`) when all of them are present.
norm_install_apt() (
  set -euo pipefail
  local missing=() pkg
  for pkg in "${NORM_APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if ! command -v python3 >/dev/null 2>&1; then
    missing+=(python3 python3-pip)
  elif ! python3 -m pip --version >/dev/null 2>&1; then
    missing+=(python3-pip)
  fi
  if [[ ${#missing[@]} -eq 0 ]]; then
    norm_log "apt: all packages present"
    return 0
  fi
  norm_log "apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  norm_as_root env DEBIAN_FRONTEND=noninteractive apt-get update || exit 1
  norm_as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}" || exit 1
)

# Installs the missing Python modules with pip into whichever python3 is on
# PATH (adding --break-system-packages for Debian's externally managed one).
norm_install_pip() (
  set -euo pipefail
  local missing=() mod
  for mod in "${NORM_PIP_MODULES[@]}"; do
    python3 -c "import $mod" >/dev/null 2>&1 || missing+=("$mod")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    norm_log "pip: all modules present ($(command -v python3))"
    return 0
  fi
  local flags=(--disable-pip-version-check)
  [[ "$(id -u)" -eq 0 ]] && flags+=(--root-user-action=ignore)
  if python3 - <<'PY'
import os, sys, sysconfig
sys.exit(0 if os.path.exists(
    os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)
PY
  then
    flags+=(--break-system-packages)
  fi
  norm_log "pip: installing ${missing[*]} for $(command -v python3)"
  python3 -m pip install "${flags[@]}" "${missing[@]}" || exit 1
)

# The set-up step: everything the build, the tests and the demo need.
norm_install_deps() {
  if [[ "${NORM_SKIP_INSTALL:-0}" == 1 ]]; then
    norm_log "skipping package checks (NORM_SKIP_INSTALL=1)"
    return 0
  fi
  norm_install_apt && norm_install_pip
}

# Configures <build> with CMake when it has no build.ninja yet (or when
# NORM_RECONFIGURE=1), then builds the given ninja targets (default: all).
configure_and_build() (
  set -euo pipefail
  cd "$NORM_ROOT" || exit 1
  local extra=()
  read -r -a extra <<<"${NORM_CMAKE_ARGS:-}"
  if [[ ! -f "$NORM_BUILD_DIR/build.ninja" || "${NORM_RECONFIGURE:-0}" == 1 ]]; then
    local cmd=(cmake -G Ninja -S . -B "$NORM_BUILD_DIR"
      -DCMAKE_BUILD_TYPE=Release
      "-DMLIR_DIR=$NORM_LLVM_ROOT/lib/cmake/mlir"
      "-DLLVM_EXTERNAL_LIT=$NORM_LLVM_ROOT/bin/lit")
    # Build the Python extension for the python3 that runs pytest.
    if command -v python3 >/dev/null 2>&1; then
      local py
      py="$(python3 -c 'import sys; print(sys.executable)')"
      cmd+=("-DPython_EXECUTABLE=$py" "-DPython3_EXECUTABLE=$py")
    fi
    cmd+=("${extra[@]}")
    norm_log "configure: ${cmd[*]}"
    "${cmd[@]}" || { echo "error: CMake configure failed" >&2; exit 1; }
  else
    norm_log "configure: $NORM_BUILD_DIR/build.ninja exists (NORM_RECONFIGURE=1 to redo)"
  fi
  norm_log "build: ninja -C $NORM_BUILD_DIR -j$NORM_JOBS $*"
  ninja -C "$NORM_BUILD_DIR" "-j$NORM_JOBS" "$@" ||
    { echo "error: build failed" >&2; exit 1; }
)

cd "$NORM_ROOT" || return 1 2>/dev/null || exit 1
norm_log "repository: $NORM_ROOT (build directory: $NORM_BUILD_DIR)"

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  # Executed: set up and build.
  set -euo pipefail
  norm_install_deps
  configure_and_build "$@"
else
  # Sourced: set up; the caller builds with configure_and_build.
  norm_install_deps
fi
