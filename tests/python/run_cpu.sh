#!/usr/bin/env bash
# The Python package in CI (no GPU): `pip install ./python` into a virtual environment in
# BUILD_DIR (meson-python builds the wheel: the install path users take), then the CPU tests
# against BUILD_DIR's libgshmem. torch is not installed (its wheel is gigabytes); the torch-only
# cases and test_gpu.py are skipped. Ends with pytest's summary line.
# usage: tests/python/run_cpu.sh BUILD_DIR
set -u
cd "$(dirname "$0")/../.."
B=$(cd "${1:?usage: tests/python/run_cpu.sh BUILD_DIR}" && pwd)
V=$B/pyenv
log=$B/pyenv-install.log
install() {
  { [ -x "$V/bin/python" ] || python3 -m venv "$V"; } &&
    "$V/bin/python" -m pip install -q pytest &&
    "$V/bin/python" -m pip install -q --force-reinstall --no-deps ./python
}
if ! install >"$log" 2>&1; then
  echo "python tests: could not install pytest and ./python into $V (network?):"
  tail -5 "$log"
  exit 1
fi
GSHMEMPY_LIB=$B/src/libgshmem.so timeout -k 5 300 "$V/bin/python" -m pytest -q \
  -p no:cacheprovider -m "not gpu" tests/python
