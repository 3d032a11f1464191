#!/usr/bin/env bash
#===- scripts/test-wheel.sh - pip install the package and test it --------===#
#
#   bash scripts/test-wheel.sh BUILD_DIR JUNIT_XML
#
# Installs norm_mlir with `pip install .` into a throwaway virtual
# environment, as the README says, and runs python/tests_wheel and the op
# and JIT suites of python/tests against that installation (no PYTHONPATH).
# To stay fast, pip builds in BUILD_DIR (the tree scripts/test.sh already
# built: only the extension is checked and installed) for the python3 that
# configured it, without build isolation (scikit-build-core and nanobind
# come from the system site, as the venv's numpy and ml_dtypes do).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
build_dir="$(cd "$1" && pwd)"
junit="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$(python3 -c 'import sys; print(sys.executable)')"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m venv --system-site-packages "$tmp/venv"
venv_py="$tmp/venv/bin/python"

# The install prefix the tree was configured with stays its default (pip
# installs the wheel's component with a prefix of its own).
prefix="$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build_dir/CMakeCache.txt")"
case "$prefix" in ""|/tmp/*) prefix=/usr/local ;; esac

cd "$root"
echo "+ pip install . (build-dir $build_dir)"
env -u PYTHONPATH "$venv_py" -m pip install --disable-pip-version-check \
  --no-build-isolation --no-deps \
  -C "build-dir=$build_dir" \
  -C "cmake.define.Python_EXECUTABLE=$py" \
  -C "cmake.define.Python3_EXECUTABLE=$py" \
  -C "cmake.define.CMAKE_INSTALL_PREFIX=$prefix" \
  . 2>&1 | tail -n 40

env -u PYTHONPATH "$venv_py" -m pytest -q -p no:cacheprovider \
  python/tests_wheel python/tests/test_ops.py python/tests/test_jit.py \
  "--junitxml=$junit"
